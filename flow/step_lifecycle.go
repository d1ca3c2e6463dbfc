package flow

import (
	"time"

	"github.com/gateflow/gateflow/runs"
)

// step is one step's record from its begin to its end: every primitive (activity steps,
// children, branches, waits for people and signals, gates, sleeps, sends, quality gates,
// decisions) begins one, runs its guards, ends it as planned when the run is a plan, acts,
// and ends it once through end or close. Ending publishes the run's state (end) or leaves
// that to the caller, who records more first (close).
type step struct {
	c     *Context
	i     int
	name  string
	kind  runs.StepKind
	began time.Time
}

// begin records the step name of kind as running in the context's scope.
func (c *Context) begin(name string, kind runs.StepKind) *step {
	now := runNow(c.wctx)
	return &step{c: c, i: beginStep(c.run.state, c.scope, name, kind, now), name: name, kind: kind, began: now}
}

// stepAt is the lifecycle of the step recorded at index i.
func (c *Context) stepAt(i int) *step {
	r := &c.run.state.Steps[i]
	return &step{c: c, i: i, name: r.Name, kind: r.Kind, began: r.StartedAt}
}

// rec is the step's record in the run's state.
func (s *step) rec() *runs.Step { return &s.c.run.state.Steps[s.i] }

// close records the step's end at the time at, without publishing the run's state.
func (s *step) close(at time.Time, status runs.StepStatus, attempt int, errMsg, output string, exitCode *int) {
	endStep(s.c.run.state, s.i, at, status, attempt, errMsg, output, exitCode)
}

// end records the step's end at the time at and publishes the run's state.
func (s *step) end(at time.Time, status runs.StepStatus, errMsg, output string) {
	s.close(at, status, 0, errMsg, output, nil)
	s.c.run.publish()
}

// fail ends the step at the time at with status and err's message, and returns err as
// the step's *StepError.
func (s *step) fail(at time.Time, status runs.StepStatus, err error) error {
	s.end(at, status, err.Error(), "")
	return s.err(err)
}

// refuse fails the step (a guard or a check refused it before it acted) and calls the
// step error handler, as a refused activity step does.
func (s *step) refuse(err error) error {
	serr := s.fail(s.now(), runs.StepFailed, err)
	s.failed()
	return serr
}

// planned ends the step as planned with detail when the run is a plan, and reports
// whether it did: a planned step does not act.
func (s *step) planned(detail string) bool {
	if !s.c.run.setup.plan {
		return false
	}
	s.end(s.began, runs.StepPlanned, "", detail)
	return true
}

// failed calls the step error handler (OnStepError) for the failed step.
func (s *step) failed() { s.c.onStepFailed(s.i, "", false) }

// allowFailure records the failed step as an allowed failure and returns serr as the
// *AllowedFailure the handler sees.
func (s *step) allowFailure(serr *StepError) error {
	s.rec().AllowedFailure = true
	s.c.run.state.AllowedFailures++
	return s.c.allowedFailure(serr)
}

// err is err as the step's *StepError.
func (s *step) err(err error) *StepError { return &StepError{Step: s.name, Kind: s.kind, Err: err} }

// checkWallTime is the run's wall-time guard for the step, when it began.
func (s *step) checkWallTime() error {
	return s.c.run.setup.guards.checkWallTime(s.name, s.c.run.state.StartedAt, s.began)
}

// now is the run's clock, for an end after the step waited.
func (s *step) now() time.Time { return runNow(s.c.wctx) }
