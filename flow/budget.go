package flow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/searchattr"
)

// Names used for budgets.
const (
	// MemoOptions is the Memo key under which a client passes a run's start options
	// (RunOptions) to the run wrapper.
	MemoOptions = "gateflow.options"
	// UpdateBudget raises a run's cap: {to: "5.00", by}. Its Validator refuses a cap that
	// is not above the current one, or below what is spent and reserved.
	UpdateBudget = "gateflow.budget"
	// LedgerWorkflowType is the entity workflow that keeps one scope's monthly spend.
	LedgerWorkflowType = "gateflow.ledger"
	// MemoQuota is the Memo key under which a ledger keeps its QuotaSummary.
	MemoQuota = "gateflow.quota"
	// QuotaChargeActivity charges a step's cost to the monthly ledgers.
	QuotaChargeActivity = "gateflow.quota.charge"
	// QuotaCheckActivity checks the monthly quotas of a run not started by a Client.
	QuotaCheckActivity = "gateflow.quota.check"
	ledgerCharge       = "charge"
)

// DefaultBudgetPause is how long a run with the pause policy waits for a higher cap.
const DefaultBudgetPause = 24 * time.Hour

// RunOptions are the start options a run reads from its Memo.
type RunOptions struct {
	MaxCostUSD   string        `json:"max_cost_usd,omitempty"`
	BudgetPolicy budget.Policy `json:"budget_policy,omitempty"`
	BudgetPause  time.Duration `json:"budget_pause,omitempty"`
	// QuotaChecked is set by Client.Start, which refuses runs whose quota is exhausted;
	// runs started otherwise (schedules, other tools) check it themselves before any step.
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
}

// Quotas are monthly spending limits (UTC months) a worker enforces on new runs: overall,
// and per workflow. Runs already going are never stopped by a quota.
type Quotas struct {
	MonthlyUSD  *decimal.Decimal
	PerWorkflow map[string]decimal.Decimal
}

// any reports whether a quota is configured.
func (q Quotas) any() bool { return q.MonthlyUSD != nil || len(q.PerWorkflow) > 0 }

func (q Quotas) limitFor(scope budget.Scope) (decimal.Decimal, bool) {
	if scope == budget.AllScope {
		if q.MonthlyUSD != nil {
			return *q.MonthlyUSD, true
		}
		return decimal.Zero, false
	}
	name, _ := scope.Workflow()
	d, ok := q.PerWorkflow[name]
	return d, ok
}

// BudgetRaise is the argument of the Update gateflow.budget.
type BudgetRaise struct {
	To string `json:"to"`
	By string `json:"by"`
}

func readOptions(wctx workflow.Context) RunOptions {
	var o RunOptions
	p, ok := workflow.GetInfo(wctx).Memo.GetFields()[MemoOptions]
	if ok {
		_ = converter.GetDefaultDataConverter().FromPayload(p, &o)
	}
	return o
}

// setupBudget resolves the run's cap and policy and registers the raise Update.
func (rt *runner) setupBudget(wctx workflow.Context, cfg runConfig, opts RunOptions) error {
	var start, flowCap *decimal.Decimal
	if d, err := budget.ParseUSD(opts.MaxCostUSD); err == nil && opts.MaxCostUSD != "" {
		start = &d
	}
	if d, err := budget.ParseUSD(rt.info.MaxCostUSD); err == nil && rt.info.MaxCostUSD != "" {
		flowCap = &d
	}
	c := budget.ResolveCap(start, flowCap, cfg.maxCost)
	if rt.parent != nil && rt.parent.CapUSD != "" {
		if d, err := budget.ParseUSD(rt.parent.CapUSD); err == nil && (!c.Set || d.LessThan(c.Amount)) {
			c = budget.Cap{Amount: d, Set: true, Source: budget.Source("parent")}
		}
	}
	rt.ledger = budget.NewLedger(c)
	rt.quotasOn = cfg.quotas.any()
	rt.state.Budget = rt.ledger
	rt.policy = rt.info.BudgetPolicy
	if opts.BudgetPolicy != "" {
		rt.policy = opts.BudgetPolicy
	}
	rt.pause = DefaultBudgetPause
	if rt.info.BudgetPause > 0 {
		rt.pause = rt.info.BudgetPause
	}
	if opts.BudgetPause > 0 {
		rt.pause = opts.BudgetPause
	}
	if c.Set {
		f, _ := c.Amount.Float64()
		rt.pendingSA = append(rt.pendingSA, searchattr.MaxCostKey.ValueSet(f))
	}
	return workflow.SetUpdateHandlerWithOptions(wctx, UpdateBudget,
		func(ctx workflow.Context, r BudgetRaise) (budget.Cap, error) {
			to, err := budget.ParseUSD(r.To)
			if err != nil {
				return budget.Cap{}, err
			}
			if err := rt.ledger.Raise(to); err != nil {
				return budget.Cap{}, err
			}
			rt.capVersion++
			f, _ := to.Float64()
			_ = workflow.UpsertTypedSearchAttributes(ctx, searchattr.MaxCostKey.ValueSet(f))
			rt.publish()
			return rt.ledger.Cap, nil
		},
		workflow.UpdateHandlerOptions{
			Validator: func(ctx workflow.Context, r BudgetRaise) error {
				to, err := budget.ParseUSD(r.To)
				if err != nil {
					return err
				}
				probe := *rt.ledger
				return probe.Raise(to)
			},
			Description: "Raise the run's money cap: {to: \"5.00\", by}",
		})
}

// reserve sets money aside for a cost-bearing step before it is dispatched. When the cap
// does not allow it, the pause policy waits for a higher cap; otherwise (or when the wait
// ends) it returns the *budget.ExceededError and the run will end budget_exceeded.
func (c *Context) reserve(items []budget.Item) error {
	rt := c.run
	for {
		err := rt.ledger.ReserveAll(items)
		if err == nil || !errors.Is(err, budget.ErrExceeded) {
			return err
		}
		if !c.pauseForBudget(err) {
			rt.budgetErr = err
			rt.emit(c.wctx, EventBudgetExceeded, "", "", err.Error(), nil)
			return err
		}
	}
}

// settle charges a finished step's cost (against its reservation, if it had one) and
// reports a crossing of the cap the same way reserve does.
func (c *Context) settleCost(key, step string, reserved bool, cost decimal.Decimal) error {
	rt := c.run
	now := workflow.Now(c.wctx)
	var warnings []budget.Warning
	var exceeded *budget.ExceededError
	if r, ok := rt.ledger.Reservation(key); ok && reserved {
		warnings, exceeded = rt.ledger.Settle(r, cost, step, now)
	} else if cost.IsPositive() {
		warnings, exceeded = rt.ledger.Charge(key, step, cost, now)
	}
	for _, w := range warnings {
		c.Logger().Warn("budget warning", "warning", w.String())
		rt.emit(c.wctx, EventBudgetWarning, step, "", w.String(), map[string]any{"spent_usd": w.Spent.String(), "cap_usd": w.Cap.String()})
	}
	if cost.IsPositive() {
		c.setStatus(rt.state.Status) // FlowCostUSD
	}
	for exceeded != nil {
		if !c.pauseForBudget(exceeded) {
			rt.budgetErr = exceeded
			rt.emit(c.wctx, EventBudgetExceeded, step, "", exceeded.Error(), nil)
			return exceeded
		}
		if !rt.ledger.Over() {
			return nil
		}
	}
	return nil
}

// pauseForBudget waits, with the pause policy, for someone to raise the cap; it reports
// whether the cap was raised.
func (c *Context) pauseForBudget(cause error) bool {
	rt := c.run
	if rt.policy != budget.Pause {
		return false
	}
	version := rt.capVersion
	c.wait("budget", StatusBudgetPaused)
	c.Logger().Warn("budget paused", "reason", cause.Error())
	raised, err := c.await(rt.pause, "budget paused: "+cause.Error(), func() bool { return rt.capVersion != version })
	c.unwait("budget")
	return err == nil && raised
}

// chargeQuota adds a step's cost to the monthly ledgers (overall and the workflow's). The
// charge is keyed by run and step, so a retried activity or a replay counts it once.
func (c *Context) chargeQuota(stepKey string, cost decimal.Decimal) {
	if !cost.IsPositive() || !c.run.quotasOn {
		return
	}
	// Money spent is charged even when the step's context was cancelled (fail-fast).
	dctx, _ := workflow.NewDisconnectedContext(c.wctx)
	actx := workflow.WithActivityOptions(dctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		Summary:             "monthly spend " + budget.FormatUSD(cost),
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 10},
	})
	ch := QuotaCharge{
		// Keyed by the Temporal run ID (unique, without "/"), not the reusable workflow ID.
		Key: budget.ChargeKey(workflow.GetInfo(c.wctx).WorkflowExecution.RunID, stepKey), Amount: cost, Workflow: c.run.info.Name,
		Month: budget.MonthOf(workflow.Now(c.wctx)),
	}
	if err := workflow.ExecuteActivity(actx, QuotaChargeActivity, ch).Get(dctx, nil); err != nil {
		c.Logger().Error("charge the monthly ledgers", "key", ch.Key, "error", err)
	}
}

// QuotaCharge is one cost for the monthly ledgers.
type QuotaCharge struct {
	Key      string          `json:"key"`
	Amount   decimal.Decimal `json:"amount"`
	Workflow string          `json:"workflow"`
	Month    string          `json:"month"`
}

// QuotaSummary is what a monthly ledger shows in its Memo.
type QuotaSummary struct {
	Scope   budget.Scope    `json:"scope"`
	Month   string          `json:"month"`
	Spent   decimal.Decimal `json:"spent"`
	Charges int             `json:"charges"`
}

// quotaActivities talk to the monthly ledgers.
type quotaActivities struct {
	queue  string
	quotas Quotas
}

func (q quotaActivities) charge(ctx context.Context, ch QuotaCharge) error {
	tc := activity.GetClient(ctx)
	for _, scope := range []budget.Scope{budget.AllScope, budget.WorkflowScope(ch.Workflow)} {
		id := LedgerWorkflowID(q.queue, scope, ch.Month)
		if _, err := tc.SignalWithStartWorkflow(ctx, id, ledgerCharge, ch, client.StartWorkflowOptions{
			ID: id, TaskQueue: q.queue, StaticSummary: "gateflow monthly spend of " + scope.Describe() + " in " + ch.Month,
		}, LedgerWorkflowType, LedgerState{Scope: scope, Month: ch.Month}); err != nil {
			return fmt.Errorf("charge %s: %w", id, err)
		}
	}
	return nil
}

// check refuses a run of workflow whose monthly quota (or the overall one) is exhausted.
func (q quotaActivities) check(ctx context.Context, workflowName string) error {
	err := checkQuotas(ctx, activity.GetClient(ctx), q.queue, q.quotas, workflowName, time.Now())
	var qe *budget.QuotaError
	if errors.As(err, &qe) {
		return temporal.NewNonRetryableApplicationError(err.Error(), "gateflow.QuotaExhausted", err)
	}
	return err
}

// checkQuotas reads the month's ledgers and returns a *budget.QuotaError when a quota is
// exhausted.
func checkQuotas(ctx context.Context, tc client.Client, queue string, quotas Quotas, workflowName string, now time.Time) error {
	month := budget.MonthOf(now)
	for _, scope := range []budget.Scope{budget.AllScope, budget.WorkflowScope(workflowName)} {
		limit, ok := quotas.limitFor(scope)
		if !ok {
			continue
		}
		spent, err := readQuota(ctx, tc, queue, scope, month)
		if err != nil {
			return err
		}
		if spent.GreaterThanOrEqual(limit) {
			return &budget.QuotaError{Scope: scope, Month: month, Limit: limit, Spent: spent}
		}
	}
	return nil
}

// readQuota is a scope's spend in a month (zero when nothing was charged).
func readQuota(ctx context.Context, tc client.Client, queue string, scope budget.Scope, month string) (decimal.Decimal, error) {
	resp, err := tc.DescribeWorkflowExecution(ctx, LedgerWorkflowID(queue, scope, month), "")
	if err != nil {
		if isNotFound(err) {
			return decimal.Zero, nil
		}
		return decimal.Zero, fmt.Errorf("read the monthly ledger of %s: %w", scope.Describe(), err)
	}
	var s QuotaSummary
	if ok, err := decodeMemo(resp.GetWorkflowExecutionInfo().GetMemo(), MemoQuota, &s); err != nil || !ok {
		return decimal.Zero, err
	}
	return s.Spent, nil
}

// LedgerWorkflowID is the ID of the monthly ledger of scope on a task queue: the workers of
// a queue keep their own ledgers, so a ledger is always served by its queue's workers.
func LedgerWorkflowID(queue string, scope budget.Scope, month string) string {
	return budget.LedgerID(scope, month) + "@" + queue
}

// LedgerState is the monthly ledger workflow's input and state across continue-as-new.
type LedgerState struct {
	Scope budget.Scope  `json:"scope"`
	Month string        `json:"month"`
	Quota *budget.Quota `json:"quota,omitempty"`
}

const ledgerMaxCharges = 1000

// ledgerWorkflow keeps one scope's spend in one month, idempotent by charge key.
func ledgerWorkflow(ctx workflow.Context, in LedgerState) error {
	q := in.Quota
	if q == nil {
		q = budget.NewQuota(in.Scope, in.Month)
	}
	ch := workflow.GetSignalChannel(ctx, ledgerCharge)
	for n := 0; ; n++ {
		if n >= ledgerMaxCharges || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			if ch.Len() == 0 {
				return workflow.NewContinueAsNewError(ctx, LedgerWorkflowType, LedgerState{Scope: in.Scope, Month: in.Month, Quota: q})
			}
		}
		var c QuotaCharge
		ch.Receive(ctx, &c)
		if q.Charge(c.Key, c.Amount) {
			if err := workflow.UpsertMemo(ctx, map[string]any{MemoQuota: QuotaSummary{
				Scope: q.Scope, Month: q.Month, Spent: q.Spent, Charges: len(q.Charges),
			}}); err != nil {
				return err
			}
		}
	}
}

func isNotFound(err error) bool {
	var nf *serviceerror.NotFound
	return errors.As(err, &nf)
}
