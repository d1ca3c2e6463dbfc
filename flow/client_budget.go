package flow

import (
	"context"
	"time"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/entity"
	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/client"
)

// RaiseBudget raises the cap of run (a run paused by its budget goes on) with the Update
// gateflow.budget. A cap not above the current one, or below what the run has spent and
// reserved, returns a *RefusedError.
func (c *Client) RaiseBudget(ctx context.Context, run string, to decimal.Decimal, by string) (budget.Cap, error) {
	if by == "" {
		by = c.opts.Identity
	}
	what := "budget raise to " + budget.FormatUSD(to)
	h, err := c.tc.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: run, UpdateName: UpdateBudget, Args: []any{BudgetRaise{To: to.String(), By: by}},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return budget.Cap{}, c.refusal(ctx, run, what, err)
	}
	var cp budget.Cap
	if err := h.Get(ctx, &cp); err != nil {
		return budget.Cap{}, c.refusal(ctx, run, what, err)
	}
	return cp, nil
}

// SpendLine is one scope's spend in a month against its quota.
type SpendLine struct {
	Scope    budget.Scope     `json:"scope"`
	Month    string           `json:"month"`
	SpentUSD decimal.Decimal  `json:"spent_usd"`
	QuotaUSD *decimal.Decimal `json:"quota_usd,omitempty"`
	// Exhausted is set when new runs in the scope are refused.
	Exhausted bool `json:"exhausted"`
}

// MonthlySpend is the spend of month ("2026-11"; empty: the current UTC month) overall and
// per workflow of the catalog, against the workers' quotas.
func (c *Client) MonthlySpend(ctx context.Context, month string) ([]SpendLine, error) {
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
	q := cat.quotas()
	scopes := []budget.Scope{budget.AllScope}
	for _, w := range cat.Workflows {
		scopes = append(scopes, budget.WorkflowScope(w.Name))
	}
	var out []SpendLine
	for _, s := range scopes {
		spent, err := entity.ReadQuota(ctx, c.tc, c.opts.TaskQueue, s, month)
		if err != nil {
			return nil, err
		}
		line := SpendLine{Scope: s, Month: month, SpentUSD: spent}
		if limit, ok := q.limitFor(s); ok {
			l := limit
			line.QuotaUSD = &l
			line.Exhausted = spent.GreaterThanOrEqual(limit)
		}
		out = append(out, line)
	}
	return out, nil
}
