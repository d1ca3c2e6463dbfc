package flow

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gateflow/gateflow/auth"
	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/events"
	"github.com/gateflow/gateflow/internal/decisions"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/searchattr"
	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// budgetPart is the run's money: the cap and its ledger (spend, reservations), what the
// run does when the cap would be exceeded, and the monthly quotas. err, once set, ends the
// run as budget_exceeded whatever the handler does with it.
type budgetPart struct {
	rt     *runner
	ledger *budget.Ledger
	policy budget.Policy
	pause  time.Duration
	err    error
	// capVersion counts raises, so a paused step sees a new cap.
	capVersion int
	// quotasOn: the worker has monthly quotas. Costs were charged to the monthly ledgers
	// only then before spendAlwaysVersion; now they always are.
	quotasOn bool
	// spendAlways is the run's spendAlwaysVersion, read at its first positive cost
	// (spendKnown).
	spendAlways workflow.Version
	spendKnown  bool
	// reservation is the run's reservation in the monthly ledgers (made by flowclient.Client.Start, or
	// by the run itself at its start): its charges draw on it and the run releases the rest
	// when it ends. nil when nothing is reserved.
	reservation *protocol.RunReservation
	// waves counts Parallel calls per group name, for unique reservation keys.
	waves map[string]int
}

// readOptions reads the start options a client put in the run's Memo; none is no error.
func readOptions(wctx workflow.Context) (protocol.RunOptions, error) {
	var o protocol.RunOptions
	p, ok := workflow.GetInfo(wctx).Memo.GetFields()[protocol.MemoOptions]
	if !ok {
		return o, nil
	}
	if err := converter.GetDefaultDataConverter().FromPayload(p, &o); err != nil {
		return protocol.RunOptions{}, fmt.Errorf("the start options in memo %s cannot be read: %w", protocol.MemoOptions, err)
	}
	return o, nil
}

// newBudgetPart resolves the run's cap (start option, then the flow's, then the worker's,
// never above a parent's remainder) and its policy.
func newBudgetPart(rt *runner, cfg runConfig, opts protocol.RunOptions) *budgetPart {
	b := &budgetPart{rt: rt, waves: map[string]int{}, quotasOn: cfg.quotas.Any(), reservation: opts.Reservation}
	var start, flowCap *decimal.Decimal
	if d, err := budget.ParseUSD(opts.MaxCostUSD); err == nil && opts.MaxCostUSD != "" {
		start = &d
	}
	if d, err := budget.ParseUSD(rt.info.MaxCostUSD); err == nil && rt.info.MaxCostUSD != "" {
		flowCap = &d
	}
	c := budget.ResolveCap(start, flowCap, cfg.maxCost)
	if p := rt.children.parent; p != nil && p.CapUSD != "" {
		if d, err := budget.ParseUSD(p.CapUSD); err == nil && (!c.Set || d.LessThan(c.Amount)) {
			c = budget.Cap{Amount: d, Set: true, Source: budget.Source("parent")}
		}
	}
	b.ledger = budget.NewLedger(c)
	rt.state.Budget = b.ledger
	b.policy = rt.info.BudgetPolicy
	if opts.BudgetPolicy != "" {
		b.policy = opts.BudgetPolicy
	}
	b.pause = DefaultBudgetPause
	if rt.info.BudgetPause > 0 {
		b.pause = rt.info.BudgetPause
	}
	if opts.BudgetPause > 0 {
		b.pause = opts.BudgetPause
	}
	if c.Set {
		f, _ := c.Amount.Float64()
		rt.report.pendingSA = append(rt.report.pendingSA, searchattr.MaxCostKey.ValueSet(f))
	}
	return b
}

// register registers the Update that raises the cap.
func (b *budgetPart) register(wctx workflow.Context) error {
	return workflow.SetUpdateHandlerWithOptions(wctx, protocol.UpdateBudget,
		func(ctx workflow.Context, r protocol.BudgetRaise) (budget.Cap, error) {
			to, err := budget.ParseUSD(r.To)
			if err != nil {
				return budget.Cap{}, err
			}
			verified, err := b.verify(ctx, r)
			if err != nil {
				return budget.Cap{}, err
			}
			if err := b.ledger.Raise(to); err != nil {
				return budget.Cap{}, err
			}
			b.rt.control.auth.spend(ctx, verified)
			b.capVersion++
			f, _ := to.Float64()
			if err := workflow.UpsertTypedSearchAttributes(ctx, searchattr.MaxCostKey.ValueSet(f)); err != nil {
				workflow.GetLogger(ctx).Warn("upsert the raised cap", "error", err)
			}
			b.rt.publish()
			return b.ledger.Cap, nil
		},
		workflow.UpdateHandlerOptions{
			Validator: func(ctx workflow.Context, r protocol.BudgetRaise) error {
				if err := checkDecider("budget raise", r.By); err != nil { // limits.go
					return err
				}
				to, err := budget.ParseUSD(r.To)
				if err != nil {
					return err
				}
				if _, err := b.verify(ctx, r); err != nil {
					return err
				}
				probe := *b.ledger
				return probe.Raise(to)
			},
			Description: "Raise the run's money cap. Payload: {\"to\": \"5.00\", \"by\": \"alice\"}; the new cap must be above the current one and not below what is spent and reserved.",
		})
}

// verify checks a budget raise's proof against the run's pinned policy.
func (b *budgetPart) verify(ctx workflow.Context, r protocol.BudgetRaise) (*auth.Verified, error) {
	return b.rt.control.auth.check(ctx, "budget raise by "+strings.TrimSpace(r.By), r.Proof, func(ns, run string) (auth.Decision, error) {
		return decisions.Budget(ns, run, r)
	})
}

// reserve sets money aside for a cost-bearing step before it is dispatched. When the cap
// does not allow it, the pause policy waits for a higher cap; otherwise (or when the wait
// ends) it returns the *budget.ExceededError and the run will end budget_exceeded.
func (c *Context) reserve(items []budget.Item) error {
	rt := c.run
	for {
		err := rt.budget.ledger.ReserveAll(items)
		if err == nil || !errors.Is(err, budget.ErrExceeded) {
			return err
		}
		if !c.pauseForBudget(err) {
			rt.budget.err = err
			rt.emit(c.wctx, events.BudgetExceeded, "", "", err.Error(), nil)
			return err
		}
	}
}

// settle charges a finished step's cost (against its reservation, if it had one) and
// reports a crossing of the cap the same way reserve does.
func (c *Context) settleCost(key, step string, reserved bool, cost decimal.Decimal) error {
	rt := c.run
	now := runNow(c.wctx)
	var warnings []budget.Warning
	var exceeded *budget.ExceededError
	if r, ok := rt.budget.ledger.Reservation(key); ok && reserved {
		warnings, exceeded = rt.budget.ledger.Settle(r, cost, step, now)
	} else if cost.IsPositive() {
		warnings, exceeded = rt.budget.ledger.Charge(key, step, cost, now)
	}
	for _, w := range warnings {
		c.Logger().Warn("budget warning", "warning", w.String())
		rt.emit(c.wctx, events.BudgetWarning, step, "", w.String(), map[string]any{"spent_usd": w.Spent.String(), "cap_usd": w.Cap.String()})
	}
	if cost.IsPositive() {
		c.setStatus(rt.state.Status) // FlowCostUSD
	}
	for exceeded != nil {
		if !c.pauseForBudget(exceeded) {
			rt.budget.err = exceeded
			rt.emit(c.wctx, events.BudgetExceeded, step, "", exceeded.Error(), nil)
			return exceeded
		}
		if !rt.budget.ledger.Over() {
			return nil
		}
	}
	return nil
}

// pauseForBudget waits, with the pause policy, for someone to raise the cap; it reports
// whether the cap was raised.
func (c *Context) pauseForBudget(cause error) bool {
	rt := c.run
	if rt.budget.policy != budget.Pause {
		return false
	}
	version := rt.budget.capVersion
	c.wait(runs.Wait{Kind: runs.ForBudget})
	c.Logger().Warn("budget paused", "reason", cause.Error())
	raised, err := c.await(rt.budget.pause, "budget paused: "+cause.Error(), func() bool { return rt.budget.capVersion != version })
	c.unwait(runs.Wait{Kind: runs.ForBudget})
	return err == nil && raised
}

// Workflow versions of the monthly ledgers' behaviour (workflow.GetVersion), so runs that
// started before a change replay as they ran.
const (
	// spendAlwaysVersion: every run's costs are charged to the month's ledgers, with or
	// without quotas (before it, only under quotas). Read at the run's first positive cost.
	spendAlwaysVersion = "gateflow.spend-always"
	// quotaReserveVersion: a run not started by a Client reserves its cap against the
	// monthly quotas at its start (before it, it only checked that they were not used up).
	quotaReserveVersion = "gateflow.quota-reserve"
)

// recordsSpend says whether the run charges its costs to the monthly ledgers: always for
// runs at spendAlwaysVersion, and under quotas for older ones. The version is read once,
// at the first positive cost, so a run that never spends records no marker.
func (b *budgetPart) recordsSpend(wctx workflow.Context) bool {
	if !b.spendKnown {
		b.spendAlways = workflow.GetVersion(wctx, spendAlwaysVersion, workflow.DefaultVersion, 1)
		b.spendKnown = true
	}
	return b.quotasOn || b.spendAlways >= 1
}

// chargeQuota adds a step's cost to the monthly ledgers (overall and the workflow's),
// whether or not a quota is configured, so the month's spend is always known (flowctl
// budget). The charge is keyed by run and step, so a retried activity or a replay counts it
// once, and draws on the run's reservation when it has one.
func (c *Context) chargeQuota(stepKey string, cost decimal.Decimal) {
	if !cost.IsPositive() || !c.run.budget.recordsSpend(c.wctx) {
		return
	}
	// Money spent is charged even when the step's context was cancelled (fail-fast).
	dctx, _ := workflow.NewDisconnectedContext(c.wctx)
	actx := workflow.WithActivityOptions(dctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		Summary:             "monthly spend " + budget.FormatUSD(cost),
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 10},
	})
	ch := protocol.QuotaCharge{
		// Keyed by the Temporal run ID (unique, without "/"), not the reusable workflow ID.
		Key: budget.ChargeKey(workflow.GetInfo(c.wctx).WorkflowExecution.RunID, stepKey), Amount: cost, Workflow: c.run.info.Name,
		Month: budget.MonthOf(runNow(c.wctx)),
	}
	if r := c.run.budget.reservation; r != nil {
		ch.Reservation = r.Key
	}
	if err := workflow.ExecuteActivity(actx, protocol.QuotaChargeActivity, ch).Get(dctx, nil); err != nil {
		c.Logger().Error("charge the monthly ledgers", "key", ch.Key, "error", err)
	}
}

// releaseQuota gives back, when the run ends (completed, failed, cancelled), what is left
// of its reservation in the monthly ledgers. It runs on a disconnected context, so a
// cancelled run releases too; a release that fails is logged, and the ledger drops the
// reservation at its deadline.
func (b *budgetPart) releaseQuota(wctx workflow.Context) {
	r := b.reservation
	if r == nil || !r.Amount.IsPositive() {
		return
	}
	dctx, _ := workflow.NewDisconnectedContext(wctx)
	actx := workflow.WithActivityOptions(dctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		Summary:             "release the monthly quota reservation of " + budget.FormatUSD(r.Amount),
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 10},
	})
	rel := protocol.QuotaRelease{Key: r.Key, Workflow: b.rt.info.Name, Month: r.Month}
	if err := workflow.ExecuteActivity(actx, protocol.QuotaReleaseActivity, rel).Get(dctx, nil); err != nil {
		workflow.GetLogger(wctx).Error("release the monthly quota reservation (the ledger drops it at its deadline)", "key", r.Key, "error", err)
	}
}

// checkQuota admits, before any step, a run not started by a Client (a schedule, another
// tool; a Client reserves itself) under the worker's monthly quotas: it reserves the run's
// cap as flowclient.Client.Start does (an activity sending the same Update), keyed by the run, with
// the run's execution timeout as the deadline when it has one (else
// budget.DefaultReservationTTL). A refusal ends the run budget_exceeded before any step.
// Runs older than quotaReserveVersion only check that the quotas are not used up.
func (b *budgetPart) checkQuota(c *Context, cfg runConfig, opts protocol.RunOptions) error {
	rt := b.rt
	if opts.QuotaChecked || rt.children.parent != nil || rt.setup.plan {
		return nil
	}
	if _, ok := cfg.quotas.LimitFor(budget.AllScope); !ok {
		if _, ok := cfg.quotas.LimitFor(budget.WorkflowScope(rt.info.Name)); !ok {
			return nil
		}
	}
	actx := workflow.WithActivityOptions(c.wctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second, Summary: "monthly quota check",
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 5},
	})
	if workflow.GetVersion(c.wctx, quotaReserveVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		if err := workflow.ExecuteActivity(actx, protocol.QuotaCheckActivity, rt.info.Name).Get(c.wctx, nil); err != nil {
			return fmt.Errorf("refused before any step: %w", err)
		}
		return nil
	}
	info := workflow.GetInfo(c.wctx)
	req := protocol.QuotaReserve{
		Key:      info.WorkflowExecution.ID + "#" + info.WorkflowExecution.RunID,
		Workflow: rt.info.Name,
		Month:    budget.MonthOf(runNow(c.wctx)),
		TTL:      info.WorkflowExecutionTimeout,
	}
	if b.ledger.Cap.Set {
		req.Amount = b.ledger.Cap.Amount
	}
	var reserved bool
	if err := workflow.ExecuteActivity(actx, protocol.QuotaReserveActivity, req).Get(c.wctx, &reserved); err != nil {
		return fmt.Errorf("refused before any step: %w", err)
	}
	if reserved {
		b.reservation = &protocol.RunReservation{Key: req.Key, Month: req.Month, Amount: req.Amount}
	}
	return nil
}
