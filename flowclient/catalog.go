package flowclient

import (
	"context"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/startplan"
	"github.com/shopspring/decimal"
)

// quotas are the monthly quotas the workers of catalog c enforce.
func quotas(c *core.Catalog) budget.Quotas {
	var q budget.Quotas
	if d, err := budget.ParseUSD(c.MonthlyQuotaUSD); c.MonthlyQuotaUSD != "" && err == nil {
		q.MonthlyUSD = &d
	}
	for _, w := range c.Workflows {
		if d, err := budget.ParseUSD(w.MonthlyQuotaUSD); w.MonthlyQuotaUSD != "" && err == nil {
			if q.PerWorkflow == nil {
				q.PerWorkflow = map[string]decimal.Decimal{}
			}
			q.PerWorkflow[w.Name] = d
		}
	}
	return q
}

// Workflows reads the catalog of the client's task queue. core.ErrNoCatalog means no worker has
// ever published one there.
func (c *Client) Workflows(ctx context.Context) (*core.Catalog, error) {
	return startplan.ReadCatalog(ctx, c.tc, c.opts.TaskQueue)
}
