package core

import (
	"time"

	"github.com/shopspring/decimal"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/runs"
)

// StartOptions adjust one start (flowclient.Client.Start).
type StartOptions struct {
	// ID is the run's ID (its Temporal workflow ID). Default: the flow's name and a random
	// suffix. Starting a second run with the ID of a live run is refused.
	ID string
	// CreatedBy records who started the run (FlowCreatedBy). Default: the client's
	// identity.
	CreatedBy string
	// MaxCostUSD caps what the run (and its children) may spend; it wins over the flow's
	// and the worker's default cap.
	MaxCostUSD *decimal.Decimal
	// IdempotencyKey makes the start idempotent: a second start with the same key (for the
	// same workflow) returns the first run instead of starting another.
	IdempotencyKey string
	// Labels are k=v pairs kept on the run (FlowLabels: filter with
	// `FlowLabels = 'team=web'`).
	Labels map[string]string
	// Priority is Temporal's priority key: 1 (highest) to 5 (lowest); 0 means 3.
	Priority int
	// StartAt or Delay hold the run in pending until then (Temporal's start delay).
	StartAt time.Time
	Delay   time.Duration
	// MaxAttempts overrides the flow's number of run attempts.
	MaxAttempts int
	// WorkerTags send the run to workers that have all these tags (flow.WorkerOptions.Tags).
	WorkerTags []string
	// ConcurrencyKey is exclusive: a start is refused while another live run holds the
	// same key. The start claims the key before the run starts, in one Update of the key's
	// semaphore, so of concurrent starts with one key exactly one starts (a claim whose run
	// never starts is dropped within a minute). ConcurrencyLimits queue runs in pending until a permit of each group is
	// free (group → most runs at once); permits come back when a run ends, however it ends.
	ConcurrencyKey    string
	ConcurrencyLimits map[string]int
	// BudgetPolicy is what the run does when its cap would be exceeded: budget.Stop (the
	// default: the run ends budget_exceeded) or budget.Pause (it waits, up to BudgetPause,
	// for `flowctl budget raise`).
	BudgetPolicy budget.Policy
	BudgetPause  time.Duration
	// Guards tighten the flow's guards for this run: each limit set (non-zero) applies
	// where it is stricter than the one in force (the flow's, the worker's, a parent's);
	// a start cannot loosen a limit. -1 (no limit) is refused here. `flowctl start --file`
	// puts a definition's limits here, since the generic definition flow has none.
	Guards *runs.Guards
}

// Defaults and limits of starts.
const (
	// DefaultTaskQueue is the task queue workers and clients use when none is given.
	DefaultTaskQueue = "gateflow"
	// MinPriority (highest), MaxPriority (lowest) and DefaultPriority bound
	// StartOptions.Priority, Temporal's priority key.
	MinPriority     = 1
	MaxPriority     = 5
	DefaultPriority = 3
	// MaxLabels is the most labels a run has; MaxRunAttempts the most run attempts.
	MaxLabels      = 20
	MaxRunAttempts = 100
)

// Run identifies a started run: what flowclient.Client.Start returns, and what a worker's
// own start (a triggered or once start, flow.OnRunOf, flow.Once) records as the result of
// its start activity.
type Run struct {
	ID       string `json:"id"`
	RunID    string `json:"run_id"`
	Workflow string `json:"workflow"`
	// Existing is set when a start found the run its ID or idempotency key names.
	Existing bool `json:"existing,omitempty"`
	// Held is set when the flow's workflow type is paused: the run waits in pending until
	// the type is resumed (flowclient.Client.Resume, flowctl resume).
	Held bool `json:"held,omitempty"`
}
