package flow

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/internal/flowlink"
	"github.com/gateflow/gateflow/internal/protocol"
)

// registryEntry is the catalog entry carrying a worker's registries (flowlink.RegistryInfo). It has the overall quota of
// its worker as every flow entry does, since the catalog takes the quota from the first
// entry published.
type registryEntry struct {
	Name            string                `json:"name"`
	Kind            string                `json:"kind"`
	OverallQuotaUSD string                `json:"overall_quota_usd,omitempty"`
	Registry        flowlink.RegistryInfo `json:"registry"`
}

// registryInfo lists what the worker registered.
func (w *Worker) registryInfo() flowlink.RegistryInfo {
	var r flowlink.RegistryInfo
	for _, x := range w.extra {
		if x.name == protocol.FallbackActionActivity {
			r.Fallback = true
			continue
		}
		if !slices.Contains(flowdef.BuiltinActions, x.name) {
			r.Actions = append(r.Actions, x.name)
		}
	}
	for _, p := range w.opts.ItemProviders {
		if p != nil {
			r.ItemProviders = append(r.ItemProviders, p.Name())
		}
	}
	for _, g := range w.opts.GateResolvers {
		if g != nil && !slices.Contains(flowdef.BuiltinGateResolvers, g.Type()) {
			r.GateTypes = append(r.GateTypes, g.Type())
		}
	}
	r.Actions = sortedUnique(r.Actions)
	r.ItemProviders = sortedUnique(r.ItemProviders)
	r.GateTypes = sortedUnique(r.GateTypes)
	r.Services = []string{}
	for _, s := range w.opts.Services {
		r.Services = append(r.Services, s.Name)
	}
	slices.Sort(r.Services)
	return r
}

// Registry is what definitions are validated against on this worker (flowdef.Validate):
// the built-in actions and the activities registered with RegisterActivity, the item
// providers and gate resolvers of its options and the Go flows it serves, and whether it
// has a fallback action (RegisterFallbackAction). It has no sub-definitions
// (LoadDefinition finds none).
func (w *Worker) Registry() *flowdef.StaticRegistry {
	info := w.registryInfo()
	r := &flowdef.StaticRegistry{
		Actions:       append(slices.Clone(flowdef.BuiltinActions), info.Actions...),
		Fallback:      info.Fallback,
		ItemProviders: info.ItemProviders,
		GateTypes:     append(slices.Clone(flowdef.BuiltinGateResolvers), info.GateTypes...),
		Services:      info.Services,
	}
	for _, f := range w.flowList() {
		if f != nil {
			r.GoFlows = append(r.GoFlows, f.Name())
		}
	}
	return r
}

// Guards are the worker's default run limits: WorkerOptions.Guards with zero fields
// filled from DefaultGuards (a flow's WithGuards overrides them). Definitions served from
// a directory are validated against them (flowdef.WithWorkerGuards).
func (w *Worker) Guards() Guards { return w.opts.Guards.resolve(Guards{}) }

// decodeCatalog reads the catalog's Memo (entity.CatalogState): the flow entries go to
// Workflows, the registry entry to Workers.
func decodeCatalog(m catalogMemo) (*catalog, error) {
	cat := &catalog{TaskQueue: m.TaskQueue, MonthlyQuotaUSD: m.MonthlyQuotaUSD, UpdatedAt: m.UpdatedAt,
		Workers: m.Workers, Workflows: []WorkflowInfo{}}
	for _, raw := range m.Workflows {
		var head struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return nil, fmt.Errorf("decode a catalog entry: %w", err)
		}
		if head.Name == protocol.RegistryEntryName {
			var e registryEntry
			if err := json.Unmarshal(raw, &e); err != nil {
				return nil, fmt.Errorf("decode the registry entry: %w", err)
			}
			cat.Workers = &e.Registry
			continue
		}
		var w WorkflowInfo
		if err := json.Unmarshal(raw, &w); err != nil {
			return nil, fmt.Errorf("decode the catalog entry of %s: %w", head.Name, err)
		}
		cat.Workflows = append(cat.Workflows, w)
	}
	return cat, nil
}

// catalogMemo is the catalog as its Memo holds it. Workers is read too for catalogs
// written as a catalog (tests).
type catalogMemo struct {
	TaskQueue       string                 `json:"task_queue"`
	MonthlyQuotaUSD string                 `json:"monthly_quota_usd,omitempty"`
	Workflows       []json.RawMessage      `json:"workflows"`
	Workers         *flowlink.RegistryInfo `json:"workers,omitempty"`
	UpdatedAt       time.Time              `json:"updated_at"`
}

func sortedUnique(s []string) []string {
	sort.Strings(s)
	return slices.Compact(s)
}

// registryEntry is the worker's registries as a catalog entry.
func (w *Worker) registryEntry(identity string, now time.Time) (json.RawMessage, error) {
	e := registryEntry{Name: protocol.RegistryEntryName, Kind: "registry", Registry: w.registryInfo()}
	e.Registry.PublishedBy, e.Registry.PublishedAt = identity, now
	if w.opts.Quotas.MonthlyUSD != nil {
		e.OverallQuotaUSD = w.opts.Quotas.MonthlyUSD.String()
	}
	b, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("encode the registry entry: %w", err)
	}
	return b, nil
}
