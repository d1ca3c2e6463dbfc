package flow

import (
	"encoding/json"
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
	return c.approvalGate(name, name, req, nil)
}

// approvalGate is Approval recording the step name and opening the gate named gate. A
// tool call's gate (edits set) checks approvers' edited arguments with edits, and asks
// again in a retried run attempt, since the call may differ.
func (c *Context) approvalGate(name, gate string, req approval.Request, edits func(json.RawMessage) error) (approval.Decision, error) {
	rt := c.run
	s := c.begin(name, runs.KindApproval)
	now := s.began
	if err := c.countStep(name); err != nil { // run_limits.go: the MaxSteps guard
		return approval.Decision{}, s.fail(now, runs.StepFailed, err)
	}
	// An approval is carried by the run, not by the attempt: a retried run does not ask
	// people again for a gate they approved.
	if prev, ok := rt.people.approvedBefore(gate); ok && edits == nil {
		s.end(now, runs.StepCompleted, "", describeDecision(*prev.Decision)+" (in an earlier attempt)")
		return *prev.Decision, nil
	}
	if s.planned(fmt.Sprintf("approval by %s (assumed granted)", strings.Join(req.Approvers, ", "))) {
		return approval.Decision{Outcome: approval.Approved, DecidedAt: now, By: "plan"}, nil
	}
	g, err := approval.Open(gate, req, now)
	if err != nil {
		return approval.Decision{}, s.fail(now, runs.StepFailed, err)
	}
	snap, err := c.snapshotGroups("approval "+gate, g.Request.Approvers)
	if err != nil {
		return approval.Decision{}, s.fail(now, runs.StepFailed, err)
	}
	rt.people.checkEditsWith(gate, edits) // agent_approve.go
	rt.people.openGate(g, snap)

	if !g.Closed() {
		if werr := c.awaitApproval(g, req); werr != nil {
			s.end(s.now(), runs.StepCancelled, errorMessage(werr), "")
			return approval.Decision{}, s.err(werr)
		}
	}
	d := *g.Decision
	gerr := g.Err()
	rt.emit(c.wctx, events.ApprovalDecided, gate, string(d.Outcome), d.Comment, map[string]any{"by": d.By, "votes": len(d.Votes)})
	status := runs.StepCompleted
	switch {
	case errors.Is(gerr, approval.ErrChangesRequested):
		status = runs.StepChangesRequested
	case gerr != nil:
		status = runs.StepFailed
	}
	s.end(s.now(), status, errString(gerr), describeDecision(d))
	if d.FailRun {
		rt.people.failRunWith(gerr)
	}
	return d, gerr
}

// awaitApproval waits until people close the open gate g or its deadline passes (then
// the gate expires); it returns the error of a cancelled wait.
func (c *Context) awaitApproval(g *approval.Gate, req approval.Request) error {
	name := g.Name
	c.run.emit(c.wctx, events.ApprovalRequested, name, "", req.Message, map[string]any{
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
		return werr
	}
	if !ok {
		g.Expire(runNow(c.wctx))
	}
	return nil
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
	if args, by, ok := d.EditedArguments(); ok {
		s += "; arguments edited by " + by + ": " + string(args)
	}
	return s
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
