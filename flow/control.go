package flow

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/activities"
)

// Skip records the step name as skipped, with the reason, without running anything.
func (c *Context) Skip(name, reason string) {
	st := c.run.state
	now := workflow.Now(c.wctx)
	i := st.beginStep(name, KindSkip, now)
	st.endStep(i, now, StepSkipped, 0, "", reason, nil)
	c.run.publish()
}

// Sleep waits d on a durable timer (it survives worker restarts) recorded as the step name.
// The run's status is sleeping meanwhile; the timer's summary in the Web UI is the name.
// It returns an error only when the run is cancelled during the wait.
func (c *Context) Sleep(name string, d time.Duration) error {
	st := c.run.state
	now := workflow.Now(c.wctx)
	i := st.beginStep(name, KindSleep, now)
	if d < 0 {
		err := fmt.Errorf("sleep %s is negative", d)
		st.endStep(i, now, StepFailed, 0, err.Error(), "", nil)
		c.run.publish()
		return &StepError{Step: name, Kind: KindSleep, Err: err}
	}
	if c.run.plan {
		st.endStep(i, now, StepPlanned, 0, "", "sleep "+d.String(), nil)
		c.run.publish()
		return nil
	}
	c.setStatus(StatusSleeping)
	c.run.publish()
	err := workflow.NewTimerWithOptions(c.wctx, d, workflow.TimerOptions{Summary: name}).Get(c.wctx, nil)
	end := workflow.Now(c.wctx)
	if err != nil {
		st.endStep(i, end, StepCancelled, 0, errorMessage(err), "", nil)
		c.run.publish()
		return &StepError{Step: name, Kind: KindSleep, Err: err}
	}
	st.endStep(i, end, StepCompleted, 0, "", "slept "+d.String(), nil)
	c.setStatus(StatusRunning)
	c.run.publish()
	return nil
}

// onErrorStep is a cleanup step registered with OnError.
type onErrorStep struct {
	name string
	spec activities.Spec
	opts []StepOption
}

// OnError registers a cleanup step that runs once if the run fails (after its last
// attempt), in registration order with the other cleanup steps; registering the same name
// again replaces the step. Shell steps get the failure in GATEFLOW_ERROR_STEP and
// GATEFLOW_ERROR_MESSAGE, HTTP steps in the X-Gateflow-Error-Step and
// X-Gateflow-Error-Message headers, agent steps at the start of the prompt. A cleanup
// step's failure is recorded but never replaces the run's error; its cost is charged.
func (c *Context) OnError(name string, spec activities.Spec, opts ...StepOption) {
	step := onErrorStep{name: name, spec: spec, opts: append(append([]StepOption(nil), c.defaults...), opts...)}
	for i, s := range c.run.onError {
		if s.name == name {
			c.run.onError[i] = step
			return
		}
	}
	c.run.onError = append(c.run.onError, step)
}

// runOnError runs the registered cleanup steps once, after the run failed with cause. When
// the run was cancelled they run on a disconnected context, so they still run.
func (rt *runner) runOnError(c *Context, cause error) {
	steps := rt.onError
	rt.onError = nil
	if len(steps) == 0 {
		return
	}
	wctx := c.wctx
	if isCancellation(cause) {
		wctx, _ = workflow.NewDisconnectedContext(rt.root)
	}
	cc := c.withWorkflow(wctx)
	failedStep, msg := "", errorMessage(cause)
	var se *StepError
	if errors.As(cause, &se) {
		failedStep, msg = se.Step, errorMessage(se.Err)
	}
	for _, s := range steps {
		spec := withFailure(s.spec, failedStep, msg)
		cl := cc.builtinCall(s.name, spec, s.opts)
		cl.onError = true
		var raw any
		var describe func() outcome
		switch spec.(type) {
		case activities.Shell:
			r := &activities.ShellResult{}
			raw, describe = r, describeShell(r)
		case activities.HTTP:
			r := &activities.HTTPResult{}
			raw, describe = r, describeHTTP(r)
		case activities.Agent:
			r := &activities.AgentResult{}
			raw, describe = r, describeAgent(r)
		default:
			raw, describe = new(any), func() outcome { return outcome{} }
		}
		if err := cc.settle(cc.dispatch(cl), raw, describe); err != nil {
			cc.Logger().Warn("on-error step failed", "step", s.name, "error", err)
		}
	}
}

// withFailure gives a cleanup step the failure it cleans up after.
func withFailure(spec activities.Spec, step, msg string) activities.Spec {
	switch s := spec.(type) {
	case activities.Shell:
		env := map[string]string{}
		for k, v := range s.Env {
			env[k] = v
		}
		env["GATEFLOW_ERROR_STEP"], env["GATEFLOW_ERROR_MESSAGE"] = step, msg
		s.Env = env
		return s
	case activities.HTTP:
		h := map[string]string{}
		for k, v := range s.Headers {
			h[k] = v
		}
		h["X-Gateflow-Error-Step"], h["X-Gateflow-Error-Message"] = step, Preview(oneLine(msg), 500)
		s.Headers = h
		return s
	case activities.Agent:
		s.Prompt = fmt.Sprintf("[Error context]\nStep %q failed: %s\n\n%s", step, msg, s.Prompt)
		return s
	}
	return spec
}
