package flow

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/gateflow/gateflow/runs"

	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/display"
)

// ParallelMode says what a failed parallel step does to its siblings.
type ParallelMode int

const (
	// FailFast cancels the other steps at the first failure (a shell step's process group
	// is killed); Parallel returns that failure.
	FailFast ParallelMode = iota
	// WaitAll lets every step finish; Parallel returns the first failure, if any.
	WaitAll
)

// ParallelStep is one step of a Parallel call; build it with ShellStep, HTTPStep,
// AgentStep or ActivityStep.
type ParallelStep struct {
	name     string
	spec     activities.Spec
	activity any
	args     []any
	opts     []StepOption
	// branch, when set, runs the step as a branch (BranchStep, ChildStep).
	branch func(*Context) (any, error)
}

// BranchStep runs fn as a branch of a Parallel call (see Async): any sequence of steps,
// children and waits, recorded under the group. Its result is nil.
func BranchStep(name string, fn func(*Context) error) ParallelStep {
	return ParallelStep{name: name, branch: func(c *Context) (any, error) { return nil, fn(c) }}
}

// ChildStep runs the flow f as a child run of a Parallel call (see Child); read its
// output with ResultAs.
func ChildStep[I, O any](name string, f *Flow[I, O], in I, opts ...StepOption) ParallelStep {
	return ParallelStep{name: name, branch: func(c *Context) (any, error) { return Child(c, name, f, in, opts...) }}
}

// ShellStep is a shell step for Parallel.
func ShellStep(name string, s activities.Shell, opts ...StepOption) ParallelStep {
	return ParallelStep{name: name, spec: s, opts: opts}
}

// HTTPStep is an HTTP step for Parallel.
func HTTPStep(name string, h activities.HTTP, opts ...StepOption) ParallelStep {
	return ParallelStep{name: name, spec: h, opts: opts}
}

// AgentStep is an agent step for Parallel.
func AgentStep(name string, a activities.Agent, opts ...StepOption) ParallelStep {
	return ParallelStep{name: name, spec: a, opts: opts}
}

// ActivityStep runs a registered activity (a function or a name) for Parallel; read its
// result with ResultAs.
func ActivityStep(name string, activity any, args ...any) ParallelStep {
	return ParallelStep{name: name, activity: activity, args: args}
}

// ParallelResult is one step's outcome, in the order the steps were given. Exactly one of
// Shell, HTTP and Agent is set for a built-in step that succeeded; an activity step's
// result is read with ResultAs.
type ParallelResult struct {
	Name  string
	Kind  runs.StepKind
	Err   error
	Shell *activities.ShellResult
	HTTP  *activities.HTTPResult
	Agent *activities.AgentResult
	raw   json.RawMessage
}

// ResultAs decodes an activity step's result.
func ResultAs[T any](r ParallelResult) (T, error) {
	var v T
	if r.Err != nil {
		return v, r.Err
	}
	if len(r.raw) == 0 {
		return v, fmt.Errorf("step %s has no activity result", r.Name)
	}
	if err := json.Unmarshal(r.raw, &v); err != nil {
		return v, fmt.Errorf("step %s: decode result: %w", r.Name, err)
	}
	return v, nil
}

// ParallelError is the error of a Parallel call with failed steps.
type ParallelError struct {
	Group string
	// Failed lists the failed steps (first failure first); Cancelled the steps stopped
	// because of it.
	Failed    []string
	Cancelled []string
	// Skipped lists the fan-out items not run because an item they depend on failed
	// (ForEach with SkipDependents).
	Skipped []string
	// First is the first failure.
	First error
	// what is "parallel" or "foreach", for the message.
	what string
}

// Error implements error.
func (e *ParallelError) Error() string {
	what := e.what
	if what == "" {
		what = "parallel"
	}
	msg := fmt.Sprintf("%s %s: %s", what, e.Group, e.First.Error())
	if len(e.Failed) > 1 {
		msg += fmt.Sprintf(" (also failed: %s)", strings.Join(e.Failed[1:], ", "))
	}
	if len(e.Cancelled) > 0 {
		msg += fmt.Sprintf(" (cancelled: %s)", strings.Join(e.Cancelled, ", "))
	}
	if len(e.Skipped) > 0 {
		msg += fmt.Sprintf(" (skipped: %s)", strings.Join(e.Skipped, ", "))
	}
	return msg
}

// Unwrap returns the first failure.
func (e *ParallelError) Unwrap() error { return e.First }

// Parallel runs steps at the same time as the group name and returns their results in the
// order given. With FailFast the first failure cancels the others. A call with more steps
// than the fan-out guard allows starts none of them.
func (c *Context) Parallel(name string, mode ParallelMode, steps ...ParallelStep) ([]ParallelResult, error) {
	if len(steps) == 0 {
		return nil, nil
	}
	if err := c.run.setup.guards.checkFanOut(name, len(steps)); err != nil {
		return nil, &StepError{Step: name, Kind: "parallel", Err: err}
	}
	pctx, cancel := workflow.WithCancel(c.wctx)
	defer cancel()
	pc := c.withWorkflow(pctx)
	results, calls, wave := pc.parallelCalls(name, steps)
	if err := c.reserveWave(name, steps, calls); err != nil {
		return nil, &StepError{Step: name, Kind: "parallel", Err: err}
	}
	for i := range calls {
		if steps[i].branch == nil {
			wave[i].p = pc.dispatch(calls[i])
		}
	}
	// Branches (and children) run as branches of the group.
	futures := make([]*Future[any], len(steps))
	inGroup := pc.branch(pctx, name) // branch records read "group/branch"
	for i, s := range steps {
		if s.branch != nil {
			futures[i] = Async(inGroup, s.name, s.branch)
		}
	}
	w := &parallelWait{c: c, pc: pc, steps: steps, results: results, perr: &ParallelError{Group: name}, mode: mode, cancel: cancel,
		sel: workflow.NewSelector(c.wctx)}
	w.addBranches(futures)
	w.addSteps(wave)
	if w.perr.First != nil && mode == FailFast {
		cancel()
	}
	for ; w.waiting > 0; w.waiting-- {
		w.sel.Select(c.wctx)
	}
	c.afterParallel(name) // the step error handler, for each failed step
	for i := range results {
		if results[i].Err != nil {
			results[i].Shell, results[i].HTTP, results[i].Agent = nil, nil, nil
		}
	}
	if w.perr.First != nil {
		return results, w.perr
	}
	return results, nil
}

// waveStep is an activity step of a Parallel call: dispatched, where its result goes,
// and how the result is recorded.
type waveStep struct {
	p        *pending
	result   any
	describe func() outcome
}

// parallelCalls are the results, the calls and the activity steps of a Parallel call of
// the group name (branch steps have no call).
func (c *Context) parallelCalls(name string, steps []ParallelStep) ([]ParallelResult, []call, []waveStep) {
	results := make([]ParallelResult, len(steps))
	calls := make([]call, len(steps))
	wave := make([]waveStep, len(steps))
	for i, s := range steps {
		var cl call
		b := waveStep{}
		if s.branch != nil {
			results[i].Name, results[i].Kind = s.name, runs.KindBranch
			continue
		}
		if s.spec != nil {
			cl = c.builtinCall(s.name, s.spec, s.opts)
			switch cl.kind {
			case runs.KindShell:
				r := &activities.ShellResult{}
				b.result, b.describe, results[i].Shell = r, describeShell(r), r
			case runs.KindHTTP:
				r := &activities.HTTPResult{}
				b.result, b.describe, results[i].HTTP = r, describeHTTP(r), r
			case runs.KindAgent:
				r := &activities.AgentResult{}
				b.result, b.describe, results[i].Agent = r, describeAgent(r), r
			}
		} else {
			cl = activityCall(c.With(s.opts...), s.name, s.activity, s.args)
			b.result = &results[i].raw
			b.describe = describeRaw(&results[i].raw, resultType(s.activity))
		}
		cl.group = name
		results[i].Name, results[i].Kind = s.name, cl.kind
		calls[i] = cl
		wave[i] = b
	}
	return results, calls, wave
}

// reserveWave reserves the limits of the cost-bearing steps of a Parallel call together,
// so a fan-out cannot overshoot the cap: all are dispatched, or none (then they are
// recorded as refused).
func (c *Context) reserveWave(name string, steps []ParallelStep, calls []call) error {
	var items []budget.Item
	// Keys are unique per call: the same group may run again in a loop or a later attempt.
	c.run.budget.waves[name]++
	group := name
	if n := c.run.budget.waves[name]; n > 1 {
		group = fmt.Sprintf("%s#%d", name, n)
	}
	for i := range calls {
		if steps[i].branch == nil && calls[i].costLimit != nil {
			calls[i].reserveKey = fmt.Sprintf("%s/%s#%d", group, calls[i].name, i)
			items = append(items, budget.Item{Key: calls[i].reserveKey, Amount: *calls[i].costLimit})
		}
	}
	if len(items) == 0 || c.run.setup.plan {
		return nil
	}
	if err := c.reserve(items); err != nil {
		c.refuseWave(name, steps, calls, err)
		return err
	}
	for i := range calls {
		calls[i].reserved = calls[i].costLimit != nil
	}
	return nil
}

// parallelWait waits for the steps of a Parallel call and collects their failures.
type parallelWait struct {
	c, pc   *Context
	steps   []ParallelStep
	results []ParallelResult
	perr    *ParallelError
	mode    ParallelMode
	cancel  workflow.CancelFunc
	sel     workflow.Selector
	waiting int
}

// failed records the failure err of step i; cancelled says the step was cancelled,
// perhaps by an earlier failure. With FailFast a failure cancels the other steps.
func (w *parallelWait) failed(i int, err error, cancelled bool) {
	w.results[i].Err = err
	if onlyAllowed(err) {
		return // allowed to fail: its siblings go on
	}
	if cancelled && w.perr.First != nil {
		w.perr.Cancelled = append(w.perr.Cancelled, w.steps[i].name) // stopped by an earlier failure
		return
	}
	w.perr.Failed = append(w.perr.Failed, w.steps[i].name)
	if w.perr.First == nil {
		w.perr.First = err
	}
	if w.mode == FailFast {
		w.cancel()
	}
}

// addBranches waits for the branch steps' futures.
func (w *parallelWait) addBranches(futures []*Future[any]) {
	for i, f := range futures {
		if f == nil {
			continue
		}
		w.waiting++
		w.sel.AddFuture(f.fut, func(workflow.Future) {
			v, err := f.Get(w.c)
			if err == nil {
				w.results[i].raw, err = json.Marshal(v)
			}
			if err != nil {
				w.failed(i, err, isCancellation(err))
			}
		})
	}
}

// addSteps waits for the dispatched activity steps; those refused before dispatch fail
// at once.
func (w *parallelWait) addSteps(wave []waveStep) {
	for i, b := range wave {
		if b.p == nil || b.p.planned {
			continue
		}
		if b.p.err != nil {
			w.results[i].Err = b.p.err
			if w.perr.First == nil {
				w.perr.First = b.p.err
			}
			w.perr.Failed = append(w.perr.Failed, w.steps[i].name)
			continue
		}
		w.waiting++
		w.sel.AddFuture(b.p.fut, func(workflow.Future) { w.done(i, b) })
	}
}

// done records the finished activity step i.
func (w *parallelWait) done(i int, b waveStep) {
	err := b.p.get(w.c.wctx, b.result)
	if err == nil {
		w.pc.storeCache(b.p, b.result) // cache.go
	}
	if rerr := w.pc.record(b.p, err, b.describe); rerr != nil {
		w.failed(i, rerr, isCancellation(err))
	}
}

// describeRaw describes an activity step's raw result; when the activity is a function,
// the result is decoded into its result type so activities.CostReporter and activities.TokenReporter are charged
// as Step charges them.
func describeRaw(raw *json.RawMessage, t reflect.Type) func() outcome {
	return func() outcome {
		o := outcome{output: display.Preview(string(*raw), 200)}
		if t == nil {
			return o
		}
		v := reflect.New(t)
		if json.Unmarshal(*raw, v.Interface()) != nil {
			return o
		}
		for _, x := range []any{v.Interface(), v.Elem().Interface()} {
			if cr, ok := x.(activities.CostReporter); ok {
				o.cost = cr.StepCostUSD()
			}
			if tr, ok := x.(activities.TokenReporter); ok {
				o.tokens.Input, o.tokens.Output = tr.StepTokens()
			}
		}
		return o
	}
}

// resultType is the first result type of an activity function, or nil.
func resultType(activity any) reflect.Type {
	t := reflect.TypeOf(activity)
	if t == nil || t.Kind() != reflect.Func || t.NumOut() < 2 {
		return nil
	}
	return t.Out(0)
}

// refuseWave records every step of a wave whose money did not fit the cap as refused,
// with the reason: none of them ran.
func (c *Context) refuseWave(group string, steps []ParallelStep, calls []call, err error) {
	for i, ps := range steps {
		kind := calls[i].kind
		if ps.branch != nil {
			kind = runs.KindBranch
		}
		s := c.begin(ps.name, kind)
		s.rec().Group = group
		if calls[i].costLimit != nil && calls[i].costLimit.IsPositive() {
			limit := *calls[i].costLimit
			s.rec().CostLimitUSD = &limit
		}
		s.close(s.began, runs.StepRefused, 0, err.Error(), "", nil)
	}
	c.run.publish()
}
