package core

import (
	"encoding/json"
	"time"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/runs"
	"github.com/gateflow/gateflow/schedule"
)

// WorkflowInfo is a flow's catalog entry (flow.Flow.Info); the options of flow.Define
// fill it.
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
	// definition whose file was removed (runs in progress go on). flowclient.Client.Start refuses it
	// with an *UnknownWorkflowError.
	Removed     string `json:"removed,omitempty"`
	Description string `json:"description,omitempty"`
	Category    string `json:"category,omitempty"`
	Version     string `json:"version,omitempty"`
	// MaxCostUSD is the flow's default money cap, as a decimal string; empty for none.
	MaxCostUSD string `json:"max_cost_usd,omitempty"`
	// MaxAttempts is how many times a failed run is attempted (see flow.MaxAttempts); 0
	// leaves it to the worker.
	MaxAttempts int `json:"max_attempts,omitempty"`
	// BudgetPolicy is what a run does when its cap would be exceeded: "stop" (default) or
	// "pause" (wait up to BudgetPause for a higher cap).
	BudgetPolicy budget.Policy `json:"budget_policy,omitempty"`
	BudgetPause  time.Duration `json:"budget_pause,omitempty"`
	// MonthlyQuotaUSD is the worker's monthly quota for the flow, if any;
	// OverallQuotaUSD the worker's overall monthly quota (the same on every entry).
	MonthlyQuotaUSD string `json:"monthly_quota_usd,omitempty"`
	OverallQuotaUSD string `json:"overall_quota_usd,omitempty"`
	// WorkerMaxCostUSD is the worker's default money cap (flow.WorkerOptions.MaxCostUSD),
	// if any: a Client resolves a run's cap from it to reserve it against the monthly
	// quotas.
	WorkerMaxCostUSD string `json:"worker_max_cost_usd,omitempty"`
	// QuotaReservations is set by workers whose monthly ledgers take reservations (the
	// Update gateflow.ledger.reserve); a Client facing older workers only checks that the
	// quotas are not used up.
	QuotaReservations bool `json:"quota_reservations,omitempty"`
	// Schedules are the flow's schedules (see flow.Schedule).
	Schedules []schedule.Info `json:"schedules,omitempty"`
	// Once, Triggers and SignalStarts are the flow's starts besides manual and scheduled
	// ones (see flow.Once, flow.OnRunOf, flow.OnSignal).
	Once         *OnceInfo     `json:"once,omitempty"`
	Triggers     []TriggerInfo `json:"triggers,omitempty"`
	SignalStarts []string      `json:"signal_starts,omitempty"`
	// GateTypes are the polled gate types the flow uses (flow.UsesGates): a worker without
	// a resolver for one of them refuses to start.
	GateTypes []string `json:"gate_types,omitempty"`
	// Priority, Labels and WorkerTags are the flow's start defaults (see
	// flow.StartDefaults): 0, none and none without them.
	Priority   int               `json:"priority,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
	WorkerTags []string          `json:"worker_tags,omitempty"`
	// MaxRuns is the most live runs of the flow (see flow.MaxRuns), 0 for no limit;
	// OnOverflow is what a start past it does.
	MaxRuns    int      `json:"max_runs,omitempty"`
	OnOverflow Overflow `json:"on_overflow,omitempty"`
	// MaxRunsKey is the key template of flow.MaxRunsPerKey: MaxRuns then counts the live
	// runs per key. Empty: MaxRuns counts all the flow's runs.
	MaxRunsKey string `json:"max_runs_key,omitempty"`
	// Guards are the flow's own limits (flow.WithGuards); zero fields are left to the
	// worker.
	Guards     runs.Guards `json:"guards"`
	InputType  string      `json:"input_type"`
	OutputType string      `json:"output_type"`
	// InputSchema is the JSON Schema of the input type, as encoding/json decodes it:
	// clients check a start's input against it before anything starts.
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// PublishedBy is the identity of the worker that last published the entry.
	PublishedBy string    `json:"published_by,omitempty"`
	PublishedAt time.Time `json:"published_at"`
}

// OnceInfo is a flow's once start (see flow.Once).
type OnceInfo struct {
	// Input is the run's input (JSON).
	Input json.RawMessage `json:"input,omitempty"`
}

// RunEnd is how a run ended, as a trigger (flow.OnRunOf) sees it.
type RunEnd string

// The run ends a trigger can wait for.
const (
	// WhenCompleted is a run that completed: status completed, or warning (it completed
	// with allowed failures).
	WhenCompleted RunEnd = "completed"
	// WhenFailed is a run that failed: status failed, budget_exceeded or rejected. A
	// cancelled run triggers nothing.
	WhenFailed RunEnd = "failed"
)

// TriggerInfo is one trigger of a flow (see flow.OnRunOf): a run of Flow that ends one of
// the When ways starts the flow.
type TriggerInfo struct {
	Flow string   `json:"flow"`
	When []RunEnd `json:"when"`
	// Mapped says the trigger has a condition or an input mapping (flow.TriggerInput).
	Mapped bool `json:"mapped,omitempty"`
	// Map is that mapping, on the worker serving the flow only: it is code, not
	// published in the catalog (nil in entries a client reads).
	Map TriggerMap `json:"-"`
}

// TriggerMap decides, from how a run of the watched flow ended and its output, whether a
// trigger starts its flow, and with which input (see flow.TriggerInput).
type TriggerMap func(end RunEnd, output json.RawMessage) (input any, start bool, err error)

// Overflow is what a start does when its flow already has MaxRuns live runs (see
// flow.MaxRuns).
type Overflow string

const (
	// OverflowQueue starts the run, which waits in pending (FlowWaiting
	// "permit:flow:NAME") until one of the live runs ends.
	OverflowQueue Overflow = "queue"
	// OverflowRefuse refuses the start with a *flowclient.MaxRunsError; nothing starts.
	OverflowRefuse Overflow = "refuse"
	// OverflowReplace cancels the oldest live run (its error says "replaced by RUN") and
	// starts the run, which waits in pending until the cancelled run has ended.
	OverflowReplace Overflow = "replace"
)
