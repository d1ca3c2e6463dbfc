package entity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/protocol"
)

// quotaActivities talk to the monthly ledgers.
type quotaActivities struct {
	queue string
	limit QuotaLimit
}

// ledgerScopes are the ledgers a run of workflowName is charged to: overall, then the
// workflow's.
func ledgerScopes(workflowName string) []budget.Scope {
	return []budget.Scope{budget.AllScope, budget.WorkflowScope(workflowName)}
}

// ledgerStart are the start options of the ledger of scope in month on queue.
func ledgerStart(queue string, scope budget.Scope, month string) client.StartWorkflowOptions {
	id := protocol.LedgerID(queue, scope, month)
	return client.StartWorkflowOptions{
		ID: id, TaskQueue: queue, StaticSummary: "gateflow monthly spend of " + scope.Describe() + " in " + month,
	}
}

// charge adds a cost to the overall ledger and the workflow's, starting them if needed.
func (q quotaActivities) charge(ctx context.Context, ch protocol.QuotaCharge) error {
	tc := activity.GetClient(ctx)
	for _, scope := range ledgerScopes(ch.Workflow) {
		o := ledgerStart(q.queue, scope, ch.Month)
		if _, err := tc.SignalWithStartWorkflow(ctx, o.ID, protocol.LedgerCharge, ch, o,
			protocol.LedgerWorkflowType, LedgerState{Scope: scope, Month: ch.Month}); err != nil {
			return fmt.Errorf("charge %s: %w", o.ID, err)
		}
	}
	return nil
}

// check refuses a run of workflow whose monthly quota (or the overall one) is exhausted.
// Runs started before reservations existed call it; newer ones call reserve.
func (q quotaActivities) check(ctx context.Context, workflowName string) error {
	err := CheckQuotas(ctx, activity.GetClient(ctx), q.queue, q.limit, workflowName, time.Now())
	var qe *budget.QuotaError
	if errors.As(err, &qe) {
		return temporal.NewNonRetryableApplicationError(err.Error(), protocol.ErrorQuotaExhausted, err)
	}
	return err
}

// reserve admits a run not started by a Client (a schedule, another tool) under the
// worker's quotas and reserves its cap, as Client.Start does; a refusal is a non-retryable
// error of type protocol.ErrorQuotaExhausted. It reports whether anything was reserved.
func (q quotaActivities) reserve(ctx context.Context, r protocol.QuotaReserve) (bool, error) {
	scopes, err := ReserveQuotas(ctx, activity.GetClient(ctx), q.queue, q.limit, r)
	if err != nil {
		var qe *budget.QuotaError
		if errors.As(err, &qe) {
			return false, temporal.NewNonRetryableApplicationError(err.Error(), protocol.ErrorQuotaExhausted, nil, *qe)
		}
		return false, err
	}
	return len(scopes) > 0 && r.Amount.IsPositive(), nil
}

// release drops what is left of a run's reservation in the month's ledgers.
func (q quotaActivities) release(ctx context.Context, r protocol.QuotaRelease) error {
	return ReleaseQuotas(ctx, activity.GetClient(ctx), q.queue, r, ledgerScopes(r.Workflow)...)
}

// ReserveQuotas admits a run of r.Workflow under the monthly quotas of queue (limit) and
// reserves r.Amount under r.Key in the ledger of each scope that has a quota (overall, then
// the workflow's), each with the Update protocol.LedgerReserve sent with
// UpdateWithStartWorkflow, so a ledger is started if needed and each admission is atomic
// in its ledger. It returns the scopes reserved (none when no quota applies). When a ledger
// refuses, the reservations already made are released and the refusal is returned as a
// *budget.QuotaError with the ledger's figures; a refused run must not start.
func ReserveQuotas(ctx context.Context, tc client.Client, queue string, limit QuotaLimit, r protocol.QuotaReserve) ([]budget.Scope, error) {
	if limit == nil {
		return nil, nil
	}
	var done []budget.Scope
	for _, scope := range ledgerScopes(r.Workflow) {
		max, ok := limit(scope)
		if !ok {
			continue
		}
		req := r
		req.Limit = max
		if err := reserveIn(ctx, tc, queue, scope, req); err != nil {
			if len(done) > 0 {
				// Released with a fresh context: the caller's may be what failed.
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
				rerr := ReleaseQuotas(rctx, tc, queue, protocol.QuotaRelease{Key: r.Key, Workflow: r.Workflow, Month: r.Month}, done...)
				cancel()
				if rerr != nil {
					return nil, errors.Join(err, fmt.Errorf("release the reservation already made (it expires by itself): %w", rerr))
				}
			}
			return nil, err
		}
		done = append(done, scope)
	}
	return done, nil
}

// reserveIn sends one reservation to the ledger of scope.
func reserveIn(ctx context.Context, tc client.Client, queue string, scope budget.Scope, r protocol.QuotaReserve) error {
	o := ledgerStart(queue, scope, r.Month)
	o.WorkflowIDConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING
	start := tc.NewWithStartWorkflowOperation(o, protocol.LedgerWorkflowType, LedgerState{Scope: scope, Month: r.Month})
	h, err := tc.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions: client.UpdateWorkflowOptions{
			WorkflowID:   o.ID,
			UpdateID:     r.Key,
			UpdateName:   protocol.LedgerReserve,
			Args:         []any{r},
			WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	})
	if err == nil {
		err = h.Get(ctx, nil)
	}
	if err != nil {
		if qe, ok := AsQuotaError(err); ok {
			return qe
		}
		return fmt.Errorf("reserve %s in the monthly ledger of %s: %w", budget.FormatUSD(r.Amount), scope.Describe(), err)
	}
	return nil
}

// AsQuotaError finds the *budget.QuotaError in err: itself, or the details of an
// application error of type protocol.ErrorQuotaExhausted (a ledger's or an activity's
// refusal, as it crosses Temporal).
func AsQuotaError(err error) (*budget.QuotaError, bool) {
	var qe *budget.QuotaError
	if errors.As(err, &qe) {
		return qe, true
	}
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) && ae.Type() == protocol.ErrorQuotaExhausted && ae.HasDetails() {
		var d budget.QuotaError
		if derr := ae.Details(&d); derr == nil {
			return &d, true
		}
	}
	return nil, false
}

// ReleaseQuotas drops the reservation r.Key from the ledgers of scopes in r.Month with the
// signal protocol.LedgerRelease. A ledger that does not exist holds nothing to release.
func ReleaseQuotas(ctx context.Context, tc client.Client, queue string, r protocol.QuotaRelease, scopes ...budget.Scope) error {
	var errs []error
	for _, scope := range scopes {
		id := protocol.LedgerID(queue, scope, r.Month)
		if err := tc.SignalWorkflow(ctx, id, "", protocol.LedgerRelease, r); err != nil && !protocol.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("release %s in %s: %w", r.Key, id, err))
		}
	}
	return errors.Join(errs...)
}

// CheckQuotas reads the month's ledgers of queue and returns a *budget.QuotaError when the
// overall quota or workflow's is used up: spent plus what admitted runs hold reserved
// reaches it. It is the check of runs started before reservations existed; new starts
// reserve (ReserveQuotas), which is atomic where this read is not.
func CheckQuotas(ctx context.Context, tc client.Client, queue string, limit QuotaLimit, workflowName string, now time.Time) error {
	if limit == nil {
		return nil
	}
	month := budget.MonthOf(now)
	for _, scope := range ledgerScopes(workflowName) {
		max, ok := limit(scope)
		if !ok {
			continue
		}
		s, err := ReadLedger(ctx, tc, queue, scope, month)
		if err != nil {
			return err
		}
		if s.Spent.Add(s.Reserved).GreaterThanOrEqual(max) {
			return &budget.QuotaError{Scope: scope, Month: month, Limit: max, Spent: s.Spent, Reserved: s.Reserved}
		}
	}
	return nil
}

// ReadQuota is a scope's spend in a month on queue (zero when nothing was charged).
func ReadQuota(ctx context.Context, tc client.Client, queue string, scope budget.Scope, month string) (decimal.Decimal, error) {
	s, err := ReadLedger(ctx, tc, queue, scope, month)
	return s.Spent, err
}

// ReadLedger is the summary a scope's ledger of month on queue keeps in its Memo: spend and
// reservations (zero when the ledger does not exist). It needs no quota: every run's cost
// is charged to the month's ledgers.
func ReadLedger(ctx context.Context, tc client.Client, queue string, scope budget.Scope, month string) (QuotaSummary, error) {
	empty := QuotaSummary{Scope: scope, Month: month, Spent: decimal.Zero, Reserved: decimal.Zero}
	resp, err := tc.DescribeWorkflowExecution(ctx, protocol.LedgerID(queue, scope, month), "")
	if err != nil {
		if protocol.IsNotFound(err) {
			return empty, nil
		}
		return empty, fmt.Errorf("read the monthly ledger of %s: %w", scope.Describe(), err)
	}
	var s QuotaSummary
	ok, err := protocol.DecodeMemo(resp.GetWorkflowExecutionInfo().GetMemo(), protocol.MemoQuota, &s)
	if err != nil {
		return empty, fmt.Errorf("read the monthly ledger of %s: %w", scope.Describe(), err)
	}
	if !ok {
		return empty, nil
	}
	return s, nil
}
