package flow

import (
	"errors"
	"fmt"

	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/activities"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
)

// route applies a failed step's error routing (OnFailure, OnTimeout; routing.go) and
// returns what the handler sees. Without routing it returns err unchanged. Continue is
// applied by record (the step is recorded as allowed before the step error handler runs);
// here a Fallback runs its step and a Goto turns the failure into a *GotoError. Steps that
// were never dispatched (invalid, refused by the budget or a guard), cancelled steps and
// failures that crossed the budget are not routed.
func (c *Context) route(p *pending, result any, describe func() outcome, err error) error {
	if err == nil || p.err != nil || p.planned {
		return err
	}
	st := c.run.state
	status := st.Steps[p.idx].Status
	if status != runs.StepFailed && status != runs.StepTimedOut {
		return err
	}
	r, ok := p.call.opts.routeFor(status)
	if !ok || (r.kind != routeFallback && r.kind != routeGoto) {
		return err
	}
	var serr *StepError
	if !errors.As(err, &serr) || isBudgetExceeded(err) || errors.Is(err, errGuard) || c.run.budget.err != nil {
		return err
	}
	switch r.kind {
	case routeFallback:
		name := p.call.name + "/fallback"
		st.Steps[p.idx].Route = "fallback " + name
		c.run.publish()
		fc := c.builtinCall(name, r.spec, r.opts)
		// A fallback's own failure is not routed again.
		fc.opts.onFailure, fc.opts.onTimeout = nil, nil
		fc.group, fc.onError, fc.always = p.call.group, p.call.onError, p.call.always
		return c.settleStep(c.dispatch(fc), result, describe)
	default: // routeGoto
		st.Steps[p.idx].Route = gotoText(c.labels.find(r.label), r.label, reentries(st))
		c.run.publish()
		return &GotoError{Label: r.label, Step: p.call.name, Err: err}
	}
}

// gotoText is what a Goto did with a step's failure, for runs.Step.Route: the visit of
// the label it leads to, or why it leads nowhere.
func gotoText(f *labelFrame, label string, reentries int) string {
	switch {
	case f == nil:
		return fmt.Sprintf("goto %s (no enclosing label)", label)
	case f.visits >= f.max:
		return fmt.Sprintf("goto %s (limit of %d visits reached)", label, f.max)
	case reentries >= MaxRunReentries:
		return fmt.Sprintf("goto %s (run limit of %d re-entries reached)", label, MaxRunReentries)
	}
	return fmt.Sprintf("goto %s (%d of %d)", label, f.visits+1, f.max)
}

// checkRoutes reports a route the step cannot take, before it is dispatched: an invalid
// route, a fallback of another kind than the step (or on a custom activity step), and a
// Fallback or Goto on a Parallel step, or a Goto on a cleanup step.
func checkRoutes(cl call) error {
	for _, r := range []*routeSpec{cl.opts.onFailure, cl.opts.onTimeout} {
		if r == nil {
			continue
		}
		if r.invalid != nil {
			return newTypedError(r.invalid.Error(), ErrorInvalidStep, nil)
		}
		if (r.kind == routeFallback || r.kind == routeGoto) && cl.group != "" {
			return newTypedError(fmt.Sprintf("step %s of Parallel %s: Fallback and Goto routes do not apply in Parallel (run the step in a BranchStep)", cl.name, cl.group), ErrorInvalidStep, nil)
		}
		switch r.kind {
		case routeFallback:
			fk := specKind(r.spec)
			if cl.kind != runs.KindShell && cl.kind != runs.KindHTTP && cl.kind != runs.KindAgent {
				return newTypedError(fmt.Sprintf("fallback of step %s: a %s step has no fallback (fallbacks are shell, http and agent steps of the step's kind)", cl.name, cl.kind), ErrorInvalidStep, nil)
			}
			if fk != cl.kind {
				return newTypedError(fmt.Sprintf("fallback of step %s: the step is a %s step, its fallback a %s step; a fallback must be of the step's kind", cl.name, cl.kind, fk), ErrorInvalidStep, nil)
			}
			if err := r.spec.Validate(); err != nil {
				return newTypedError(fmt.Sprintf("fallback of step %s: %v", cl.name, err), ErrorInvalidStep, nil)
			}
		case routeGoto:
			if cl.onError {
				return newTypedError(fmt.Sprintf("step %s: an OnError or Always step cannot Goto %s", cl.name, r.label), ErrorInvalidStep, nil)
			}
		}
	}
	return nil
}

// specKind is the step kind of a built-in step's spec.
func specKind(spec activities.Spec) runs.StepKind {
	switch spec.(type) {
	case activities.Shell:
		return runs.KindShell
	case activities.HTTP:
		return runs.KindHTTP
	case activities.Agent:
		return runs.KindAgent
	}
	return runs.KindActivity
}

// strayGoto is the run's error for a handler's error err: a *GotoError no enclosing label
// caught fails the run for good, naming the label; anything else is returned as it is.
func strayGoto(err error) error {
	var ge *GotoError
	if err == nil || !errors.As(err, &ge) || !ge.pending() {
		return err
	}
	stray := *ge
	stray.unknown = true
	return Permanent(&stray)
}

// failureStatus is the status of a step that ended with err, and for a timeout which
// timeout ended it: a Temporal timeout of the activity, or a built-in step's own timeout
// (a shell command killed at its Timeout, an HTTP request that got no answer within its
// Timeout: both count as start_to_close).
func failureStatus(err error) (runs.StepStatus, string) {
	if isCancellation(err) {
		return runs.StepCancelled, ""
	}
	var te *temporal.TimeoutError
	if errors.As(err, &te) {
		return runs.StepTimedOut, timeoutName(te.TimeoutType())
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		switch app.Type() {
		case activities.ShellTimeoutErrorType:
			return runs.StepTimedOut, "start_to_close"
		case activities.HTTPTransportErrorType:
			if d, ok := decodeDetails(app); ok && d.TimedOut {
				return runs.StepTimedOut, "start_to_close"
			}
		}
	}
	return runs.StepFailed, ""
}

func timeoutName(t enumspb.TimeoutType) string {
	switch t {
	case enumspb.TIMEOUT_TYPE_START_TO_CLOSE:
		return "start_to_close"
	case enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START:
		return "schedule_to_start"
	case enumspb.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE:
		return "schedule_to_close"
	case enumspb.TIMEOUT_TYPE_HEARTBEAT:
		return "heartbeat"
	}
	return "unspecified"
}
