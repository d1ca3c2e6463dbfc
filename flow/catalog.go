package flow

import (
	"sort"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gateflow/gateflow/budget"

	"go.temporal.io/sdk/workflow"
)

// WorkflowInfo is a flow's catalog entry.
type WorkflowInfo struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Category    string `json:"category,omitempty"`
	Version     string `json:"version,omitempty"`
	// MaxCostUSD is the flow's default money cap, as a decimal string; empty for none.
	MaxCostUSD string `json:"max_cost_usd,omitempty"`
	// MaxAttempts is how many times a failed run is attempted (see MaxAttempts); 0 leaves it
	// to the worker.
	MaxAttempts int `json:"max_attempts,omitempty"`
	// BudgetPolicy is what a run does when its cap would be exceeded: "stop" (default) or
	// "pause" (wait up to BudgetPause for a higher cap).
	BudgetPolicy budget.Policy `json:"budget_policy,omitempty"`
	BudgetPause  time.Duration `json:"budget_pause,omitempty"`
	// MonthlyQuotaUSD is the worker's monthly quota for the flow, if any;
	// OverallQuotaUSD the worker's overall monthly quota (the same on every entry).
	MonthlyQuotaUSD string `json:"monthly_quota_usd,omitempty"`
	OverallQuotaUSD string `json:"overall_quota_usd,omitempty"`
	// Schedules are the flow's schedules (see Schedule).
	Schedules []ScheduleInfo `json:"schedules,omitempty"`
	// Guards are the flow's own limits; zero fields are left to the worker.
	Guards      Guards  `json:"guards"`
	InputType   string  `json:"input_type"`
	OutputType  string  `json:"output_type"`
	InputSchema *Schema `json:"input_schema,omitempty"`
	// PublishedBy is the identity of the worker that last published the entry.
	PublishedBy string    `json:"published_by,omitempty"`
	PublishedAt time.Time `json:"published_at"`
}

// Catalog is what the workers of one task queue serve.
type Catalog struct {
	TaskQueue string `json:"task_queue"`
	// MonthlyQuotaUSD is the workers' overall monthly quota, if any.
	MonthlyQuotaUSD string         `json:"monthly_quota_usd,omitempty"`
	Workflows       []WorkflowInfo `json:"workflows"`
	UpdatedAt       time.Time      `json:"updated_at"`
}

// Lookup returns the entry named name.
func (c *Catalog) Lookup(name string) (WorkflowInfo, bool) {
	for _, w := range c.Workflows {
		if w.Name == name {
			return w, true
		}
	}
	return WorkflowInfo{}, false
}

// Names lists the catalog's flow names in order.
func (c *Catalog) Names() []string {
	out := make([]string, 0, len(c.Workflows))
	for _, w := range c.Workflows {
		out = append(out, w.Name)
	}
	return out
}

// merge adds or replaces the published entries (by name) and keeps the rest sorted.
func (c *Catalog) merge(published []WorkflowInfo, at time.Time) {
	byName := map[string]WorkflowInfo{}
	for _, w := range c.Workflows {
		byName[w.Name] = w
	}
	for _, w := range published {
		byName[w.Name] = w
	}
	if len(published) > 0 {
		c.MonthlyQuotaUSD = published[0].OverallQuotaUSD // the latest worker's setting
	}
	c.Workflows = c.Workflows[:0]
	for _, w := range byName {
		c.Workflows = append(c.Workflows, w)
	}
	sort.Slice(c.Workflows, func(i, j int) bool { return c.Workflows[i].Name < c.Workflows[j].Name })
	c.UpdatedAt = at
}

// Names used by the catalog entity workflow.
const (
	// CatalogWorkflowType is the workflow type of the catalog entity workflow.
	CatalogWorkflowType = "gateflow.catalog"
	// CatalogPublishSignal carries a worker's entries to the catalog workflow.
	CatalogPublishSignal = "gateflow.catalog.publish"
	// MemoCatalog is the Memo key under which the catalog workflow keeps the Catalog, so
	// clients read it with DescribeWorkflowExecution, with no worker needed.
	MemoCatalog = "gateflow.catalog"
)

// CatalogWorkflowID is the workflow ID of the catalog of a task queue.
func CatalogWorkflowID(taskQueue string) string { return "gateflow-catalog-" + taskQueue }

// catalogMaxSignals bounds the catalog workflow's history: after that many publishes it
// continues as new with the catalog as input.
const catalogMaxSignals = 200

// catalogWorkflow is the entity workflow that holds a task queue's catalog in its Memo.
func catalogWorkflow(ctx workflow.Context, cat Catalog) error {
	ch := workflow.GetSignalChannel(ctx, CatalogPublishSignal)
	for n := 0; ; n++ {
		var entries []WorkflowInfo
		if n >= catalogMaxSignals || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			if !ch.ReceiveAsync(&entries) {
				return workflow.NewContinueAsNewError(ctx, CatalogWorkflowType, cat)
			}
		} else {
			ch.Receive(ctx, &entries)
		}
		cat.merge(entries, workflow.Now(ctx))
		if err := workflow.UpsertMemo(ctx, map[string]any{MemoCatalog: cat}); err != nil {
			return err
		}
	}
}

// quotas are the monthly quotas the catalog's workers enforce.
func (c *Catalog) quotas() Quotas {
	var q Quotas
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
