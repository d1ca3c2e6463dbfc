// Package budget owns gateflow's money rules: USD amounts, a run's cap and where it came
// from, the per-run ledger that reserves and charges step costs against that cap, and the
// monthly quotas kept per workflow type and overall. It is pure, deterministic logic with no
// Temporal import and no clock (every time is passed in), so workflow code may call it
// directly and replays see the same answers; every state it keeps is plain JSON, so it can
// live in workflow state, queries and entity-workflow memos.
//
// Money is decimal.Decimal everywhere and is serialised as a decimal string, never a float:
// 0.1 + 0.2 is exactly 0.3 here and stays so through JSON. ParseUSD reads amounts from people
// and configuration ("2", "2.00", "$2.50"), FormatUSD prints them ("$2.50", "$0.0154"), and
// Float64 is the one way out to a float, for Temporal search attributes (which filter; the
// exact value lives in state or memo).
//
// A run's cap resolves with ResolveCap: the start option, else the flow's default, else the
// worker's default, else no cap. Cap.Source says which one won. Policy says what crossing
// the cap does: Stop ends the run as budget_exceeded, Pause waits in budget_paused until the
// cap is raised (Ledger.Raise).
//
// A Ledger is one run's account:
//
//   - Before a cost-bearing step, Reserve sets the step's own limit aside. It is refused with
//     an *ExceededError when Spent + Reserved + the limit would be above the cap; reaching
//     the cap exactly is allowed. Without a cap nothing is ever refused. ReserveAll does the
//     same for a parallel wave, all or nothing.
//   - After the step, Settle releases the reservation and charges the real cost, which may
//     be more than the limit (the overshoot is recorded on the Charge). Charge records a cost
//     with no reservation: a child's rolled-up spend, a failed call's partial cost.
//   - Charges are idempotent by key: a second charge with a key already charged changes
//     nothing and is listed in Ledger.Ignored. Keys name one try of one step ("review",
//     "review#2"), and a refusal message uses the key as the step's name.
//   - Settle and Charge return the warning thresholds the charge crossed (80% of the cap by
//     default, each once per cap) and an *ExceededError when the spend is now strictly above
//     the cap. The ledger only reports: stopping, pausing and events are the caller's job.
//   - ChildCap is the cap a child run gets: what is left of this one. The child's spend comes
//     back as a Charge.
//
// Monthly quotas live in a ledger entity workflow per scope (AllScope, or WorkflowScope of a
// workflow type) and UTC month (MonthOf); LedgerID names it. Its state is a Quota, whose
// charges are idempotent by key (ChargeKey: run and step), so a retried activity or a
// replayed signal is counted once. A Quota also holds reservations: Reserve admits a run
// only when Spent + Reserved + its cap fits the limit (a run without a cap while Spent +
// Reserved is below it) and sets the cap aside; ChargeReserved moves a charge from the run's
// reservation to Spent; Release and Expire (past DefaultReservationTTL, or the run's own
// deadline) drop it. A refusal is a *QuotaError with both figures; runs already going are
// never stopped by a quota.
//
// Errors callers branch on are typed and match sentinels with errors.Is: *ExceededError
// (ErrExceeded), *QuotaError (ErrQuotaExhausted), *AmountError (ErrInvalidAmount), *KeyError
// (ErrDuplicateKey) and *RaiseError (ErrInvalidRaise).
package budget
