package flow

import (
	"errors"
	"fmt"
	"maps"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/internal/display"
	"go.temporal.io/sdk/workflow"
)

// runOnError runs the registered cleanup steps once, after the run failed with cause. When
// the run was cancelled they run on a disconnected context, so they still run.
func (rt *runner) runOnError(c *Context, cause error) {
	steps := rt.after.onError
	rt.after.onError = nil
	if len(steps) == 0 {
		return
	}
	wctx := c.wctx
	if isCancellation(cause) {
		wctx, _ = workflow.NewDisconnectedContext(rt.root)
	}
	cc := c.withWorkflow(wctx)
	failedStep, msg := failureOf(cause)
	for _, s := range steps {
		spec := withFailure(s.spec, failedStep, msg)
		if err := cc.runCleanup(s.name, spec, s.opts, false); err != nil {
			cc.Logger().Warn("on-error step failed", "step", s.name, "error", err)
		}
	}
}

// failureOf is the failed step (empty when the run failed outside a step) and the message
// of a run's error.
func failureOf(cause error) (step, msg string) {
	msg = errorMessage(cause)
	var se *StepError
	if errors.As(cause, &se) {
		step, msg = se.Step, errorMessage(se.Err)
	}
	return step, msg
}

// runCleanup runs an OnError step, or with always an Always step: no guard stops it, its
// failure is recorded and returned, and it calls no step error handler.
func (c *Context) runCleanup(name string, spec activities.Spec, opts []StepOption, always bool) error {
	cl := c.builtinCall(name, spec, opts)
	cl.onError, cl.always = true, always
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
	return c.settle(c.dispatch(cl), raw, describe)
}

// withFailure gives a cleanup step the failure it cleans up after.
func withFailure(spec activities.Spec, step, msg string) activities.Spec {
	if a, ok := spec.(activities.Agent); ok {
		a.Prompt = fmt.Sprintf("[Error context]\nStep %q failed: %s\n\n%s", step, msg, a.Prompt)
		return a
	}
	return withContext(spec,
		map[string]string{"GATEFLOW_ERROR_STEP": step, "GATEFLOW_ERROR_MESSAGE": msg},
		map[string]string{"X-Gateflow-Error-Step": step, "X-Gateflow-Error-Message": display.Preview(oneLine(msg), 500)})
}

// withContext adds env to a shell step's environment and headers to an HTTP step's
// headers (copies: the registered spec is not changed); other steps are returned as they
// are.
func withContext(spec activities.Spec, env, headers map[string]string) activities.Spec {
	switch s := spec.(type) {
	case activities.Shell:
		s.Env = maps.Clone(s.Env)
		if s.Env == nil {
			s.Env = map[string]string{}
		}
		maps.Copy(s.Env, env)
		return s
	case activities.HTTP:
		s.Headers = maps.Clone(s.Headers)
		if s.Headers == nil {
			s.Headers = map[string]string{}
		}
		maps.Copy(s.Headers, headers)
		return s
	}
	return spec
}
