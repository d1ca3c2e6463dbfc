package flowclient

import (
	"context"
	"time"

	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/internal/flowlink"

	"github.com/gateflow/gateflow/budget"
	"github.com/shopspring/decimal"
)

// quotas are the monthly quotas the workers of catalog c enforce.
func quotas(c *Catalog) budget.Quotas {
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

// Workflows reads the catalog of the client's task queue. flow.ErrNoCatalog means no worker has
// ever published one there.
func (c *Client) Workflows(ctx context.Context) (*Catalog, error) {
	return readCatalog(ctx, c.tc, c.opts.TaskQueue)
}

// Catalog is what the workers of one task queue serve.
type Catalog struct {
	TaskQueue string `json:"task_queue"`
	// MonthlyQuotaUSD is the workers' overall monthly quota, if any.
	MonthlyQuotaUSD string              `json:"monthly_quota_usd,omitempty"`
	Workflows       []flow.WorkflowInfo `json:"workflows"`
	// Workers are the registries of the queue's workers (the latest to start), nil when
	// none published them: what definitions are validated against (Registry).
	Workers   *RegistryInfo `json:"workers,omitempty"`
	UpdatedAt time.Time     `json:"updated_at"`
}

// Lookup returns the entry named name.
func (c *Catalog) Lookup(name string) (flow.WorkflowInfo, bool) {
	for _, w := range c.Workflows {
		if w.Name == name {
			return w, true
		}
	}
	return flow.WorkflowInfo{}, false
}

// Names lists the catalog's flow names in order.
func (c *Catalog) Names() []string {
	out := make([]string, 0, len(c.Workflows))
	for _, w := range c.Workflows {
		out = append(out, w.Name)
	}
	return out
}

// Registry is the flowdef.Registry of the catalog (see Client.Registry).
func (c *Catalog) Registry() *flowdef.StaticRegistry {
	return flowlink.StaticRegistry((*flowlink.RegistryInfo)(c.Workers), c.Names())
}

// RegistryInfo is what a worker publishes of its registries in the catalog of its task
// queue, so that clients validate declarative definitions (package flowdef) against what
// the workers serve. The latest worker to start on the queue publishes it: the workers
// of a task queue are expected to have the same registrations.
type RegistryInfo struct {
	// Actions are the names of the activities registered with flow.Worker.RegisterActivity,
	// sorted, without the built-in ones (flowdef.BuiltinActions).
	Actions []string `json:"actions,omitempty"`
	// Fallback is true when the workers take every unknown action name
	// (flow.Worker.RegisterFallbackAction).
	Fallback bool `json:"fallback,omitempty"`
	// ItemProviders are the names of flow.WorkerOptions.ItemProviders, sorted.
	ItemProviders []string `json:"item_providers,omitempty"`
	// GateTypes are the types of flow.WorkerOptions.GateResolvers, sorted, without the built-in
	// ones (flowdef.BuiltinGateResolvers).
	GateTypes []string `json:"gate_types,omitempty"`
	// Services are the names of flow.WorkerOptions.Services, sorted; never nil in a worker's
	// entry (empty: none declared), nil in entries of older workers (not known).
	Services []string `json:"services"`
	// PublishedBy is the identity of the worker that published it.
	PublishedBy string    `json:"published_by,omitempty"`
	PublishedAt time.Time `json:"published_at"`
}
