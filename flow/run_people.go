package flow

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gateflow/gateflow/auth"
	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/internal/decisions"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/signals"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// peoplePart is a run's state for the people in the loop: its approval gates and the
// votes kept for gates not reached yet, its open input requests, the signals it buffered,
// and what it waits for now.
type peoplePart struct {
	rt       *runner
	dir      approval.Directory
	gates    map[string]*approval.Gate
	gateDirs map[string]approval.StaticDirectory
	inbox    approval.Inbox
	inputs   map[string]*inputWait
	// gateAttempt is the run attempt each gate was opened in.
	gateAttempt map[string]int
	// failRun is set when a gate's deadline closed it with OnTimeout fail.
	failRun error
	// signals are the signals that arrived and were not taken yet.
	signals *signals.Buffer
	// polled are the run's polled gates (ctx.Gate), by name, for manual votes (run_gate.go).
	polled map[string]*polledGate
	// edits check approvers' edited arguments at tool calls' gates, by gate (agent_approve.go).
	edits map[string]func(json.RawMessage) error
}

func newPeoplePart(rt *runner, dir approval.Directory) *peoplePart {
	return &peoplePart{rt: rt, dir: dir, gates: map[string]*approval.Gate{}, gateDirs: map[string]approval.StaticDirectory{},
		inputs: map[string]*inputWait{}, gateAttempt: map[string]int{}, signals: signals.NewBuffer(0, 0)}
}

// register installs the handlers for votes, answers and signals. They are in place
// from the run's first workflow task, so votes sent right after the start are kept.
func (p *peoplePart) register(wctx workflow.Context) error {
	if err := workflow.SetUpdateHandlerWithOptions(wctx, protocol.UpdateApproval,
		func(ctx workflow.Context, v approval.Vote) (approval.VoteResult, error) { return p.applyVote(ctx, v) },
		workflow.UpdateHandlerOptions{
			Validator:   func(ctx workflow.Context, v approval.Vote) error { return p.checkVote(ctx, v) },
			Description: descApproval,
		}); err != nil {
		return fmt.Errorf("register update %s: %w", protocol.UpdateApproval, err)
	}
	// The first channel of the run's listener (run_signals.go): its coroutine is created here.
	listen(p.rt.control.listener, workflow.GetSignalChannelWithOptions(wctx, protocol.SignalApproval, workflow.SignalChannelOptions{Description: descApprovalSignal}), p.voteSignal)
	if err := p.registerInputs(wctx); err != nil {
		return err
	}
	return p.registerSignals(wctx)
}

// voteSignal takes a vote sent as a Signal: checked and applied like the Update's, a vote
// that cannot count is recorded as refused.
func (p *peoplePart) voteSignal(ctx workflow.Context, v approval.Vote) {
	if p.rt.control.auth.signalsRefused() {
		p.refuse(ctx, runs.RefusedVote, v.Gate, v.By, fmt.Errorf("votes sent as Signals are refused: this run accepts signed decisions only, sent as the Update %s (flowctl approve --signing-key)", protocol.UpdateApproval))
		return
	}
	if err := p.checkVote(ctx, v); err != nil {
		p.refuse(ctx, runs.RefusedVote, v.Gate, v.By, err)
		return
	}
	if _, err := p.applyVote(ctx, v); err != nil {
		p.refuse(ctx, runs.RefusedVote, v.Gate, v.By, err)
	}
}

// maxRefused bounds the refusals a run keeps (the newest), so senders cannot grow its
// state without limit.
const maxRefused = 100

func (p *peoplePart) refuse(ctx workflow.Context, kind runs.RefusalKind, name, by string, err error) {
	rt := p.rt
	rt.state.Refused = append(rt.state.Refused, refusedMessage(kind, name, by, err, runNow(ctx)))
	if over := len(rt.state.Refused) - maxRefused; over > 0 {
		rt.state.Refused = append([]runs.RefusedMessage(nil), rt.state.Refused[over:]...)
	}
	rt.publish()
}

// checkVote is the vote Validator: votes for an open or closed gate are checked against
// its rules; votes for a gate the run has not reached yet need only be well formed (they
// are checked against the gate's rules when it opens).
func (p *peoplePart) checkVote(ctx workflow.Context, v approval.Vote) error {
	rt := p.rt
	if _, err := p.verifyVote(ctx, v); err != nil {
		return err
	}
	v.Gate = strings.TrimSpace(v.Gate)
	if pg, ok := p.polledFor(v.Gate); ok {
		return pg.check(v)
	}
	if g, ok := p.gates[v.Gate]; ok {
		if err := g.Check(v, p.gateDirs[v.Gate]); err != nil {
			return err
		}
		return p.checkEdits(g, v) // agent_approve.go
	}
	if err := v.Validate(); err != nil {
		return err
	}
	if rt.state.Status.Terminal() {
		return fmt.Errorf("approval %s: the run has ended", v.Gate)
	}
	return nil
}

// applyVote counts a checked vote, or keeps it until its gate opens.
func (p *peoplePart) applyVote(ctx workflow.Context, v approval.Vote) (_ approval.VoteResult, err error) {
	rt := p.rt
	verified, verr := p.verifyVote(ctx, v)
	if verr != nil {
		return approval.VoteResult{}, verr
	}
	v.Verified, v.Proof = verified, "" // the Update in history keeps the proof
	defer func() {
		if err == nil {
			rt.control.auth.spend(ctx, verified)
		}
	}()
	v.At = runNow(ctx)
	v.Gate = strings.TrimSpace(v.Gate)
	if pg, ok := p.polledFor(v.Gate); ok {
		return p.decidePolled(ctx, pg, v)
	}
	g, ok := p.gates[v.Gate]
	if !ok {
		if err := p.inbox.Add(v); err != nil {
			return approval.VoteResult{}, err
		}
		p.showKeptVotes()
		rt.publish()
		return approval.VoteResult{Gate: v.Gate, Status: approval.VoteQueued}, nil
	}
	dup := g.IsDuplicate(v)
	d, err := g.Apply(v, p.gateDirs[v.Gate])
	if err != nil {
		return approval.VoteResult{}, err
	}
	rt.publish()
	res := approval.VoteResult{Gate: g.Name, Status: approval.VoteOpen, Approvals: len(g.Approvals()), Required: g.Request.Required, Decision: d}
	switch {
	case d != nil:
		res.Status = approval.VoteStatus(d.Outcome)
	case dup:
		res.Status = approval.VoteDuplicate
	}
	return res, nil
}

// verifyVote checks the vote's proof against the run's pinned policy. A Verified the
// sender put in the vote counts for nothing: only the run stamps it.
func (p *peoplePart) verifyVote(ctx workflow.Context, v approval.Vote) (*auth.Verified, error) {
	what := fmt.Sprintf("vote on %s by %s", strings.TrimSpace(v.Gate), strings.TrimSpace(v.By))
	return p.rt.control.auth.check(ctx, what, v.Proof, func(ns, run string) (auth.Decision, error) { return decisions.Vote(ns, run, v) })
}

// verifyAnswer checks an answer's proof against the run's pinned policy.
func (p *peoplePart) verifyAnswer(ctx workflow.Context, a protocol.InputAnswer) (*auth.Verified, error) {
	what := fmt.Sprintf("input %s by %s", a.Name, strings.TrimSpace(a.By))
	return p.rt.control.auth.check(ctx, what, a.Proof, func(ns, run string) (auth.Decision, error) { return decisions.Answer(ns, run, a) })
}

// inputWait is an open input request of a run.
type inputWait struct {
	input   *signals.Input
	members approval.StaticDirectory
	// decode checks that an answer decodes into the handler's type.
	decode func(json.RawMessage) error
}

func (w *inputWait) isMember(group, user string) bool {
	for _, m := range w.members[group] {
		if m == user {
			return true
		}
	}
	return false
}

func (p *peoplePart) registerInputs(wctx workflow.Context) error {
	rt := p.rt
	return workflow.SetUpdateHandlerWithOptions(wctx, protocol.UpdateInput,
		func(ctx workflow.Context, a protocol.InputAnswer) (signals.InputAnswer, error) {
			verified, err := p.verifyAnswer(ctx, a)
			if err != nil {
				return signals.InputAnswer{}, err
			}
			w := p.inputs[a.Name]
			ans, err := w.input.Accept(strings.TrimSpace(a.By), a.Data, runNow(ctx), w.isMember)
			if err == nil {
				ans.Verified = verified
				w.input.Answer.Verified = verified
				rt.control.auth.spend(ctx, verified)
			}
			rt.publish()
			return ans, err
		},
		workflow.UpdateHandlerOptions{
			Validator: func(ctx workflow.Context, a protocol.InputAnswer) error {
				w, ok := p.inputs[a.Name]
				if !ok {
					return fmt.Errorf("input %q: the run is not waiting for this input", a.Name)
				}
				if err := w.input.CheckSize(a.Data); err != nil { // limits.go: before costlier checks
					return err
				}
				if _, err := p.verifyAnswer(ctx, a); err != nil {
					return err
				}
				if err := w.input.Check(strings.TrimSpace(a.By), a.Data, runNow(ctx), w.isMember); err != nil {
					return err
				}
				if err := w.decode(a.Data); err != nil {
					return &signals.AnswerError{Code: signals.CodeSchema, Name: a.Name, By: a.By, Errors: []string{err.Error()}, Err: err}
				}
				return nil
			},
			Description: descInput,
		})
}

func (p *peoplePart) registerSignals(wctx workflow.Context) error {
	rt := p.rt
	listen(rt.control.listener, workflow.GetSignalChannelWithOptions(wctx, protocol.SignalName, workflow.SignalChannelOptions{Description: descSignal}), func(ctx workflow.Context, e signals.Envelope) {
		if err := e.Validate(); err != nil {
			p.refuse(ctx, runs.RefusedSignal, e.Name, e.Sender, err)
			return
		}
		if e.SentAt.IsZero() {
			e.SentAt = runNow(ctx)
		}
		p.signals.Add(e)
		rt.publish()
	})
	return nil
}

// mailbox runs the (un)subscribe activity for this run.
func (c *Context) mailbox(op, name, key string, since time.Time) error {
	actx := workflow.WithActivityOptions(c.wctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		Summary:             fmt.Sprintf("%s %s/%s", op, name, key),
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5},
	})
	req := protocol.MailboxRequest{Name: name, Key: key, WorkflowID: c.RunID(), Since: since}
	return workflow.ExecuteActivity(actx, op, req).Get(actx, nil)
}

// groupSnapshot is what a gate records of its groups: their members, and why some could
// not be resolved.
type groupSnapshot struct {
	Dir approval.StaticDirectory `json:"dir"`
	Err string                   `json:"err,omitempty"`
}

// snapshotGroups reads the members of the groups among who once, records them in history
// and returns them, for the gate what. A group that cannot be resolved is a problem of
// the run (logged, in runs.State.Problems); when it leaves nobody who could decide, the
// gate fails with the reason instead of waiting for a vote that cannot come.
func (c *Context) snapshotGroups(what string, who []string) (approval.StaticDirectory, error) {
	dir := c.run.people.dir
	req := approval.Request{Approvers: who}
	if workflow.GetVersion(c.wctx, "gateflow.group-errors", workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		// Runs recorded before group errors were kept: the snapshot alone.
		var snap approval.StaticDirectory
		if err := workflow.SideEffect(c.wctx, func(workflow.Context) any {
			s, _ := approval.Snapshot(dir, req)
			return s
		}).Get(&snap); err != nil {
			return nil, fmt.Errorf("%s: record group members: %w", what, err)
		}
		return snap, nil
	}
	var res groupSnapshot
	if err := workflow.SideEffect(c.wctx, func(workflow.Context) any {
		s, err := approval.Snapshot(dir, req)
		r := groupSnapshot{Dir: s}
		if err != nil {
			r.Err = err.Error()
		}
		return r
	}).Get(&res); err != nil {
		return nil, fmt.Errorf("%s: record group members: %w", what, err)
	}
	if res.Err == "" {
		return res.Dir, nil
	}
	if !canDecide(who, res.Dir) {
		return res.Dir, fmt.Errorf("%s: nobody can decide: %s", what, res.Err)
	}
	c.Logger().Warn("a group of the gate cannot be resolved", "gate", what, "error", res.Err)
	c.run.state.Problems = append(c.run.state.Problems, what+": "+res.Err)
	return res.Dir, nil
}

// canDecide reports whether anyone may decide among who, once groups are resolved to dir:
// everyone may when who is empty.
func canDecide(who []string, dir approval.StaticDirectory) bool {
	if len(who) == 0 {
		return true
	}
	for _, w := range who {
		group, isGroup := strings.CutPrefix(strings.TrimSpace(w), approval.GroupPrefix)
		if !isGroup || len(dir[group]) > 0 {
			return true
		}
	}
	return false
}

// approvedBefore is the gate name when an earlier attempt of the run approved it: a
// retried run does not ask people again.
func (p *peoplePart) approvedBefore(name string) (*approval.Gate, bool) {
	prev, ok := p.gates[name]
	if ok && prev.Closed() && prev.Decision.Outcome == approval.Approved && p.gateAttempt[name] < p.rt.state.Attempt {
		return prev, true
	}
	return nil, false
}

// openGate keeps the approval gate g, opened in the run's current attempt with the
// approvers snap, shows it in the run's state and applies the votes sent before it opened.
func (p *peoplePart) openGate(g *approval.Gate, snap approval.StaticDirectory) {
	st := p.rt.state
	p.gates[g.Name] = g
	p.gateDirs[g.Name] = snap
	p.gateAttempt[g.Name] = st.Attempt
	st.Gates = append(st.Gates, g)
	g.ApplyEarly(p.earlyEdits(g, p.inbox.Take(g.Name)), snap)
	p.showKeptVotes()
}

// failRunWith makes the run fail with err, the error of a gate whose decision fails the
// run (OnTimeout fail).
func (p *peoplePart) failRunWith(err error) { p.failRun = err }

// openSignalWait shows the signal wait w in the run's state.
func (p *peoplePart) openSignalWait(w *signals.Wait) {
	p.rt.state.SignalWaits = append(p.rt.state.SignalWaits, w)
}

// openInput keeps the input request w open, shows it in the run's state, and returns
// the function that closes it.
func (p *peoplePart) openInput(w *inputWait) (closeInput func()) {
	name := w.input.Name
	p.inputs[name] = w
	p.rt.state.Inputs = append(p.rt.state.Inputs, w.input)
	return func() { delete(p.inputs, name) }
}

// showKeptVotes puts the votes waiting for their gates in the run's state, so people see
// them (flowctl show, -o json) before the gates open.
func (p *peoplePart) showKeptVotes() {
	var kept []approval.Vote
	gates := p.inbox.Gates()
	slices.Sort(gates)
	for _, g := range gates {
		kept = append(kept, p.inbox.Waiting(g)...)
	}
	p.rt.state.KeptVotes = kept
}
