package runs

import (
	"github.com/gateflow/gateflow/artifacts"

	"encoding/json"
	"time"

	"github.com/gateflow/gateflow/budget"
	"github.com/shopspring/decimal"
)

// Description is what Describe knows about a run.
type Description struct {
	ID       string `json:"id"`
	RunID    string `json:"run_id"`
	Workflow string `json:"workflow"`
	// Status is gateflow's status of the run.
	Status Status `json:"status"`
	// TemporalStatus is Temporal's execution status (Running, Completed, Failed, ...).
	TemporalStatus string `json:"temporal_status"`
	// TaskQueue is the queue the run was started on (with its worker tags).
	TaskQueue string `json:"task_queue"`
	// CreatedBy is who started the run (FlowCreatedBy).
	CreatedBy string `json:"created_by,omitempty"`
	// StartTime and CloseTime are Temporal's; CloseTime is nil while the run is open.
	StartTime time.Time  `json:"start_time"`
	CloseTime *time.Time `json:"close_time,omitempty"`
	// State is the run's state: from the Query gateflow.state while it runs, from its Memo
	// once it has ended. Nil when neither could be read (StateError says why).
	State      *State `json:"state,omitempty"`
	StateError string `json:"state_error,omitempty"`
	// Result is the handler's output of a completed run (also one that ended warning), as
	// JSON.
	Result json.RawMessage `json:"result,omitempty"`
	// Output is what the handler returned next to its error, as JSON, for a run that ended
	// without completing (failed, rejected, cancelled, budget exceeded): State.Output. Nil
	// when the handler never returned (the run ended before it ran, or was terminated).
	Output json.RawMessage `json:"output,omitempty"`
	// Error is why the run failed.
	Error string `json:"error,omitempty"`
	// Live is what the run's running shell and agent steps last heartbeat, by their
	// Step.ActivityID: the tail of a shell step's output, an agent step's progress.
	// Only while they run; the steps of child runs are in the children's descriptions.
	Live map[string]artifacts.LiveOutput `json:"live,omitempty"`
}

// Summary is one line of List.
type Summary struct {
	// ID is the run's workflow ID; RunID the Temporal run ID of its latest execution.
	ID    string `json:"id"`
	RunID string `json:"run_id"`
	// Workflow is the flow's name and Status the run's gateflow status (FlowStatus).
	Workflow string `json:"workflow"`
	Status   Status `json:"status"`
	// CreatedBy is who started the run.
	CreatedBy string `json:"created_by,omitempty"`
	// StartTime and CloseTime are Temporal's; CloseTime is nil while the run is open.
	StartTime time.Time  `json:"start_time"`
	CloseTime *time.Time `json:"close_time,omitempty"`
}

// PendingGate is an open approval gate of a run, as Approvals lists it.
type PendingGate struct {
	// Run is the run's ID, Workflow its flow, Gate the gate's name.
	Run      string `json:"run"`
	Workflow string `json:"workflow"`
	Gate     string `json:"gate"`
	// Message is what the gate asks.
	Message string `json:"message"`
	// Approvers may decide (users and group: names); Pending are those who have not.
	Approvers []string `json:"approvers"`
	Pending   []string `json:"pending"`
	// Approvals counted so far, of Required.
	Approvals int `json:"approvals"`
	Required  int `json:"required"`
	// Voted lists who has voted so far and how ("alice approve"), in order.
	Voted     []string   `json:"voted,omitempty"`
	OpenedAt  time.Time  `json:"opened_at"`
	Deadline  *time.Time `json:"deadline,omitempty"`
	OnTimeout string     `json:"on_timeout,omitempty"`
	// Tool is the tool an agent loop asks to call, for a tool call's gate (empty for
	// others); Arguments are the model's arguments, whole, and Reason what the model said.
	// An approval of such a gate may edit the arguments (flowctl approve --arguments).
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Reason    string          `json:"reason,omitempty"`
	// Unknown says why the run's gates could not be read (its worker is down or does not
	// answer the state query): the run waits for an approval, but which gate and from whom
	// is unknown. Gate and the counts are empty then.
	Unknown string `json:"unknown,omitempty"`
}

// SpendLine is one scope's spend in a month, with what admitted runs still hold reserved,
// against its quota if it has one.
type SpendLine struct {
	Scope    budget.Scope    `json:"scope"`
	Month    string          `json:"month"`
	SpentUSD decimal.Decimal `json:"spent_usd"`
	// ReservedUSD is what runs that were admitted under a quota and have not ended hold
	// (their caps, less what they spent).
	ReservedUSD decimal.Decimal `json:"reserved_usd"`
	// QuotaUSD is the scope's monthly quota; nil when it has none.
	QuotaUSD *decimal.Decimal `json:"quota_usd,omitempty"`
	// Exhausted is set when new runs in the scope are refused whatever their cap: spent
	// plus reserved has reached the quota.
	Exhausted bool `json:"exhausted"`
}

// LeftUSD is what the quota still admits: quota - spent - reserved, never below zero; false
// without a quota.
func (l SpendLine) LeftUSD() (decimal.Decimal, bool) {
	if l.QuotaUSD == nil {
		return decimal.Zero, false
	}
	return decimal.Max(decimal.Zero, l.QuotaUSD.Sub(l.SpentUSD).Sub(l.ReservedUSD)), true
}

// PausedType is a paused workflow type, as Client.Paused lists it.
type PausedType struct {
	Workflow string    `json:"workflow"`
	By       string    `json:"by,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	Since    time.Time `json:"since"`
}
