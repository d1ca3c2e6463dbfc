package flow

import (
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"strings"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/internal/display"
	"go.temporal.io/sdk/workflow"
)

// builtinCall turns a built-in step's spec into a call.
func (c *Context) builtinCall(name string, spec activities.Spec, opts []StepOption) call {
	cl := call{name: name, activity: spec.ActivityName(), args: []any{spec}, invalid: spec.Validate(), opts: c.options(opts)}
	cl.costLimit = cl.opts.costLimit
	switch s := spec.(type) {
	case activities.Shell:
		cl.kind = KindShell
		cl.nonRetryable = []string{activities.ShellExitErrorType}
		if cl.opts.timeout == 0 {
			cl.opts.timeout = s.Timeout
		}
	case activities.HTTP:
		cl.kind = KindHTTP
		if cl.opts.timeout == 0 {
			cl.opts.timeout = s.Timeout
		}
	case activities.Agent:
		cl.kind = KindAgent
		limit := s.MaxBudgetUSD
		if cl.opts.costLimit != nil {
			limit = *cl.opts.costLimit
		}
		cl.costLimit = &limit
	default:
		cl.kind = KindActivity
	}
	return cl
}

func describeShell(res *activities.ShellResult) func() outcome {
	return func() outcome {
		code := res.ExitCode
		return outcome{output: display.Preview(res.Stdout, 200), attempt: res.Attempt, exitCode: &code}
	}
}

func describeHTTP(res *activities.HTTPResult) func() outcome {
	return func() outcome {
		return outcome{output: display.Preview(res.Body, 200), attempt: res.Attempt, httpStatus: res.Status}
	}
}

func describeAgent(res *activities.AgentResult) func() outcome {
	return func() outcome {
		return outcome{output: display.Preview(res.Text, 200), attempt: res.Attempt, cost: res.CostUSD,
			tokens: Tokens{Input: res.Usage.InputTokens, Output: res.Usage.OutputTokens}}
	}
}

// Shell runs a shell command as the step name. A non-zero exit fails the step; the error
// carries the exit code and the tail of stderr, and so does the step record.
func (c *Context) Shell(name string, s activities.Shell, opts ...StepOption) (activities.ShellResult, error) {
	var res activities.ShellResult
	err := c.settle(c.dispatch(c.builtinCall(name, s, opts)), &res, describeShell(&res))
	return res, err
}

// HTTP makes an HTTP request as the step name. An unexpected status fails the step (4xx
// other than 408 and 429 at once; 5xx, 408 and 429 after retries, honouring Retry-After).
// Header values written with activities.Secret are read from the worker's environment, so
// secrets never enter the run's history or its step records.
func (c *Context) HTTP(name string, h activities.HTTP, opts ...StepOption) (activities.HTTPResult, error) {
	var res activities.HTTPResult
	err := c.settle(c.dispatch(c.builtinCall(name, h, opts)), &res, describeHTTP(&res))
	return res, err
}

// Agent asks an AI model as the step name. The step's cost (the provider's reported cost,
// or tokens priced with the worker's price table) and tokens are charged to the run.
func (c *Context) Agent(name string, a activities.Agent, opts ...StepOption) (activities.AgentResult, error) {
	var res activities.AgentResult
	err := c.settle(c.dispatch(c.builtinCall(name, a, opts)), &res, describeAgent(&res))
	return res, err
}

// Step runs any activity registered on the worker (Worker.RegisterActivity) as the step
// name: activity is the activity function or its registered name. Results that implement
// activities.CostReporter or activities.TokenReporter are charged to the run. Step options come from
// ctx.With(...).
func Step[T any](ctx *Context, name string, activity any, args ...any) (T, error) {
	var res T
	err := ctx.settle(ctx.dispatch(activityCall(ctx, name, activity, args)), &res, describeValue(&res))
	return res, err
}

func activityCall(ctx *Context, name string, activity any, args []any) call {
	cl := call{name: name, kind: KindActivity, activity: activity, args: args, opts: ctx.options(nil)}
	cl.costLimit = cl.opts.costLimit
	an := activityName(activity)
	if an == "" {
		cl.invalid = fmt.Errorf("activity %v is neither a function nor a name", activity)
	}
	cl.summary = fmt.Sprintf("%s (%s)", name, an)
	return cl
}

func describeValue[T any](res *T) func() outcome {
	return func() outcome {
		var o outcome
		v := any(*res)
		if cr, ok := v.(activities.CostReporter); ok {
			o.cost = cr.StepCostUSD()
		}
		if tr, ok := v.(activities.TokenReporter); ok {
			o.tokens.Input, o.tokens.Output = tr.StepTokens()
		}
		if b, err := json.Marshal(v); err == nil {
			o.output = display.Preview(string(b), 200)
		}
		return o
	}
}

// activityName is the name of an activity given as a name or a function.
func activityName(activity any) string {
	if s, ok := activity.(string); ok {
		return s
	}
	v := reflect.ValueOf(activity)
	if v.Kind() != reflect.Func {
		return ""
	}
	full := runtime.FuncForPC(v.Pointer()).Name()
	full = strings.TrimSuffix(full, "-fm")
	return full[strings.LastIndex(full, ".")+1:]
}

// Skip records the step name as skipped, with the reason, without running anything.
func (c *Context) Skip(name, reason string) {
	st := c.run.state
	now := workflow.Now(c.wctx)
	i := st.beginStep(name, KindSkip, now)
	st.endStep(i, now, StepSkipped, 0, "", reason, nil)
	c.run.publish()
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
