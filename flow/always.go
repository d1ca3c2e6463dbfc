package flow

import (
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/activities"
)

// Always registers a step that runs once when the run ends, whatever its outcome
// (completed, warning, failed, rejected, cancelled, budget_exceeded): after the OnError
// steps, in registration order with the other Always steps, on a disconnected context so
// it runs after a cancellation too. Registering the same name again replaces the step.
// Shell steps get the run's status in GATEFLOW_RUN_STATUS, HTTP steps in the
// X-Gateflow-Run-Status header; when the run did not complete they also get the failure as
// OnError steps do. The step is recorded with Always set ("completed (always)"); its
// failure is recorded but never changes the run's outcome, and its cost is charged.
func (c *Context) Always(name string, spec activities.Spec, opts ...StepOption) {
	step := onErrorStep{name: name, spec: spec, opts: append(append([]StepOption(nil), c.defaults...), opts...)}
	for i, s := range c.run.after.always {
		if s.name == name {
			c.run.after.always[i] = step
			return
		}
	}
	c.run.after.always = append(c.run.after.always, step)
}

// StepFailure is what a step error handler (see OnStepError) learns about the step that
// failed.
type StepFailure struct {
	// Step is the failed step's name, as the handler gave it.
	Step string
	// Kind is what the step does (shell, http, agent, activity, child).
	Kind runs.StepKind
	// Error is why the step failed, as its step record says.
	Error string
	// Duration is how long the step ran.
	Duration time.Duration
	// Allowed reports that the step was allowed to fail (AllowFailure): the run goes on.
	Allowed bool
}

// OnStepError sets the run's step error handler, replacing the one set before: fn runs
// after each step that fails (allowed failures included: shell, HTTP, agent and activity
// steps, each failed step of a Parallel call once the call has finished, child steps),
// before the code that ran the step goes on. fn may run steps itself; they are recorded as
// any step, and a failure inside fn does not call fn again. fn runs on a context without
// the failed step's step options; people steps (a rejected approval, an input that timed
// out) and OnError and Always steps do not call it.
func (c *Context) OnStepError(fn func(*Context, StepFailure)) {
	c.run.after.onStepError = fn
}

// ClearErrorHandlers removes the step error handler set with OnStepError; later failed
// steps call nothing. The OnError and Always steps stay registered.
func (c *Context) ClearErrorHandlers() {
	c.run.after.onStepError = nil
}

// AllowedFailure is the error a step run with AllowFailure returns, next to the zero
// result, when it failed: the step is recorded as failed (allowed) and the run goes on.
// errors.As and errors.Is see through it to the *StepError and its cause. A handler that
// returns an error that is only allowed failures (an *AllowedFailure, wrapped or joined
// with others) does not fail the run: the run ends with status warning.
type AllowedFailure struct {
	// Err is the failed step's error.
	Err *StepError
}

// Error implements error.
func (e *AllowedFailure) Error() string {
	if e.Err == nil {
		return "allowed failure"
	}
	return e.Err.Error() + " (allowed)"
}

// Unwrap returns the step's error.
func (e *AllowedFailure) Unwrap() error {
	if e.Err == nil {
		return nil
	}
	return e.Err
}

// onlyAllowed reports whether err is made of allowed failures only: an *AllowedFailure,
// possibly wrapped, or a join whose every error is.
func onlyAllowed(err error) bool {
	for err != nil {
		switch e := err.(type) {
		case *AllowedFailure:
			return true
		case interface{ Unwrap() []error }:
			errs := e.Unwrap()
			n := 0
			for _, x := range errs {
				if x == nil {
					continue
				}
				if !onlyAllowed(x) {
					return false
				}
				n++
			}
			return n > 0
		case interface{ Unwrap() error }:
			err = e.Unwrap()
		default:
			return false
		}
	}
	return false
}
