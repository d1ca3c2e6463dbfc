package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/converter"

	"github.com/gateflow/gateflow/budget"
)

// RunOptions are the start options a client passes to a run in its Memo (MemoOptions).
type RunOptions struct {
	MaxCostUSD   string        `json:"max_cost_usd,omitempty"`
	BudgetPolicy budget.Policy `json:"budget_policy,omitempty"`
	BudgetPause  time.Duration `json:"budget_pause,omitempty"`
	// QuotaChecked is set by Client.Start, which admits runs under the monthly quotas (and
	// reserves their cap); runs started otherwise (schedules, other tools) reserve it
	// themselves before any step.
	QuotaChecked bool `json:"quota_checked,omitempty"`
	// MaxAttempts overrides the flow's run attempts; Labels are the run's labels.
	MaxAttempts int               `json:"max_attempts,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	// Plan runs the handler with every step stubbed: nothing runs, people are assumed to
	// agree, and the state lists the steps that would run.
	Plan bool `json:"plan,omitempty"`
	// Paused: the run's type was paused when it started; it waits in pending until resumed.
	Paused bool `json:"paused,omitempty"`
	// Concurrency are the run's concurrency groups and their limits.
	Concurrency map[string]int `json:"concurrency,omitempty"`
	// Reservation is what Client.Start reserved against the monthly quotas for the run;
	// the run's charges draw on it and the run releases the rest when it ends.
	Reservation *RunReservation `json:"reservation,omitempty"`
	// Guards tighten the run's guards (core.StartOptions.Guards): each limit set applies
	// where it is stricter than the one in force.
	Guards *GuardLimits `json:"guards,omitempty"`
}

// GuardLimits are the guards of a start (flow.Guards' fields; 0 is not set).
type GuardLimits struct {
	MaxChildDepth int           `json:"max_child_depth,omitempty"`
	MaxFanOut     int           `json:"max_fan_out,omitempty"`
	MaxTokens     int64         `json:"max_tokens,omitempty"`
	MaxWallTime   time.Duration `json:"max_wall_time,omitempty"`
	MaxSteps      int           `json:"max_steps,omitempty"`
}

// RunReservation names a run's reservation in the monthly ledgers of Month.
type RunReservation struct {
	Key    string          `json:"key"`
	Month  string          `json:"month"`
	Amount decimal.Decimal `json:"amount"`
}

// CancelReason is the payload of SignalCancel.
type CancelReason struct {
	By     string `json:"by"`
	Reason string `json:"reason"`
}

// QuotaCharge is one cost for the monthly ledgers (LedgerCharge, QuotaChargeActivity).
// Reservation, when set, names the run's reservation the charge draws on.
type QuotaCharge struct {
	Key         string          `json:"key"`
	Amount      decimal.Decimal `json:"amount"`
	Workflow    string          `json:"workflow"`
	Month       string          `json:"month"`
	Reservation string          `json:"reservation,omitempty"`
}

// QuotaReserve asks the monthly ledgers of Workflow in Month to admit a run and reserve
// Amount under Key (LedgerReserve, QuotaReserveActivity). Limit is the quota of the ledger
// it is sent to (filled per ledger); TTL is how long the ledger keeps the reservation if
// the run never releases it (0: budget.DefaultReservationTTL).
type QuotaReserve struct {
	Key      string          `json:"key"`
	Workflow string          `json:"workflow"`
	Month    string          `json:"month"`
	Amount   decimal.Decimal `json:"amount"`
	Limit    decimal.Decimal `json:"limit"`
	TTL      time.Duration   `json:"ttl,omitempty"`
}

// QuotaRelease drops the reservation Key from the monthly ledgers of Workflow in Month
// (LedgerRelease, QuotaReleaseActivity).
type QuotaRelease struct {
	Key      string `json:"key"`
	Workflow string `json:"workflow"`
	Month    string `json:"month"`
}

// MailboxRequest asks the mailbox of (Name, Key) to add or drop a subscriber run.
type MailboxRequest struct {
	Name       string    `json:"name"`
	Key        string    `json:"key"`
	WorkflowID string    `json:"workflow_id"`
	Since      time.Time `json:"since"`
}

// ControlMessage is a signal to the control entity: pause or resume a workflow type, or
// hold a run until its type is resumed. RunID is the held run's workflow ID (the control
// entity signals it by that ID).
type ControlMessage struct {
	Workflow string `json:"workflow"`
	By       string `json:"by,omitempty"`
	Reason   string `json:"reason,omitempty"`
	RunID    string `json:"run_id,omitempty"`
}

// PausedType is a paused workflow type as the control entity keeps it in its Memo.
type PausedType struct {
	Workflow string    `json:"workflow"`
	By       string    `json:"by,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	Since    time.Time `json:"since"`
}

// SemaphoreMessage asks a semaphore for a permit of Group for Run, or gives it back.
type SemaphoreMessage struct {
	Group string `json:"group"`
	Run   string `json:"run"`
	Limit int    `json:"limit"`
}

// DecodeMemo decodes the Memo field key into v; it reports false when there is none.
func DecodeMemo(m *commonpb.Memo, key string, v any) (bool, error) {
	p, ok := m.GetFields()[key]
	if !ok {
		return false, nil
	}
	if err := converter.GetDefaultDataConverter().FromPayload(p, v); err != nil {
		return false, fmt.Errorf("decode memo %s: %w", key, err)
	}
	return true, nil
}

// IsNotFound reports whether err is the server's NotFound.
func IsNotFound(err error) bool {
	var nf *serviceerror.NotFound
	return errors.As(err, &nf)
}

// IsOpen reports whether Temporal still runs the execution (running, or paused).
func IsOpen(s enumspb.WorkflowExecutionStatus) bool {
	return s == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING || s == enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED
}

// InputAnswer is the argument of the Update UpdateInput.
type InputAnswer struct {
	Name string          `json:"name"`
	Data json.RawMessage `json:"data"`
	By   string          `json:"by"`
	// Proof is the answerer's signed decision or identity provider token (package auth).
	Proof string `json:"proof,omitempty"`
}

// BudgetRaise is the argument of the Update UpdateBudget: the new cap in dollars.
type BudgetRaise struct {
	To string `json:"to"`
	By string `json:"by"`
	// Proof is the raiser's signed decision or identity provider token (package auth).
	Proof string `json:"proof,omitempty"`
}

// RunPause is the argument of the Update UpdatePause: Action is ControlPause or
// ControlResume; Reason (for a pause) says why.
type RunPause struct {
	Action string `json:"action"`
	By     string `json:"by"`
	Reason string `json:"reason,omitempty"`
	// Proof is the sender's signed decision or identity provider token (package auth).
	Proof string `json:"proof,omitempty"`
}

// RunCancel is the payload of UpdateCancel.
type RunCancel struct {
	By     string `json:"by"`
	Reason string `json:"reason,omitempty"`
	// Proof is the sender's signed decision or identity provider token (package auth).
	Proof string `json:"proof,omitempty"`
}

// ItemsRequest asks ItemsActivity for the items of Provider in Scope matching Filter.
type ItemsRequest struct {
	Provider string            `json:"provider"`
	Scope    string            `json:"scope,omitempty"`
	Filter   map[string]string `json:"filter,omitempty"`
}
