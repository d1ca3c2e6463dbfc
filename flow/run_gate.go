package flow

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/events"
	"github.com/gateflow/gateflow/gates"
	"github.com/gateflow/gateflow/internal/protocol"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// polledGate is an open (or decided) polled gate of a run, as the vote path sees it.
type polledGate struct {
	name string
	req  gates.Request
	// open is set while the poll loop runs.
	open bool
	// manual is a person's decision, set by a vote (AllowManual); the loop ends with it.
	manual *gates.Result
	// ended says how the gate ended, once it did (an outcome, failed or cancelled).
	ended string
}

func (g *polledGate) decided() bool { return g.manual != nil }

// polledFor is the polled gate a vote for name is about: an open polled gate, or a closed
// one when no approval gate has the name.
func (p *peoplePart) polledFor(name string) (*polledGate, bool) {
	g, ok := p.polled[name]
	if !ok || (!g.open && p.gates[name] != nil) {
		return nil, false
	}
	return g, true
}

// check is the vote Validator for a polled gate: only with AllowManual, only
// while the gate is open and undecided, and only approve or reject.
func (g *polledGate) check(v approval.Vote) error {
	if err := v.Validate(); err != nil {
		return err
	}
	refuse := func(code approval.Code, reason string) error {
		return &approval.VoteError{Gate: g.name, By: strings.TrimSpace(v.By), Code: code, Reason: reason}
	}
	kind, _ := approval.ParseVoteKind(string(v.Kind))
	switch {
	case !g.req.AllowManual:
		return refuse(approval.CodeNotAllowed, fmt.Sprintf("this is a polled gate (type %s) that its resolver decides; "+
			"it does not allow a manual decision (the handler did not set AllowManual)", g.req.Type))
	case g.manual != nil:
		return refuse(approval.CodeClosed, fmt.Sprintf("the gate was already %s by %s", g.manual.Outcome, g.manual.By))
	case !g.open:
		return refuse(approval.CodeClosed, fmt.Sprintf("the gate has closed (%s)", g.ended))
	case kind == approval.RequestChanges:
		return refuse(approval.CodeUnknownKind, "a polled gate is approved or rejected; request_changes does not apply")
	case v.HasArguments():
		return refuse(approval.CodeBadArguments, "a polled gate is not a tool call's; a vote on it carries no arguments")
	}
	return nil
}

// decidePolled records a checked vote as the gate's manual decision; the poll loop wakes
// and ends with it.
func (p *peoplePart) decidePolled(ctx workflow.Context, g *polledGate, v approval.Vote) (approval.VoteResult, error) {
	if err := g.check(v); err != nil {
		return approval.VoteResult{}, err
	}
	kind, _ := approval.ParseVoteKind(string(v.Kind))
	v.Kind, v.By, v.Comment, v.At = kind, strings.TrimSpace(v.By), strings.TrimSpace(v.Comment), runNow(ctx)
	res := &gates.Result{Outcome: gates.OutcomeApproved, By: v.By, Manual: true, Comment: v.Comment, DecidedAt: v.At}
	outcome := approval.Approved
	if kind == approval.Reject {
		res.Outcome, res.Comment, res.Reason, outcome = gates.OutcomeRejected, "", v.Comment, approval.Rejected
	}
	g.manual = res
	p.rt.publish()
	return approval.VoteResult{Gate: g.name, Status: approval.VoteStatus(outcome), Approvals: 1, Required: 1,
		Decision: &approval.Decision{Outcome: outcome, Votes: []approval.Vote{v}, DecidedAt: v.At, By: v.By, Comment: v.Comment}}, nil
}

// openPolled registers g for votes and applies the votes that arrived for it before the
// run reached it: the first that may count decides (AllowManual); the others are recorded
// as refused.
func (p *peoplePart) openPolled(ctx workflow.Context, g *polledGate) {
	if p.polled == nil {
		p.polled = map[string]*polledGate{}
	}
	p.polled[g.name] = g
	for _, v := range p.inbox.Take(g.name) {
		if _, err := p.decidePolled(ctx, g, v); err != nil {
			p.refuse(ctx, runs.RefusedVote, g.name, v.By, err)
		}
	}
	p.showKeptVotes()
}

// hasGateType reports whether the worker has a resolver of type t.
func (rt *runner) hasGateType(t string) bool { return slices.Contains(rt.setup.gateTypes, t) }

// runGate is ctx.Gate (gate.go).
func (c *Context) runGate(name string, req gates.Request) (gates.Result, error) {
	if err := c.holdWhilePaused(false); err != nil { // run_pause.go: no new step while paused
		return gates.Result{}, &StepError{Step: name, Kind: runs.KindGate, Err: err}
	}
	rt := c.run
	s := c.begin(name, runs.KindGate)
	rec := &runs.Gate{Type: strings.TrimSpace(req.Type), AllowManual: req.AllowManual}
	s.rec().Gate = rec
	req, err := c.checkGate(s, req)
	if err != nil {
		return gates.Result{}, s.fail(s.began, runs.StepFailed, err)
	}
	if s.planned(planGate(req)) {
		return gates.Result{Outcome: gates.OutcomeApproved, By: "plan", DecidedAt: s.began}, nil
	}
	var deadline time.Time
	if req.Timeout > 0 {
		deadline = s.began.Add(req.Timeout)
		rec.Deadline = &deadline
	}
	g := &polledGate{name: name, req: req, open: true}
	rt.people.openPolled(c.wctx, g)
	wait := runs.Wait{Kind: runs.ForGate, Name: name, Key: req.Type}
	c.wait(wait)
	rt.emit(c.wctx, events.StepStarted, name, string(runs.StepRunning), "", map[string]any{"kind": runs.KindGate, "type": req.Type,
		"poll_interval": req.PollInterval.String(), "allow_manual": req.AllowManual})

	res, timedOut, err := c.pollGate(s.i, g, deadline)
	c.unwait(wait)
	g.open = false
	if err != nil {
		return c.gateFailed(s, g, err)
	}
	return c.endGate(s, g, res, timedOut, deadline)
}

// checkGate checks the gate step s's request and runs its guards; it returns the request
// with its defaults.
func (c *Context) checkGate(s *step, req gates.Request) (gates.Request, error) {
	rt, name := c.run, s.name
	invalid := func(format string, args ...any) (gates.Request, error) {
		msg := fmt.Sprintf(format, args...)
		return req, newTypedError(msg, ErrorInvalidStep, errors.New(msg))
	}
	if strings.TrimSpace(name) == "" {
		return invalid("gate: the step name is empty")
	}
	req, err := req.Normalize()
	if err != nil {
		return invalid("gate %s: %v", name, err)
	}
	if !rt.hasGateType(req.Type) {
		known := "none"
		if len(rt.setup.gateTypes) > 0 {
			known = strings.Join(rt.setup.gateTypes, ", ")
		}
		return invalid("gate %s: no gate resolver of type %q on this worker (registered: %s)", name, req.Type, known)
	}
	rec := s.rec().Gate
	rec.PollInterval, rec.OnTimeout = req.PollInterval, req.OnTimeout
	if err := s.checkWallTime(); err != nil {
		return req, err
	}
	return req, c.countStep(name) // run_limits.go: the MaxSteps guard
}

// gateFailed ends the gate step s whose gate g could not be polled (err).
func (c *Context) gateFailed(s *step, g *polledGate, err error) (gates.Result, error) {
	rec, end := s.rec().Gate, s.now()
	status := runs.StepFailed
	if isCancellation(err) {
		status = runs.StepCancelled
	}
	g.ended = string(status)
	s.close(end, status, 0, errorMessage(err), "", nil)
	c.stepMetric(runs.KindGate, status, s.rec().Duration(end))
	c.run.emit(c.wctx, events.StepFailed, s.name, string(status), errorMessage(err), map[string]any{"kind": runs.KindGate, "polls": rec.Polls})
	c.run.publish()
	return gates.Result{Polls: rec.Polls, Message: rec.Message}, s.err(err)
}

// endGate ends the gate step s with the result res of its gate g (timedOut: its deadline
// or MaxPolls passed first).
func (c *Context) endGate(s *step, g *polledGate, res gates.Result, timedOut bool, deadline time.Time) (gates.Result, error) {
	rec, end, req, name := s.rec().Gate, s.now(), g.req, s.name
	if timedOut {
		res = timeoutResult(req, res)
	}
	g.ended = string(res.Outcome)
	res.Polls, res.DecidedAt = rec.Polls, end
	if res.Message == "" {
		res.Message = rec.Message
	}
	rec.Decision, rec.By, rec.Manual, rec.Comment, rec.Reason, rec.DecidedAt = res.Outcome, res.By, res.Manual, res.Comment, res.Reason, &end
	var gerr error
	status := runs.StepCompleted
	switch {
	case res.Outcome == gates.OutcomeRejected:
		gerr = &gates.RejectedError{Gate: name, Result: res}
		status = runs.StepFailed
	case res.Outcome == gates.OutcomeTimedOut && req.OnTimeout == gates.FailOnTimeout:
		timeout := req.Timeout
		if deadline.IsZero() {
			timeout = 0
		}
		gerr = &gates.TimedOutError{Gate: name, Timeout: timeout, Result: res}
	}
	if timedOut && gerr != nil {
		status = runs.StepTimedOut
	}
	s.close(end, status, 0, errString(gerr), res.Describe(), nil)
	c.stepMetric(runs.KindGate, status, s.rec().Duration(end))
	evt := events.StepCompleted
	if gerr != nil {
		evt = events.StepFailed
	}
	c.run.emit(c.wctx, evt, name, string(status), res.Describe(), map[string]any{"kind": runs.KindGate, "type": req.Type,
		"polls": res.Polls, "decision": res.Outcome, "by": res.By, "manual": res.Manual})
	c.run.publish()
	return res, gerr
}

// pollGate polls until a poll or a person decides the gate, or its deadline (or MaxPolls)
// passes (timedOut). Its error is why the gate could not be polled: the run's
// cancellation, a request the resolver refuses, or too many failed polls.
func (c *Context) pollGate(i int, g *polledGate, deadline time.Time) (res gates.Result, timedOut bool, err error) {
	st := c.run.state
	rec := st.Steps[i].Gate
	failed := 0
	for {
		if g.decided() {
			return *g.manual, false, nil
		}
		if now := runNow(c.wctx); (!deadline.IsZero() && !now.Before(deadline)) || rec.Polls >= gates.MaxPolls {
			return gates.Result{}, true, nil
		}
		rec.Polls++
		poll, perr := c.pollOnce(i, g, rec.Polls)
		if g.decided() {
			return *g.manual, false, nil
		}
		switch {
		case perr != nil && (isCancellation(perr) || ErrorInvalidStep.Is(perr)):
			return gates.Result{}, false, perr
		case perr != nil:
			failed++
			rec.FailedPolls = failed
			rec.Message = fmt.Sprintf("poll %d failed: %s", rec.Polls, errorMessage(perr))
			if failed >= gates.MaxFailedPolls {
				return gates.Result{}, false, fmt.Errorf("gate %s: %d polls in a row failed; the last: %s", g.name, failed, errorMessage(perr))
			}
		case poll.State == gates.StateApproved:
			return gates.Result{Outcome: gates.OutcomeApproved, By: g.req.Type, Comment: poll.Comment}, false, nil
		case poll.State == gates.StateRejected:
			return gates.Result{Outcome: gates.OutcomeRejected, By: g.req.Type, Reason: poll.Reason}, false, nil
		default:
			failed, rec.FailedPolls, rec.Message = 0, 0, poll.Message
		}
		d := g.req.PollInterval
		if !deadline.IsZero() {
			d = min(d, deadline.Sub(runNow(c.wctx)))
		}
		st.Steps[i].Output = fmt.Sprintf("%s gate: poll %d pending", g.req.Type, rec.Polls)
		if rec.Message != "" {
			st.Steps[i].Output += ": " + rec.Message
		}
		c.run.publish()
		if d <= 0 {
			continue
		}
		if _, err := c.await(d, fmt.Sprintf("gate %s: poll %d in %s", g.name, rec.Polls+1, d), g.decided); err != nil {
			return gates.Result{}, false, err
		}
	}
}

// pollOnce runs poll n of the gate as the activity gateflow.gate.poll. A person's decision
// during the poll cancels it (the result is then the zero Poll).
func (c *Context) pollOnce(i int, g *polledGate, n int) (gates.Poll, error) {
	st := c.run.state
	actx, cancel := workflow.WithCancel(c.wctx)
	defer cancel()
	ao := workflow.ActivityOptions{
		ActivityID:          fmt.Sprintf("%s#poll-%d", st.Steps[i].ActivityID, n),
		Summary:             fmt.Sprintf("%s (gate %s, poll %d)", g.name, g.req.Type, n),
		StartToCloseTimeout: g.req.PollTimeout,
		HeartbeatTimeout:    min(g.req.PollTimeout, gatePollHeartbeat),
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: 3,
			NonRetryableErrorTypes: []string{string(ErrorInvalidStep)}},
	}
	raw, _ := g.req.Params.(json.RawMessage) // Normalize made it a JSON object or null
	fut := workflow.ExecuteActivity(workflow.WithActivityOptions(actx, ao), protocol.GatePollActivity,
		gates.Params{Type: g.req.Type, Gate: g.name, RunID: c.RunID(), Poll: n, Params: raw})
	if err := workflow.Await(c.wctx, func() bool { return fut.IsReady() || g.decided() }); err != nil {
		return gates.Poll{}, err
	}
	if !fut.IsReady() {
		return gates.Poll{}, nil // decided by a person meanwhile; cancel stops the poll
	}
	var poll gates.Poll
	if err := fut.Get(c.wctx, &poll); err != nil {
		return gates.Poll{}, err
	}
	return poll, nil
}

// gatePollHeartbeat is the heartbeat timeout of a poll: the worker heartbeats while the
// resolver runs, so a poll on a worker that died is retried soon.
const gatePollHeartbeat = 30 * time.Second

// timeoutResult is the result of a gate whose deadline passed, by its OnTimeout.
func timeoutResult(req gates.Request, last gates.Result) gates.Result {
	reason := fmt.Sprintf("no decision within %s", req.Timeout)
	if req.Timeout == 0 {
		reason = fmt.Sprintf("no decision after %d polls, the most a gate makes", gates.MaxPolls)
	}
	res := gates.Result{Outcome: gates.OutcomeTimedOut, By: gates.TimeoutActor, Message: last.Message}
	switch req.OnTimeout {
	case gates.ApproveOnTimeout:
		res.Outcome, res.Comment = gates.OutcomeApproved, reason
	case gates.RejectOnTimeout:
		res.Outcome, res.Reason = gates.OutcomeRejected, reason
	}
	return res
}

// planGate says what a planned gate would do.
func planGate(req gates.Request) string {
	s := fmt.Sprintf("gate %s, poll every %s", req.Type, req.PollInterval)
	if req.Timeout > 0 {
		s += fmt.Sprintf(", timeout %s (then %s)", req.Timeout, req.OnTimeout)
	}
	if req.AllowManual {
		s += ", may be decided by hand"
	}
	return s + " (assumed approved)"
}
