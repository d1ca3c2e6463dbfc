package core

import (
	"encoding/json"
	"time"
)

// Catalog is what the workers of one task queue serve, as they publish it
// (flowclient.Client.Workflows reads it).
type Catalog struct {
	TaskQueue string `json:"task_queue"`
	// MonthlyQuotaUSD is the workers' overall monthly quota, if any.
	MonthlyQuotaUSD string         `json:"monthly_quota_usd,omitempty"`
	Workflows       []WorkflowInfo `json:"workflows"`
	// Workers are the registries of the queue's workers (the latest to start), nil when
	// none published them: what definitions are validated against
	// (flowdef.NewStaticRegistry).
	Workers   *RegistryInfo `json:"workers,omitempty"`
	UpdatedAt time.Time     `json:"updated_at"`
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

// RegistryInfo is a plain description of what workers registered: what a worker
// returns (flow.Worker.Registry) and publishes of its registries in the catalog of its
// task queue, so that clients validate declarative definitions (package flowdef, whose
// NewStaticRegistry builds the registry from it) against what the workers serve. The
// latest worker to start on the queue publishes it: the workers of a task queue are
// expected to have the same registrations.
type RegistryInfo struct {
	// Actions are the names of the activities registered with flow.Worker.RegisterActivity,
	// sorted, without the built-in ones (BuiltinActions).
	Actions []string `json:"actions,omitempty"`
	// Fallback is true when the workers take every unknown action name
	// (flow.Worker.RegisterFallbackAction).
	Fallback bool `json:"fallback,omitempty"`
	// ItemProviders are the names of flow.WorkerOptions.ItemProviders, sorted.
	ItemProviders []string `json:"item_providers,omitempty"`
	// GateTypes are the types of flow.WorkerOptions.GateResolvers, sorted, without the
	// built-in ones (BuiltinGateResolvers).
	GateTypes []string `json:"gate_types,omitempty"`
	// Services are the names of flow.WorkerOptions.Services, sorted; never nil in a worker's
	// entry (empty: none declared), nil in entries of older workers (not known).
	Services []string `json:"services"`
	// MCPServers are the names of flow.WorkerOptions.MCPServers, sorted: the servers
	// whose tools MCP steps and agent tools may call. Never nil in a worker's entry
	// (empty: none declared), nil in entries of older workers (not known).
	MCPServers []string `json:"mcp_servers"`
	// Flows are the names of the flows served, which a definition's `call:` may name:
	// the worker's flows in what flow.Worker.Registry returns. The catalog entry leaves it
	// out (its flow entries list them): a client fills it from Catalog.Names.
	Flows []string `json:"-"`
	// FlowInputSchemas are the input schemas of Flows by name, where known (the flows'
	// InputSchema): an agent's `flow:` tool offers the model its flow's. Like Flows, the
	// catalog entry leaves it out: a client fills it from the flow entries.
	FlowInputSchemas map[string]json.RawMessage `json:"-"`
	// PublishedBy is the identity of the worker that published it.
	PublishedBy string    `json:"published_by,omitempty"`
	PublishedAt time.Time `json:"published_at"`
}

// BuiltinActions are the step actions every worker has: shell (a command), http (a
// request) and agent (an LLM agent turn). They pass validation whatever the
// flowdef.Registry says.
var BuiltinActions = []string{"shell", "http", "agent"}

// BuiltinGateResolvers are the poll gate resolvers every worker has (package gates).
var BuiltinGateResolvers = []string{"http", "command"}

// Registry is what the catalog says the queue's workers registered: its Workers (the
// zero RegistryInfo when none published them) with the catalog's flows as Flows, served
// definitions included (a `call:` may name them).
func (c *Catalog) Registry() RegistryInfo {
	var r RegistryInfo
	if c.Workers != nil {
		r = *c.Workers
	}
	r.Flows = c.Names()
	for _, w := range c.Workflows {
		if len(w.InputSchema) > 0 {
			if r.FlowInputSchemas == nil {
				r.FlowInputSchemas = map[string]json.RawMessage{}
			}
			r.FlowInputSchemas[w.Name] = w.InputSchema
		}
	}
	return r
}
