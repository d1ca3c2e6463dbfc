package flow

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/internal/searchattr"
)

// Names of the messages people send to runs.
const (
	// UpdateApproval is the Update that carries a vote (approval.Vote); its Validator
	// refuses votes that may not count, and a refused vote leaves no trace in history.
	UpdateApproval = "gateflow.approval"
	// SignalApproval carries the same vote as a Signal, for tools that can only signal
	// (the Temporal CLI, the Web UI's signal button). Refused signal votes are kept in the
	// run state with the reason.
	SignalApproval = "gateflow.approval"
)

// Step kinds of people steps.
const (
	KindApproval StepKind = "approval"
	KindInput    StepKind = "input"
	KindSignal   StepKind = "signal"
)

// VoteResult is what a vote sent as an Update returns.
type VoteResult struct {
	Gate string `json:"gate"`
	// Status is "queued" (the run has not reached the gate yet), "open" (counted; more
	// approvals needed), "duplicate" (this person had already approved) or the gate's
	// outcome when this vote closed it.
	Status    string             `json:"status"`
	Approvals int                `json:"approvals"`
	Required  int                `json:"required"`
	Decision  *approval.Decision `json:"decision,omitempty"`
}

// RefusedMessage is a vote, answer or signal a run refused after it arrived as a Signal
// (Updates are refused before they reach the run and leave no trace).
type RefusedMessage struct {
	Kind   string    `json:"kind"` // "vote", "signal"
	Name   string    `json:"name"`
	By     string    `json:"by,omitempty"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// people is a run's state for the people in the loop.
type people struct {
	dir      approval.Directory
	gates    map[string]*approval.Gate
	gateDirs map[string]approval.StaticDirectory
	inbox    approval.Inbox
	waiting  map[string]bool
	inputs   map[string]*inputWait
	// gateAttempt is the run attempt each gate was opened in.
	gateAttempt map[string]int
	// failRun is set when a gate's deadline closed it with OnTimeout fail.
	failRun error
}

// registerPeople installs the handlers for votes, answers and signals. They are in place
// from the run's first workflow task, so votes sent right after the start are kept.
func (rt *runner) registerPeople(wctx workflow.Context) error {
	if err := workflow.SetUpdateHandlerWithOptions(wctx, UpdateApproval,
		func(ctx workflow.Context, v approval.Vote) (VoteResult, error) { return rt.applyVote(ctx, v) },
		workflow.UpdateHandlerOptions{
			Validator:   func(ctx workflow.Context, v approval.Vote) error { return rt.checkVote(ctx, v) },
			Description: "Vote on an approval gate: {gate, vote: approve|reject|request_changes, by, comment}",
		}); err != nil {
		return fmt.Errorf("register update %s: %w", UpdateApproval, err)
	}
	ch := workflow.GetSignalChannel(wctx, SignalApproval)
	workflow.Go(wctx, func(gctx workflow.Context) {
		for {
			var v approval.Vote
			ch.Receive(gctx, &v)
			if err := rt.checkVote(gctx, v); err != nil {
				rt.refuse(gctx, "vote", v.Gate, v.By, err)
				continue
			}
			if _, err := rt.applyVote(gctx, v); err != nil {
				rt.refuse(gctx, "vote", v.Gate, v.By, err)
			}
		}
	})
	if err := rt.registerInputs(wctx); err != nil {
		return err
	}
	return rt.registerSignals(wctx)
}

// maxRefused bounds the refusals a run keeps (the newest), so senders cannot grow its
// state without limit.
const maxRefused = 100

func (rt *runner) refuse(ctx workflow.Context, kind, name, by string, err error) {
	rt.state.Refused = append(rt.state.Refused, RefusedMessage{Kind: kind, Name: name, By: by, Reason: err.Error(), At: workflow.Now(ctx)})
	if over := len(rt.state.Refused) - maxRefused; over > 0 {
		rt.state.Refused = append([]RefusedMessage(nil), rt.state.Refused[over:]...)
	}
	rt.publish()
}

// checkVote is the vote Validator: votes for an open or closed gate are checked against
// its rules; votes for a gate the run has not reached yet need only be well formed (they
// are checked against the gate's rules when it opens).
func (rt *runner) checkVote(ctx workflow.Context, v approval.Vote) error {
	v.Gate = strings.TrimSpace(v.Gate)
	if g, ok := rt.people.gates[v.Gate]; ok {
		return g.Check(v, rt.people.gateDirs[v.Gate])
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
func (rt *runner) applyVote(ctx workflow.Context, v approval.Vote) (VoteResult, error) {
	v.At = workflow.Now(ctx)
	v.Gate = strings.TrimSpace(v.Gate)
	g, ok := rt.people.gates[v.Gate]
	if !ok {
		if err := rt.people.inbox.Add(v); err != nil {
			return VoteResult{}, err
		}
		rt.publish()
		return VoteResult{Gate: v.Gate, Status: "queued"}, nil
	}
	dup := g.IsDuplicate(v)
	d, err := g.Apply(v, rt.people.gateDirs[v.Gate])
	if err != nil {
		return VoteResult{}, err
	}
	rt.publish()
	res := VoteResult{Gate: g.Name, Status: "open", Approvals: len(g.Approvals()), Required: g.Request.Required, Decision: d}
	switch {
	case d != nil:
		res.Status = string(d.Outcome)
	case dup:
		res.Status = "duplicate"
	}
	return res, nil
}

// Approval opens the gate name and waits until people decide or its deadline passes. It
// returns the decision; the error is nil when the gate was approved, an
// *approval.RejectedError, *approval.ChangesRequestedError or *approval.TimedOutError
// otherwise. A rejection the handler returns ends the run as rejected. Votes sent before
// the run reached the gate are applied when it opens, against its rules.
func (c *Context) Approval(name string, req approval.Request) (approval.Decision, error) {
	rt := c.run
	st := rt.state
	now := workflow.Now(c.wctx)
	i := st.beginStep(name, KindApproval, now)
	// An approval is carried by the run, not by the attempt: a retried run does not ask
	// people again for a gate they approved.
	if prev, ok := rt.people.gates[name]; ok && prev.Closed() && prev.Decision.Outcome == approval.Approved &&
		rt.people.gateAttempt[name] < st.Attempt {
		st.endStep(i, now, StepCompleted, 0, "", describeDecision(*prev.Decision)+" (in an earlier attempt)", nil)
		rt.publish()
		return *prev.Decision, nil
	}
	if rt.plan {
		d := approval.Decision{Outcome: approval.Approved, DecidedAt: now, By: "plan"}
		st.endStep(i, now, StepPlanned, 0, "", fmt.Sprintf("approval by %s (assumed granted)", strings.Join(req.Approvers, ", ")), nil)
		rt.publish()
		return d, nil
	}
	g, err := approval.Open(name, req, now)
	if err != nil {
		st.endStep(i, now, StepFailed, 0, err.Error(), "", nil)
		rt.publish()
		return approval.Decision{}, &StepError{Step: name, Kind: KindApproval, Err: err}
	}
	// Group membership is read once, recorded in history, and used for this gate.
	var snap approval.StaticDirectory
	dir := rt.people.dir
	_ = workflow.SideEffect(c.wctx, func(workflow.Context) any {
		s, _ := approval.Snapshot(dir, g.Request)
		return s
	}).Get(&snap)
	rt.people.gates[name] = g
	rt.people.gateDirs[name] = snap
	rt.people.gateAttempt[name] = st.Attempt
	st.Gates = append(st.Gates, g)
	g.ApplyEarly(rt.people.inbox.Take(name), snap)

	if !g.Closed() {
		rt.emit(c.wctx, EventApprovalRequested, name, "", req.Message, map[string]any{
			"approvers": g.Request.Approvers, "required": g.Request.Required, "deadline": g.Deadline,
			"command": fmt.Sprintf("flowctl approve %s %s", c.RunID(), name)})
		gm := workflow.GetMetricsHandler(c.wctx).WithTags(map[string]string{"workflow": rt.info.Name})
		gm.Counter("gateflow_gates_opened_total").Inc(1)
		c.wait("approval:"+name, StatusAwaitingApproval)
		ok, werr := c.await(req.Timeout, "approval "+name, g.Closed)
		c.unwait("approval:" + name)
		outcome := "cancelled"
		if g.Decision != nil {
			outcome = string(g.Decision.Outcome)
		} else if !ok && werr == nil {
			outcome = string(approval.TimedOut)
		}
		gm.WithTags(map[string]string{"outcome": outcome}).Counter("gateflow_gates_decided_total").Inc(1)
		if werr != nil {
			st.endStep(i, workflow.Now(c.wctx), StepCancelled, 0, errorMessage(werr), "", nil)
			rt.publish()
			return approval.Decision{}, &StepError{Step: name, Kind: KindApproval, Err: werr}
		}
		if !ok {
			g.Expire(workflow.Now(c.wctx))
		}
	}
	d := *g.Decision
	gerr := g.Err()
	rt.emit(c.wctx, EventApprovalDecided, name, string(d.Outcome), d.Comment, map[string]any{"by": d.By, "votes": len(d.Votes)})
	status := StepCompleted
	if gerr != nil {
		status = StepFailed
	}
	st.endStep(i, workflow.Now(c.wctx), status, 0, errString(gerr), describeDecision(d), nil)
	rt.publish()
	if d.FailRun {
		rt.people.failRun = gerr
	}
	return d, gerr
}

func describeDecision(d approval.Decision) string {
	var who []string
	for _, v := range d.Votes {
		who = append(who, v.By)
	}
	s := string(d.Outcome)
	if len(who) > 0 {
		s += " by " + strings.Join(who, ", ")
	}
	if d.Comment != "" {
		s += ": " + d.Comment
	}
	return s
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// await waits for cond, at most timeout (0: no limit), with a timer summary for the Web
// UI. It reports false when the timeout passed first.
func (c *Context) await(timeout time.Duration, summary string, cond func() bool) (bool, error) {
	if timeout <= 0 {
		return true, workflow.Await(c.wctx, cond)
	}
	return workflow.AwaitWithOptions(c.wctx, workflow.AwaitOptions{
		Timeout: timeout, TimerOptions: workflow.TimerOptions{Summary: summary},
	}, cond)
}

// wait records that the run waits for what (e.g. "approval:ship") with status s.
func (c *Context) wait(what string, s Status) {
	c.run.people.waiting[what] = true
	c.setStatus(s)
	c.run.publish()
}

func (c *Context) unwait(what string) {
	delete(c.run.people.waiting, what)
	next := StatusRunning
	for w := range c.run.people.waiting {
		switch {
		case strings.HasPrefix(w, "approval:"):
			next = StatusAwaitingApproval
		case strings.HasPrefix(w, "input:") && next != StatusAwaitingApproval:
			next = StatusAwaitingInput
		case strings.HasPrefix(w, "signal:") && next == StatusRunning:
			next = StatusWaitingSignal
		}
	}
	c.setStatus(next)
	c.run.publish()
}

// waitingList is the FlowWaiting search attribute's value.
func (p *people) waitingList() []string {
	out := make([]string, 0, len(p.waiting))
	for w := range p.waiting {
		out = append(out, w)
	}
	sort.Strings(out)
	return out
}

// waitingUpdate is the FlowWaiting update when it differs from the current value.
func (rt *runner) waitingUpdate(sa temporal.SearchAttributes) (temporal.SearchAttributeUpdate, bool) {
	want := rt.people.waitingList()
	cur, _ := sa.GetKeywordList(searchattr.WaitingKey)
	if strings.Join(cur, "\x00") == strings.Join(want, "\x00") {
		return nil, false
	}
	if len(want) == 0 {
		return searchattr.WaitingKey.ValueUnset(), true
	}
	return searchattr.WaitingKey.ValueSet(want), true
}

// IsRejected reports whether err is an approval rejection.
func IsRejected(err error) bool { return errors.Is(err, approval.ErrRejected) }
