package entity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/protocol"
)

// LedgerState is the monthly ledger workflow's input and state across continue-as-new.
type LedgerState struct {
	Scope budget.Scope  `json:"scope"`
	Month string        `json:"month"`
	Quota *budget.Quota `json:"quota,omitempty"`
}

// QuotaSummary is what a monthly ledger shows in its Memo (protocol.MemoQuota).
type QuotaSummary struct {
	Scope   budget.Scope    `json:"scope"`
	Month   string          `json:"month"`
	Spent   decimal.Decimal `json:"spent"`
	Charges int             `json:"charges"`
}

const ledgerMaxCharges = 1000

// ledgerWorkflow keeps one scope's spend in one month, idempotent by charge key.
func ledgerWorkflow(ctx workflow.Context, in LedgerState) error {
	q := in.Quota
	if q == nil {
		q = budget.NewQuota(in.Scope, in.Month)
	}
	ch := workflow.GetSignalChannel(ctx, protocol.LedgerCharge)
	for n := 0; ; n++ {
		if n >= ledgerMaxCharges || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			if ch.Len() == 0 {
				return workflow.NewContinueAsNewError(ctx, protocol.LedgerWorkflowType, LedgerState{Scope: in.Scope, Month: in.Month, Quota: q})
			}
		}
		var c protocol.QuotaCharge
		ch.Receive(ctx, &c)
		if q.Charge(c.Key, c.Amount) {
			if err := workflow.UpsertMemo(ctx, map[string]any{protocol.MemoQuota: QuotaSummary{
				Scope: q.Scope, Month: q.Month, Spent: q.Spent, Charges: len(q.Charges),
			}}); err != nil {
				return err
			}
		}
	}
}

// quotaActivities talk to the monthly ledgers.
type quotaActivities struct {
	queue string
	limit QuotaLimit
}

// charge adds a cost to the overall ledger and the workflow's, starting them if needed.
func (q quotaActivities) charge(ctx context.Context, ch protocol.QuotaCharge) error {
	tc := activity.GetClient(ctx)
	for _, scope := range []budget.Scope{budget.AllScope, budget.WorkflowScope(ch.Workflow)} {
		id := protocol.LedgerID(q.queue, scope, ch.Month)
		if _, err := tc.SignalWithStartWorkflow(ctx, id, protocol.LedgerCharge, ch, client.StartWorkflowOptions{
			ID: id, TaskQueue: q.queue, StaticSummary: "gateflow monthly spend of " + scope.Describe() + " in " + ch.Month,
		}, protocol.LedgerWorkflowType, LedgerState{Scope: scope, Month: ch.Month}); err != nil {
			return fmt.Errorf("charge %s: %w", id, err)
		}
	}
	return nil
}

// check refuses a run of workflow whose monthly quota (or the overall one) is exhausted.
func (q quotaActivities) check(ctx context.Context, workflowName string) error {
	err := CheckQuotas(ctx, activity.GetClient(ctx), q.queue, q.limit, workflowName, time.Now())
	var qe *budget.QuotaError
	if errors.As(err, &qe) {
		return temporal.NewNonRetryableApplicationError(err.Error(), protocol.ErrorQuotaExhausted, err)
	}
	return err
}

// CheckQuotas reads the month's ledgers of queue and returns a *budget.QuotaError when the
// overall quota or workflow's is exhausted.
func CheckQuotas(ctx context.Context, tc client.Client, queue string, limit QuotaLimit, workflowName string, now time.Time) error {
	if limit == nil {
		return nil
	}
	month := budget.MonthOf(now)
	for _, scope := range []budget.Scope{budget.AllScope, budget.WorkflowScope(workflowName)} {
		max, ok := limit(scope)
		if !ok {
			continue
		}
		spent, err := ReadQuota(ctx, tc, queue, scope, month)
		if err != nil {
			return err
		}
		if spent.GreaterThanOrEqual(max) {
			return &budget.QuotaError{Scope: scope, Month: month, Limit: max, Spent: spent}
		}
	}
	return nil
}

// ReadQuota is a scope's spend in a month on queue (zero when nothing was charged).
func ReadQuota(ctx context.Context, tc client.Client, queue string, scope budget.Scope, month string) (decimal.Decimal, error) {
	resp, err := tc.DescribeWorkflowExecution(ctx, protocol.LedgerID(queue, scope, month), "")
	if err != nil {
		if protocol.IsNotFound(err) {
			return decimal.Zero, nil
		}
		return decimal.Zero, fmt.Errorf("read the monthly ledger of %s: %w", scope.Describe(), err)
	}
	var s QuotaSummary
	if ok, err := protocol.DecodeMemo(resp.GetWorkflowExecutionInfo().GetMemo(), protocol.MemoQuota, &s); err != nil || !ok {
		return decimal.Zero, err
	}
	return s.Spent, nil
}
