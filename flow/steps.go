package flow

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"strings"

	"github.com/gateflow/gateflow/runs"
	"github.com/shopspring/decimal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/internal/display"
)

// builtinCall turns a built-in step's spec into a call.
func (c *Context) builtinCall(name string, spec activities.Spec, opts []StepOption) call {
	cl := call{name: name, activity: spec.ActivityName(), args: []any{spec}, invalid: spec.Validate(), opts: c.options(opts)}
	cl.costLimit = cl.opts.costLimit
	switch s := spec.(type) {
	case activities.Shell:
		cl.kind = runs.KindShell
		cl.nonRetryable = []string{activities.ShellExitErrorType}
		if cl.invalid == nil {
			s, cl.invalid = c.resolveInputs(s) // artifacts.go: the inputs' blob keys
			cl.args = []any{s}
		}
		if cl.opts.timeout == 0 {
			cl.opts.timeout = s.Timeout
		}
	case activities.HTTP:
		cl.kind = runs.KindHTTP
		if cl.opts.timeout == 0 {
			cl.opts.timeout = s.Timeout
		}
	case activities.Agent:
		cl.kind = runs.KindAgent
		cl.costLimit = agentCostLimit(s.MaxBudgetUSD, cl.opts)
	case activities.AgentTurn:
		cl.kind = runs.KindAgent
		cl.costLimit = agentCostLimit(s.MaxBudgetUSD, cl.opts)
	default:
		cl.kind = runs.KindActivity
	}
	return cl
}

// agentCostLimit is what an agent step or turn reserves: its budget, or the step's
// CostLimit option; a paid step even when zero.
func agentCostLimit(budget decimal.Decimal, o stepOptions) *decimal.Decimal {
	if o.costLimit != nil {
		budget = *o.costLimit
	}
	return &budget
}

func describeShell(res *activities.ShellResult) func() outcome {
	return func() outcome {
		code := res.ExitCode
		return outcome{output: display.Preview(res.Stdout, 200), attempt: res.Attempt, exitCode: &code, artifacts: res.Artifacts}
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
			tokens: runs.Tokens{Input: res.Usage.InputTokens, Output: res.Usage.OutputTokens}}
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
//
// When activity is a function, the step checks it before dispatch: args must fit its
// parameters (after an optional context.Context) and its result must decode into T; a
// step that does not fit fails with the reason and is not dispatched.
func Step[T any](ctx *Context, name string, activity any, args ...any) (T, error) {
	var res T
	cl := activityCall(ctx, name, activity, args)
	if cl.invalid == nil {
		cl.invalid = checkResult(activity, reflect.TypeFor[T]())
	}
	err := ctx.settle(ctx.dispatch(cl), &res, describeValue(&res))
	return res, err
}

func activityCall(ctx *Context, name string, activity any, args []any) call {
	cl := call{name: name, kind: runs.KindActivity, activity: activity, args: args, opts: ctx.options(nil)}
	cl.costLimit = cl.opts.costLimit
	an := activityName(activity)
	if an == "" {
		cl.invalid = fmt.Errorf("activity %v is neither a function nor a name", activity)
	} else {
		cl.invalid = checkArgs(activity, args)
	}
	cl.summary = name + " (" + an + ")"
	return cl
}

var (
	contextType = reflect.TypeFor[context.Context]()
	errorType   = reflect.TypeFor[error]()
)

// checkArgs reports how args do not fit the parameters of the activity function (nothing
// for an activity given by name: the worker checks it).
func checkArgs(activity any, args []any) error {
	ft := reflect.TypeOf(activity)
	if ft == nil || ft.Kind() != reflect.Func {
		return nil
	}
	params := make([]reflect.Type, 0, ft.NumIn())
	for i := range ft.NumIn() {
		params = append(params, ft.In(i))
	}
	if len(params) > 0 && params[0] == contextType {
		params = params[1:]
	}
	name := activityName(activity)
	variadic := ft.IsVariadic()
	switch {
	case !variadic && len(args) != len(params):
		return fmt.Errorf("activity %s takes %d arguments (%s), the step gives %d", name, len(params), typeList(params), len(args))
	case variadic && len(args) < len(params)-1:
		return fmt.Errorf("activity %s takes at least %d arguments (%s), the step gives %d", name, len(params)-1, typeList(params), len(args))
	}
	for i, a := range args {
		want := params[min(i, len(params)-1)]
		if variadic && i >= len(params)-1 {
			want = want.Elem()
		}
		if a == nil {
			switch want.Kind() {
			case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice:
				continue
			}
			return fmt.Errorf("activity %s: argument %d is nil, the activity takes %s", name, i+1, want)
		}
		if got := reflect.TypeOf(a); !got.AssignableTo(want) {
			return fmt.Errorf("activity %s: argument %d is %s, the activity takes %s", name, i+1, got, want)
		}
	}
	return nil
}

// checkResult reports how the activity function's result does not fit what the step
// reads (want): it must return (R, error) with R assignable to want, or only an error.
func checkResult(activity any, want reflect.Type) error {
	ft := reflect.TypeOf(activity)
	if ft == nil || ft.Kind() != reflect.Func {
		return nil
	}
	name := activityName(activity)
	switch {
	case ft.NumOut() == 1 && ft.Out(0) == errorType:
		return nil
	case ft.NumOut() != 2 || ft.Out(1) != errorType:
		return fmt.Errorf("activity %s returns (%s): an activity returns (R, error) or error", name, typeList(outs(ft)))
	}
	if got := ft.Out(0); !got.AssignableTo(want) && want.Kind() != reflect.Interface && want != reflect.TypeFor[json.RawMessage]() {
		return fmt.Errorf("activity %s returns %s, the step reads %s", name, got, want)
	}
	return nil
}

func outs(ft reflect.Type) []reflect.Type {
	out := make([]reflect.Type, ft.NumOut())
	for i := range out {
		out[i] = ft.Out(i)
	}
	return out
}

func typeList(ts []reflect.Type) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.String()
	}
	return strings.Join(names, ", ")
}

func describeValue[T any](res *T) func() outcome {
	return func() outcome { return describeAny(any(*res)) }
}

// describeAny is the outcome of an activity step's result v: its cost and tokens when it
// reports them, and a preview of its JSON.
func describeAny(v any) outcome {
	var o outcome
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
	s := c.begin(name, runs.KindSkip)
	if err := c.countStep(name); err != nil { // run_limits.go: the MaxSteps guard
		// Skip returns nothing: the refusal is recorded, and the run's next step that
		// returns an error is refused too.
		s.end(s.began, runs.StepFailed, err.Error(), "")
		return
	}
	s.end(s.began, runs.StepSkipped, "", reason)
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
	for i, s := range c.run.after.onError {
		if s.name == name {
			c.run.after.onError[i] = step
			return
		}
	}
	c.run.after.onError = append(c.run.after.onError, step)
}
