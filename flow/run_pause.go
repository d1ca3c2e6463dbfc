package flow

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gateflow/gateflow/auth"
	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/internal/decisions"
	"github.com/gateflow/gateflow/internal/protocol"
	"go.temporal.io/sdk/workflow"
)

// pausePart pauses one run on the Update gateflow.pause: while paused, the run finishes
// the steps in flight and starts no new one (every step waits in holdWhilePaused before
// it is dispatched), people's gates and inputs wait as usual and their deadlines keep
// running. The run's status is paused and it waits for "resume" meanwhile.
type pausePart struct {
	rt *runner
	// paused is the pause in force; nil while the run is not paused.
	paused *runs.PausedType
	// underlying is the status the run would have without the pause: what it goes back to
	// when resumed (a step that ends meanwhile, or a gate that opens, changes it).
	underlying runs.Status
}

// runPauseWait is what a paused run waits for: "resume".
var runPauseWait = runs.Wait{Kind: runs.ForResume}

// maxPauseReason bounds a pause's reason, so callers cannot grow the run's state at will.
const maxPauseReason = 500

// register installs the Update that pauses and resumes the run. Registering it adds no
// command, so runs recorded before it replay unchanged.
func (p *pausePart) register(wctx workflow.Context) error {
	if err := workflow.SetUpdateHandlerWithOptions(wctx, protocol.UpdatePause,
		func(ctx workflow.Context, r protocol.RunPause) (runs.Status, error) {
			verified, err := p.verify(ctx, r)
			if err != nil {
				return "", err
			}
			p.rt.control.auth.spend(ctx, verified)
			return p.apply(ctx, r), nil
		},
		workflow.UpdateHandlerOptions{
			Validator: func(ctx workflow.Context, r protocol.RunPause) error {
				if err := p.check(r); err != nil {
					return err
				}
				_, err := p.verify(ctx, r)
				return err
			},
			Description: "Pause the run {\"action\": \"pause\", \"by\": \"alice\", \"reason\": \"...\"}: it finishes the steps in flight " +
				"and starts no new one until {\"action\": \"resume\", \"by\": \"alice\"}. Returns the run's status.",
		}); err != nil {
		return fmt.Errorf("register update %s: %w", protocol.UpdatePause, err)
	}
	return nil
}

// verify checks a pause's proof against the run's pinned policy.
func (p *pausePart) verify(ctx workflow.Context, r protocol.RunPause) (*auth.Verified, error) {
	return p.rt.control.auth.check(ctx, r.Action+" by "+strings.TrimSpace(r.By), r.Proof, func(ns, run string) (auth.Decision, error) {
		return decisions.Pause(ns, run, r)
	})
}

// check is the Validator: it refuses what would change nothing or cannot be done, with the
// reason, and changes nothing itself (a refused Update leaves no trace).
func (p *pausePart) check(r protocol.RunPause) error {
	st := p.rt.state
	switch {
	case r.Action != protocol.ControlPause && r.Action != protocol.ControlResume:
		return fmt.Errorf("pause: action %q: want %q or %q", r.Action, protocol.ControlPause, protocol.ControlResume)
	case st.Status.Terminal():
		return fmt.Errorf("%s: the run has ended (%s)", r.Action, st.Status)
	case p.rt.setup.plan:
		return fmt.Errorf("%s: the run is a plan", r.Action)
	case r.Action == protocol.ControlPause && p.paused != nil:
		return fmt.Errorf("pause: the run is already paused (%s)", describePause(*p.paused))
	case r.Action == protocol.ControlResume && p.paused == nil:
		return fmt.Errorf("resume: the run is not paused")
	case utf8.RuneCountInString(r.Reason) > maxPauseReason:
		return fmt.Errorf("pause: the reason is longer than %d characters", maxPauseReason)
	}
	return checkDecider(r.Action, r.By) // limits.go
}

// apply pauses or resumes the run (the Validator accepted r) and returns its status.
func (p *pausePart) apply(ctx workflow.Context, r protocol.RunPause) runs.Status {
	rt := p.rt
	c := &Context{wctx: ctx, run: rt}
	if r.Action == protocol.ControlPause {
		p.underlying = rt.state.Status
		p.paused = &runs.PausedType{Workflow: rt.info.Name, By: r.By, Reason: strings.TrimSpace(r.Reason), Since: runNow(ctx)}
		pause := *p.paused
		rt.state.Paused = &pause
		rt.waits.open(runPauseWait)
		c.Logger().Info("run paused", "by", r.By, "reason", r.Reason)
		c.setStatus(runs.StatusPaused)
	} else {
		p.paused, rt.state.Paused = nil, nil
		rt.waits.close(runPauseWait)
		c.Logger().Info("run resumed", "by", r.By)
		c.setStatus(p.underlying)
	}
	rt.publish()
	return rt.state.Status
}

// statusFor is the status setStatus records for s: paused while the run is paused (s is
// kept as the status to go back to), s itself otherwise. A run that ends while paused is
// paused no more: it waits for nothing.
func (p *pausePart) statusFor(s runs.Status) runs.Status {
	if p == nil || p.paused == nil {
		return s
	}
	if s.Terminal() {
		p.paused, p.rt.state.Paused = nil, nil
		p.rt.waits.clear(runPauseWait)
		return s
	}
	if s != runs.StatusPaused {
		p.underlying = s
	}
	return runs.StatusPaused
}

// holdWhilePaused waits, before a step is started, while the run is paused; it returns an
// error only when the run is cancelled meanwhile. Cleanup steps (onError) are not held: a
// run cancelled or failed while paused still cleans up. A run that is not paused does not
// wait and records nothing, so histories replay unchanged.
func (c *Context) holdWhilePaused(onError bool) error {
	p := c.run.pause
	if p == nil || p.paused == nil || onError || c.run.setup.plan {
		return nil
	}
	c.Logger().Info("step held while the run is paused", "by", p.paused.By)
	return workflow.Await(c.wctx, func() bool { return p.paused == nil })
}

// describePause says who paused, since when and why: "by alice since 09:30:00 UTC: freeze".
func describePause(p runs.PausedType) string {
	s := "by " + orDefault(p.By, "someone") + " since " + p.Since.UTC().Format("2006-01-02 15:04:05 UTC")
	if p.Reason != "" {
		s += ": " + p.Reason
	}
	return s
}
