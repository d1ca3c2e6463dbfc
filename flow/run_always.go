package flow

import (
	"encoding/json"
	"fmt"

	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/activities"
	"go.temporal.io/sdk/workflow"
)

// afterPart is what runs after something else: the Always steps (after the run), the step
// error handler (after a failed step) and the handler's output (kept when it returns).
type afterPart struct {
	// onError are the cleanup steps registered with OnError.
	onError []onErrorStep
	// triggers are the flows the run's end starts (run_triggers.go).
	triggers []trigger
	// always are the steps registered with Always.
	always []onErrorStep
	// onStepError is the handler set with OnStepError.
	onStepError func(*Context, StepFailure)
	// deferred are the failures of Parallel steps, by scope and group, waiting for their
	// call to finish.
	deferred map[string][]StepFailure
}

// errorHandlerKey marks the workflow context of a step error handler: its own failed steps
// do not call it again.
type errorHandlerKey struct{}

// maxKeptOutput is the most JSON of a handler's output the run state keeps.
const maxKeptOutput = 64 << 10

// onStepFailed calls the step error handler for the failed step i: at once, or, for a step
// of a Parallel call (group), when the call has finished. Cleanup steps (OnError,
// Always) and the handler's own steps do not call it.
func (c *Context) onStepFailed(i int, group string, cleanup bool) {
	a := &c.run.after
	if a.onStepError == nil || cleanup || c.wctx.Value(errorHandlerKey{}) != nil {
		return
	}
	r := c.run.state.Steps[i]
	f := StepFailure{Step: r.Name, Kind: r.Kind, Error: r.Error, Duration: r.Duration(runNow(c.wctx)),
		Allowed: r.AllowedFailure}
	if group != "" {
		if a.deferred == nil {
			a.deferred = map[string][]StepFailure{}
		}
		k := deferKey(c.scope, group)
		a.deferred[k] = append(a.deferred[k], f)
		return
	}
	c.handleStepFailures([]StepFailure{f})
}

// afterParallel calls the step error handler for each failed step of the Parallel call
// group, in the order they failed.
func (c *Context) afterParallel(group string) {
	k := deferKey(c.scope, group)
	fs := c.run.after.deferred[k]
	delete(c.run.after.deferred, k)
	c.handleStepFailures(fs)
}

func deferKey(scope, group string) string { return scope + "\x00" + group }

// handleStepFailures runs the step error handler for each failure, on a context marked as
// the handler's, without the step options of c.
func (c *Context) handleStepFailures(fs []StepFailure) {
	for _, f := range fs {
		fn := c.run.after.onStepError
		if fn == nil {
			return
		}
		hc := c.withWorkflow(workflow.WithValue(c.wctx, errorHandlerKey{}, true))
		hc.defaults = nil
		fn(hc, f)
	}
}

// runAlways runs the Always steps once, on a disconnected context, after the run ended
// with status (cause is the run's error, nil when it completed).
func (rt *runner) runAlways(c *Context, cause error, status runs.Status) {
	steps := rt.after.always
	rt.after.always = nil
	if len(steps) == 0 {
		return
	}
	wctx, _ := workflow.NewDisconnectedContext(rt.root)
	cc := c.withWorkflow(wctx)
	cc.defaults = nil
	for _, s := range steps {
		spec := withStatus(s.spec, status)
		if cause != nil {
			step, msg := failureOf(cause)
			spec = withFailure(spec, step, msg)
		}
		if err := cc.runCleanup(s.name, spec, s.opts, true); err != nil {
			cc.Logger().Warn("always step failed", "step", s.name, "error", err)
		}
	}
}

// withStatus gives an Always step the run's status.
func withStatus(spec activities.Spec, status runs.Status) activities.Spec {
	return withContext(spec, map[string]string{"GATEFLOW_RUN_STATUS": string(status)},
		map[string]string{"X-Gateflow-Run-Status": string(status)})
}

// allowedFailure is what a step allowed to fail returns to the handler: an
// *AllowedFailure around its error. Runs that started before allowed failures were
// returned (their history has no marker gateflow.allowed-failure-error) get nil, as they did
// then, so they replay the way they ran.
func (c *Context) allowedFailure(se *StepError) error {
	if workflow.GetVersion(c.wctx, "gateflow.allowed-failure-error", workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return nil
	}
	return &AllowedFailure{Err: se}
}

// keepOutput records the handler's output in the run state, whatever the run's outcome.
func (rt *runner) keepOutput(out any) {
	b, err := json.Marshal(out)
	if err != nil {
		workflow.GetLogger(rt.root).Warn("keep the handler's output", "error", err)
		return
	}
	if len(b) > maxKeptOutput {
		b, _ = json.Marshal(fmt.Sprintf("output of %d bytes, too large to keep (the limit is %d)", len(b), maxKeptOutput))
	}
	rt.state.Output = b
}
