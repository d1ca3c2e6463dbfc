package flowclient

import (
	"context"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/decisions"
	"github.com/gateflow/gateflow/internal/entity"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/shopspring/decimal"
)

// BudgetRequest asks Client.RaiseBudget to raise a run's money cap.
type BudgetRequest struct {
	// Run is the run's ID.
	Run string
	// To is the new cap; it must be above the current one and not below what the run has
	// spent and reserved.
	To decimal.Decimal
	// By is who raises it; empty means the client's identity.
	By string
}

// RaiseBudget raises the cap of run r.Run (a run paused by its budget goes on) with the
// Update gateflow.budget and returns the new cap. A cap the run refuses returns a
// *RefusedError.
func (c *Client) RaiseBudget(ctx context.Context, r BudgetRequest) (budget.Cap, error) {
	r.By = c.who(r.By)
	what := "budget raise to " + budget.FormatUSD(r.To)
	raise := protocol.BudgetRaise{To: r.To.String(), By: r.By}
	d, derr := decisions.Budget(c.opts.Namespace, r.Run, raise)
	proof, err := c.proof(ctx, r.Run, what, d, derr)
	if err != nil {
		return budget.Cap{}, err
	}
	raise.Proof = proof
	var cp budget.Cap
	err = c.update(ctx, r.Run, what, protocol.UpdateBudget, raise, &cp)
	return cp, err
}

// MonthlySpend is the spend of month ("2026-11"; empty: the current UTC month) overall and
// per workflow of the catalog, read from the month's ledgers. Every run's cost is charged
// to them whether or not a quota is configured, so the lines show the spend without any
// quota (QuotaUSD nil); with the workers' quotas they also say what is left.
func (c *Client) MonthlySpend(ctx context.Context, month string) ([]runs.SpendLine, error) {
	if month == "" {
		month = budget.MonthOf(time.Now())
	}
	if _, err := budget.ParseMonth(month); err != nil {
		return nil, err
	}
	cat, err := c.Workflows(ctx)
	if err != nil {
		return nil, err
	}
	q := quotas(cat)
	scopes := []budget.Scope{budget.AllScope}
	for _, w := range cat.Workflows {
		scopes = append(scopes, budget.WorkflowScope(w.Name))
	}
	var out []runs.SpendLine
	for _, s := range scopes {
		sum, err := entity.ReadLedger(ctx, c.tc, c.opts.TaskQueue, s, month)
		if err != nil {
			return nil, err
		}
		line := runs.SpendLine{Scope: s, Month: month, SpentUSD: sum.Spent, ReservedUSD: sum.Reserved}
		if limit, ok := q.LimitFor(s); ok {
			l := limit
			line.QuotaUSD = &l
			line.Exhausted = sum.Spent.Add(sum.Reserved).GreaterThanOrEqual(limit)
		}
		out = append(out, line)
	}
	return out, nil
}
