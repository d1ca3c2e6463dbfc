package flow

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/startplan"
	"github.com/gateflow/gateflow/internal/typeschema"
	"github.com/gateflow/gateflow/runs"
	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/workflow"
)

// handler is a workflow author's function: it receives the run's Context and the decoded
// input and returns the output or an error.
type handler[I, O any] func(ctx *Context, in I) (O, error)

// Definition is a defined flow as a worker registers it. *Flow[I, O] implements it.
type Definition interface {
	// Name is the Temporal workflow type.
	Name() string
	// Info is the flow's catalog entry.
	Info() core.WorkflowInfo
	// Err reports a definition that cannot be served (bad name, nil handler, bad option).
	Err() error
	// workflow returns the Temporal workflow function; workflowWith adds a worker's
	// defaults.
	workflow() any
	workflowWith(cfg runConfig) any
	// dynamicWith is workflowWith as the dynamic workflow of a worker runs it, for flows
	// added after the worker started (worker_late.go).
	dynamicWith(cfg runConfig) dynamicFn
}

// Flow is a defined flow with input I and output O.
type Flow[I, O any] struct {
	info    core.WorkflowInfo
	handler handler[I, O]
	err     error
}

// Option configures a flow at Define.
type Option func(*core.WorkflowInfo) error

// Description is a one-line explanation shown by `flowctl workflows` and in the Web UI.
func Description(text string) Option {
	return func(i *core.WorkflowInfo) error { i.Description = text; return nil }
}

// Category groups flows, e.g. "delivery/web"; it is stored in the FlowCategory search
// attribute of every run.
func Category(name string) Option {
	return func(i *core.WorkflowInfo) error { i.Category = name; return nil }
}

// Version is the handler's version, recorded at the start of each run (FlowVersion).
func Version(v string) Option {
	return func(i *core.WorkflowInfo) error { i.Version = v; return nil }
}

// MaxCostUSD is the flow's default money cap for a run, used when the start options give
// none. It must not be negative.
func MaxCostUSD(d decimal.Decimal) Option {
	return func(i *core.WorkflowInfo) error {
		if d.IsNegative() {
			return fmt.Errorf("max cost %s is negative", d)
		}
		s := d.String()
		i.MaxCostUSD = s
		return nil
	}
}

// MaxAttempts lets a failed run be attempted again, up to n attempts in all, with a
// growing pause (1s, 2s, 4s, ... up to a minute) between them. The handler runs again from
// the start; the cost already spent stays on the run. Cancelled runs, guard refusals and
// errors wrapped with Permanent are not attempted again.
func MaxAttempts(n int) Option {
	return func(i *core.WorkflowInfo) error {
		if n < 1 {
			return fmt.Errorf("max attempts %d: want at least 1", n)
		}
		i.MaxAttempts = n
		return nil
	}
}

// WithGuards sets the flow's execution limits (see Guards); zero fields are left to the
// worker's defaults.
func WithGuards(g Guards) Option {
	return func(i *core.WorkflowInfo) error {
		if g.MaxChildDepth < -1 || g.MaxFanOut < -1 || g.MaxTokens < -1 || g.MaxWallTime < -1 || g.MaxSteps < -1 {
			return fmt.Errorf("guards: use -1 for no limit, not other negative values")
		}
		i.Guards = runs.Guards(g)
		return nil
	}
}

// OnBudgetExceeded sets what a run of the flow does when its cap would be exceeded:
// budget.Stop (the default: the run ends budget_exceeded) or budget.Pause (the run waits in
// budget_paused, up to pause — 0 means DefaultBudgetPause — for a higher cap). Start options
// override it.
func OnBudgetExceeded(policy budget.Policy, pause time.Duration) Option {
	return func(i *core.WorkflowInfo) error {
		p, err := budget.ParsePolicy(string(policy))
		if err != nil {
			return err
		}
		if pause < 0 {
			return fmt.Errorf("budget pause %s is negative", pause)
		}
		i.BudgetPolicy, i.BudgetPause = p, pause
		return nil
	}
}

// StartDefaults sets what a run of the flow gets when its start does not say otherwise:
// Priority (1 highest to 5 lowest), Labels and WorkerTags (the worker tags a run of the
// flow needs). flowclient.Client.Start merges them with the start's options: labels are the union
// (the start's value wins for the same key), worker tags the union, and the priority the
// start's when it gives one. Only these three fields may be set; they are checked as
// start options are. Given twice, the last wins.
//
//	flow.Define("train", train, flow.StartDefaults(core.StartOptions{
//		Priority: 2, Labels: map[string]string{"team": "ml"}, WorkerTags: []string{"gpu"}}))
func StartDefaults(o core.StartOptions) Option {
	return func(i *core.WorkflowInfo) error {
		d := core.StartOptions{Priority: o.Priority, Labels: o.Labels, WorkerTags: o.WorkerTags}
		if !reflect.DeepEqual(o, d) {
			return errors.New("start defaults: only Priority, Labels and WorkerTags can be given")
		}
		if err := startplan.ValidateStart(d, time.Time{}); err != nil {
			return fmt.Errorf("start defaults: %w", err)
		}
		i.Priority = o.Priority
		i.Labels = maps.Clone(o.Labels)
		i.WorkerTags = slices.Sorted(slices.Values(o.WorkerTags))
		if len(i.WorkerTags) == 0 {
			i.WorkerTags = nil
		}
		return nil
	}
}

// Define defines a flow. The name is the Temporal workflow type. Mistakes (a bad name, a
// nil handler, a bad option) are kept and reported by Err, by NewWorker's Start and by
// the worker binary, rather than panicking at package initialisation.
func Define[I, O any](name string, handler func(ctx *Context, in I) (O, error), opts ...Option) *Flow[I, O] {
	var in I
	var out O
	f := &Flow[I, O]{
		info: core.WorkflowInfo{
			Name:        name,
			InputType:   typeName(reflect.TypeOf(&in).Elem()),
			OutputType:  typeName(reflect.TypeOf(&out).Elem()),
			InputSchema: typeschema.ForStart(reflect.TypeOf(&in).Elem()),
		},
		handler: handler,
	}
	var errs []error
	if err := startplan.ValidateName(name); err != nil {
		errs = append(errs, err)
	}
	if handler == nil {
		errs = append(errs, errors.New("handler is nil"))
	}
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(&f.info); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		f.err = fmt.Errorf("define %s: %w", name, err)
	}
	return f
}

// Name is the flow's name, its Temporal workflow type.
func (f *Flow[I, O]) Name() string {
	if f == nil {
		return ""
	}
	return f.info.Name
}

// Info is the flow's catalog entry.
func (f *Flow[I, O]) Info() core.WorkflowInfo {
	if f == nil {
		return core.WorkflowInfo{}
	}
	return f.info
}

// Err reports why the flow cannot be served, or nil.
func (f *Flow[I, O]) Err() error {
	if f == nil {
		return errors.New("flow is nil")
	}
	return f.err
}

// Types returns the zero values of the flow's input and output types: it lets generic
// code that only knows the flow as a value (flowclient.StartFlow, which takes any
// flowclient.TypedFlow) infer them.
func (f *Flow[I, O]) Types() (in I, out O) { return in, out }

func (f *Flow[I, O]) workflowWith(cfg runConfig) any {
	return func(wctx workflow.Context, in I) (O, error) {
		return runHandler(wctx, f.info, cfg, f.handler, in)
	}
}

func (f *Flow[I, O]) workflow() any {
	return func(wctx workflow.Context, in I) (O, error) {
		return runHandler(wctx, f.info, runConfig{}, f.handler, in)
	}
}

func typeName(t reflect.Type) string {
	if t.Name() != "" && t.PkgPath() != "" {
		return t.PkgPath() + "." + t.Name()
	}
	return t.String()
}
