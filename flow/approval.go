package flow

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/events"
)

// Approval opens the gate name and waits until people decide or its deadline passes. It
// returns the decision; the error is nil when the gate was approved, an
// *approval.RejectedError, *approval.ChangesRequestedError or *approval.TimedOutError
// otherwise. A rejection the handler returns ends the run as rejected. Votes sent before
// the run reached the gate are applied when it opens, against its rules.
func (c *Context) Approval(name string, req approval.Request) (approval.Decision, error) {
	rt := c.run
	st := rt.state
	now := runNow(c.wctx)
	i := beginStep(st, c.scope, name, runs.KindApproval, now)
	if err := c.countStep(name); err != nil { // run_limits.go: the MaxSteps guard
		endStep(st, i, now, runs.StepFailed, 0, err.Error(), "", nil)
		rt.publish()
		return approval.Decision{}, &StepError{Step: name, Kind: runs.KindApproval, Err: err}
	}
	// An approval is carried by the run, not by the attempt: a retried run does not ask
	// people again for a gate they approved.
	if prev, ok := rt.people.gates[name]; ok && prev.Closed() && prev.Decision.Outcome == approval.Approved &&
		rt.people.gateAttempt[name] < st.Attempt {
		endStep(st, i, now, runs.StepCompleted, 0, "", describeDecision(*prev.Decision)+" (in an earlier attempt)", nil)
		rt.publish()
		return *prev.Decision, nil
	}
	if rt.plan {
		d := approval.Decision{Outcome: approval.Approved, DecidedAt: now, By: "plan"}
		endStep(st, i, now, runs.StepPlanned, 0, "", fmt.Sprintf("approval by %s (assumed granted)", strings.Join(req.Approvers, ", ")), nil)
		rt.publish()
		return d, nil
	}
	g, err := approval.Open(name, req, now)
	if err != nil {
		endStep(st, i, now, runs.StepFailed, 0, err.Error(), "", nil)
		rt.publish()
		return approval.Decision{}, &StepError{Step: name, Kind: runs.KindApproval, Err: err}
	}
	snap, err := c.snapshotGroups("approval "+name, g.Request.Approvers)
	if err != nil {
		endStep(st, i, now, runs.StepFailed, 0, err.Error(), "", nil)
		rt.publish()
		return approval.Decision{}, &StepError{Step: name, Kind: runs.KindApproval, Err: err}
	}
	rt.people.gates[name] = g
	rt.people.gateDirs[name] = snap
	rt.people.gateAttempt[name] = st.Attempt
	st.Gates = append(st.Gates, g)
	g.ApplyEarly(rt.people.inbox.Take(name), snap)
	rt.people.showKeptVotes()

	if !g.Closed() {
		rt.emit(c.wctx, events.ApprovalRequested, name, "", req.Message, map[string]any{
			"approvers": g.Request.Approvers, "required": g.Request.Required, "deadline": g.Deadline,
			"command": runs.Wait{Kind: runs.ForApproval, Name: name}.Command(c.RunID())})
		c.gateOpened() // run_metrics.go
		opened := runNow(c.wctx)
		wait := runs.Wait{Kind: runs.ForApproval, Name: name}
		c.wait(wait)
		ok, werr := c.await(req.Timeout, "approval "+name, g.Closed)
		c.unwait(wait)
		outcome := "cancelled"
		if g.Decision != nil {
			outcome = string(g.Decision.Outcome)
		} else if !ok && werr == nil {
			outcome = string(approval.TimedOut)
		}
		c.gateClosed(outcome, runNow(c.wctx).Sub(opened))
		if werr != nil {
			endStep(st, i, runNow(c.wctx), runs.StepCancelled, 0, errorMessage(werr), "", nil)
			rt.publish()
			return approval.Decision{}, &StepError{Step: name, Kind: runs.KindApproval, Err: werr}
		}
		if !ok {
			g.Expire(runNow(c.wctx))
		}
	}
	d := *g.Decision
	gerr := g.Err()
	rt.emit(c.wctx, events.ApprovalDecided, name, string(d.Outcome), d.Comment, map[string]any{"by": d.By, "votes": len(d.Votes)})
	status := runs.StepCompleted
	switch {
	case errors.Is(gerr, approval.ErrChangesRequested):
		status = runs.StepChangesRequested
	case gerr != nil:
		status = runs.StepFailed
	}
	endStep(st, i, runNow(c.wctx), status, 0, errString(gerr), describeDecision(d), nil)
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
