package protocol

import "github.com/gateflow/gateflow/signals"

// Messages people and tools send to a run (re-exported by flow/protocol.go).
const (
	// UpdateApproval is the Update that carries a vote (approval.Vote).
	UpdateApproval = "gateflow.approval"
	// SignalApproval carries the same vote as a Signal.
	SignalApproval = "gateflow.approval"
	// UpdateInput answers a human input request (InputAnswer).
	UpdateInput = signals.InputUpdateName
	// SignalName carries a signals.Envelope to a run.
	SignalName = signals.SignalName
	// UpdateBudget raises a run's money cap (BudgetRaise).
	UpdateBudget = "gateflow.budget"
	// UpdatePause pauses or resumes one run (RunPause).
	UpdatePause = "gateflow.pause"
	// UpdateCancel cancels one run (RunCancel); unlike Temporal's own cancellation request
	// the run sees who asks, so it can verify and authorise it (the same name as
	// SignalCancel, the note older clients send with Temporal's request).
	UpdateCancel = "gateflow.cancel"
	// QueryState answers a run's state (runs.State).
	QueryState = "gateflow.state"
	// QueryMayDecide answers the open gates a person (the argument) may decide and has not
	// voted on ([]string).
	QueryMayDecide = "gateflow.may-decide"
	// QueryMailboxKept answers the signals a mailbox keeps ([]signals.Envelope).
	QueryMailboxKept = "gateflow.mailbox.kept"
	// MemoState is the Memo key of a closed run's final state (runs.State).
	MemoState = "gateflow.state"
)

// Messages between a run, its parent, its client and the entities.
const (
	// MemoOptions is the Memo key under which a client passes a run's RunOptions.
	MemoOptions = "gateflow.options"
	// MemoParent is the Memo key a parent gives its child (ParentInfo).
	MemoParent = "gateflow.parent"
	// SignalChildReport carries a child's report to its parent when the child ends.
	SignalChildReport = "gateflow.child"
	// SignalCancel carries who cancels a run and why (CancelReason), just before the
	// cancellation itself.
	SignalCancel = "gateflow.cancel"
	// SignalResume tells a held run its workflow type was resumed.
	SignalResume = "gateflow.resume"
	// SignalPermit grants a run its permit of a concurrency group (the group's name).
	SignalPermit = "gateflow.permit"
	// EventActivity delivers a run event to the worker's event sinks.
	EventActivity = "gateflow.event"
	// EventBatchActivity delivers the events of one workflow task, in order, to the
	// worker's event sinks (a local activity; runs from gateflow.events version 2 on).
	EventBatchActivity = "gateflow.events"
	// ItemsActivity lists a fan-out's items with the worker's item provider (ItemsRequest).
	ItemsActivity = "gateflow.items"
	// GatePollActivity polls a gate with the worker's resolver of its type (gates.Params).
	GatePollActivity = "gateflow.gate.poll"
)

// The catalog entity: one per task queue, holding what its workers serve in its Memo.
const (
	CatalogWorkflowType = "gateflow.catalog"
	// CatalogPublishSignal carries a worker's entries to the catalog.
	CatalogPublishSignal = "gateflow.catalog.publish"
	// MemoCatalog is the Memo key of the catalog (CatalogState).
	MemoCatalog = "gateflow.catalog"
)

// The control entity: one per task queue, holding the paused workflow types.
const (
	ControlWorkflowType = "gateflow.control"
	// MemoPaused is the Memo key of the paused types ([]PausedType).
	MemoPaused = "gateflow.paused"
	// ControlPause, ControlResume and ControlHold are the control entity's signals
	// (ControlMessage).
	ControlPause  = "pause"
	ControlResume = "resume"
	ControlHold   = "hold"
	// ControlHoldActivity asks the control entity to hold a run.
	ControlHoldActivity = "gateflow.control.hold"
)

// The semaphore entity: one per concurrency group and task queue.
const (
	SemaphoreWorkflowType = "gateflow.semaphore"
	// MemoSemaphore is the Memo key of a semaphore's SemaphoreState.
	MemoSemaphore = "gateflow.semaphore"
	// SemaphoreAcquire and SemaphoreRelease are the semaphore's signals (SemaphoreMessage).
	SemaphoreAcquire = "acquire"
	SemaphoreRelease = "release"
	// SemaphoreClaim is the semaphore's Update claiming the permit of an exclusive group for
	// a run about to start (SemaphoreMessage; answers entity.ClaimResult).
	SemaphoreClaim = "gateflow.semaphore.claim"
	// SemaphoreSignalActivity signals (and starts) a semaphore; SemaphoreCheckActivity
	// returns the holders whose runs have closed.
	SemaphoreSignalActivity = "gateflow.semaphore.signal"
	SemaphoreCheckActivity  = "gateflow.semaphore.check"
)

// The mailbox entity: one per signal name, key and task queue.
const (
	MailboxWorkflowType = "gateflow.mailbox"
	// MailboxSubscribeActivity and MailboxUnsubscribeActivity (un)subscribe a run
	// (MailboxRequest).
	MailboxSubscribeActivity   = "gateflow.mailbox.subscribe"
	MailboxUnsubscribeActivity = "gateflow.mailbox.unsubscribe"
	// MailboxPostActivity posts a signals.Envelope a run sends (flow.Context.Send) to its mailbox.
	MailboxPostActivity = "gateflow.mailbox.post"
	// MailboxPost, MailboxSubscribe and MailboxUnsubscribe are the mailbox's signals.
	MailboxPost        = "post"
	MailboxSubscribe   = "subscribe"
	MailboxUnsubscribe = "unsubscribe"
)

// The fan-out runner: one per large ForEachChild, holding its bookkeeping across
// continue-as-new.
const FanoutWorkflowType = "gateflow.fanout"

// The ledger entity: one per budget scope, month and task queue.
const (
	LedgerWorkflowType = "gateflow.ledger"
	// MemoQuota is the Memo key of a ledger's QuotaSummary.
	MemoQuota = "gateflow.quota"
	// LedgerCharge is the ledger's signal (QuotaCharge).
	LedgerCharge = "charge"
	// LedgerRelease is the ledger's signal that drops a run's reservation (QuotaRelease).
	LedgerRelease = "release"
	// LedgerReserve is the ledger's Update (QuotaReserve) that admits a run and reserves its
	// possible cost, refusing (type ErrorQuotaExhausted) when it does not fit the quota.
	LedgerReserve = "gateflow.ledger.reserve"
	// LedgerQuery is the ledger's Query: its budget.Quota (spend, charges, reservations).
	LedgerQuery = "gateflow.ledger.state"
	// QuotaChargeActivity charges a step's cost to the monthly ledgers; QuotaCheckActivity
	// checks the monthly quotas of a run not started by a Client (runs started before
	// reservations existed); QuotaReserveActivity reserves such a run's cap;
	// QuotaReleaseActivity releases what is left of a run's reservation when it ends.
	QuotaChargeActivity  = "gateflow.quota.charge"
	QuotaCheckActivity   = "gateflow.quota.check"
	QuotaReserveActivity = "gateflow.quota.reserve"
	QuotaReleaseActivity = "gateflow.quota.release"
)

// Application error types a run (or an activity of gateflow's) fails with. Callers branch
// on them through temporal.ApplicationError.Type; flow re-exports them as ErrorType values.
const (
	ErrorBudgetExceeded  = "gateflow.BudgetExceeded"
	ErrorRejected        = "gateflow.Rejected"
	ErrorQuotaExhausted  = "gateflow.QuotaExhausted"
	ErrorVersionMismatch = "gateflow.Version"
)
