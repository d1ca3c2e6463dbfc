package flow

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"time"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/typeschema"
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
	Info() WorkflowInfo
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
	info    WorkflowInfo
	handler handler[I, O]
	err     error
}

// Option configures a flow at Define.
type Option func(*WorkflowInfo) error

// Description is a one-line explanation shown by `flowctl workflows` and in the Web UI.
func Description(text string) Option {
	return func(i *WorkflowInfo) error { i.Description = text; return nil }
}

// Category groups flows, e.g. "delivery/web"; it is stored in the FlowCategory search
// attribute of every run.
func Category(name string) Option {
	return func(i *WorkflowInfo) error { i.Category = name; return nil }
}

// Version is the handler's version, recorded at the start of each run (FlowVersion).
func Version(v string) Option {
	return func(i *WorkflowInfo) error { i.Version = v; return nil }
}

// MaxCostUSD is the flow's default money cap for a run, used when the start options give
// none. It must not be negative.
func MaxCostUSD(d decimal.Decimal) Option {
	return func(i *WorkflowInfo) error {
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
	return func(i *WorkflowInfo) error {
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
	return func(i *WorkflowInfo) error {
		if g.MaxChildDepth < -1 || g.MaxFanOut < -1 || g.MaxTokens < -1 || g.MaxWallTime < -1 || g.MaxSteps < -1 {
			return fmt.Errorf("guards: use -1 for no limit, not other negative values")
		}
		i.Guards = g
		return nil
	}
}

// OnBudgetExceeded sets what a run of the flow does when its cap would be exceeded:
// budget.Stop (the default: the run ends budget_exceeded) or budget.Pause (the run waits in
// budget_paused, up to pause — 0 means DefaultBudgetPause — for a higher cap). Start options
// override it.
func OnBudgetExceeded(policy budget.Policy, pause time.Duration) Option {
	return func(i *WorkflowInfo) error {
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
// flow needs). Client.Start merges them with the start's options: labels are the union
// (the start's value wins for the same key), worker tags the union, and the priority the
// start's when it gives one. Only these three fields may be set; they are checked as
// start options are. Given twice, the last wins.
//
//	flow.Define("train", train, flow.StartDefaults(flow.StartOptions{
//		Priority: 2, Labels: map[string]string{"team": "ml"}, WorkerTags: []string{"gpu"}}))
func StartDefaults(o StartOptions) Option {
	return func(i *WorkflowInfo) error {
		d := StartOptions{Priority: o.Priority, Labels: o.Labels, WorkerTags: o.WorkerTags}
		if !reflect.DeepEqual(o, d) {
			return errors.New("start defaults: only Priority, Labels and WorkerTags can be given")
		}
		if err := validateStart(d, time.Time{}); err != nil {
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

var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.\-/]{0,199}$`)

// validateName reports whether name can be a flow name (a Temporal workflow type): 1–200
// letters, digits and "_.-/", starting with a letter or digit.
func validateName(name string) error {
	if !namePattern.MatchString(name) {
		return fmt.Errorf("flow name %q: want 1-200 letters, digits or _.-/ starting with a letter or digit", name)
	}
	return nil
}

// Define defines a flow. The name is the Temporal workflow type. Mistakes (a bad name, a
// nil handler, a bad option) are kept and reported by Err, by NewWorker's Start and by
// the worker binary, rather than panicking at package initialisation.
func Define[I, O any](name string, handler func(ctx *Context, in I) (O, error), opts ...Option) *Flow[I, O] {
	var in I
	var out O
	f := &Flow[I, O]{
		info: WorkflowInfo{
			Name:        name,
			InputType:   typeName(reflect.TypeOf(&in).Elem()),
			OutputType:  typeName(reflect.TypeOf(&out).Elem()),
			InputSchema: typeschema.ForStart(reflect.TypeOf(&in).Elem()),
		},
		handler: handler,
	}
	var errs []error
	if err := validateName(name); err != nil {
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
func (f *Flow[I, O]) Info() WorkflowInfo {
	if f == nil {
		return WorkflowInfo{}
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

// WorkflowInfo is a flow's catalog entry.
type WorkflowInfo struct {
	Name string `json:"name"`
	// Kind is "go" for a flow defined in Go, "yaml" for a declarative
	// definition; empty in entries of older workers (Go flows).
	Kind string `json:"kind,omitempty"`
	// Hash is the content hash of a declarative definition (flowdef.Hash) and Source
	// where the worker loaded it from; both empty for Go flows.
	Hash   string `json:"hash,omitempty"`
	Source string `json:"source,omitempty"`
	// Removed, when set, says why new runs of the flow are refused: a declarative
	// definition whose file was removed (runs in progress go on). Client.Start refuses it
	// with an *UnknownWorkflowError.
	Removed     string `json:"removed,omitempty"`
	Description string `json:"description,omitempty"`
	Category    string `json:"category,omitempty"`
	Version     string `json:"version,omitempty"`
	// MaxCostUSD is the flow's default money cap, as a decimal string; empty for none.
	MaxCostUSD string `json:"max_cost_usd,omitempty"`
	// MaxAttempts is how many times a failed run is attempted (see MaxAttempts); 0 leaves it
	// to the worker.
	MaxAttempts int `json:"max_attempts,omitempty"`
	// BudgetPolicy is what a run does when its cap would be exceeded: "stop" (default) or
	// "pause" (wait up to BudgetPause for a higher cap).
	BudgetPolicy budget.Policy `json:"budget_policy,omitempty"`
	BudgetPause  time.Duration `json:"budget_pause,omitempty"`
	// MonthlyQuotaUSD is the worker's monthly quota for the flow, if any;
	// OverallQuotaUSD the worker's overall monthly quota (the same on every entry).
	MonthlyQuotaUSD string `json:"monthly_quota_usd,omitempty"`
	OverallQuotaUSD string `json:"overall_quota_usd,omitempty"`
	// WorkerMaxCostUSD is the worker's default money cap (WorkerOptions.MaxCostUSD), if
	// any: a Client resolves a run's cap from it to reserve it against the monthly quotas.
	WorkerMaxCostUSD string `json:"worker_max_cost_usd,omitempty"`
	// QuotaReservations is set by workers whose monthly ledgers take reservations (the
	// Update gateflow.ledger.reserve); a Client facing older workers only checks that the
	// quotas are not used up.
	QuotaReservations bool `json:"quota_reservations,omitempty"`
	// Schedules are the flow's schedules (see Schedule).
	Schedules []ScheduleInfo `json:"schedules,omitempty"`
	// Once, Triggers and SignalStarts are the flow's starts besides manual and scheduled
	// ones (see Once, OnRunOf, OnSignal).
	Once         *OnceInfo     `json:"once,omitempty"`
	Triggers     []TriggerInfo `json:"triggers,omitempty"`
	SignalStarts []string      `json:"signal_starts,omitempty"`
	// GateTypes are the polled gate types the flow uses (UsesGates): a worker without a
	// resolver for one of them refuses to start.
	GateTypes []string `json:"gate_types,omitempty"`
	// Priority, Labels and WorkerTags are the flow's start defaults (see StartDefaults):
	// 0, none and none without them.
	Priority   int               `json:"priority,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
	WorkerTags []string          `json:"worker_tags,omitempty"`
	// MaxRuns is the most live runs of the flow (see MaxRuns), 0 for no limit; OnOverflow
	// is what a start past it does.
	MaxRuns    int      `json:"max_runs,omitempty"`
	OnOverflow Overflow `json:"on_overflow,omitempty"`
	// MaxRunsKey is the key template of MaxRunsPerKey: MaxRuns then counts the live runs
	// per key. Empty: MaxRuns counts all the flow's runs.
	MaxRunsKey string `json:"max_runs_key,omitempty"`
	// Guards are the flow's own limits; zero fields are left to the worker.
	Guards     Guards `json:"guards"`
	InputType  string `json:"input_type"`
	OutputType string `json:"output_type"`
	// InputSchema is the JSON Schema of the input type, as encoding/json decodes it:
	// clients check a start's input against it before anything starts.
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// PublishedBy is the identity of the worker that last published the entry.
	PublishedBy string    `json:"published_by,omitempty"`
	PublishedAt time.Time `json:"published_at"`
}
