package flow

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/startplan"
)

// registryInfo lists what the worker registered, as its catalog entry publishes it
// (without its flows, which the catalog's flow entries list).
func (w *Worker) registryInfo() core.RegistryInfo {
	var r core.RegistryInfo
	for _, x := range w.extra {
		if x.name == protocol.FallbackActionActivity {
			r.Fallback = true
			continue
		}
		if !slices.Contains(core.BuiltinActions, x.name) {
			r.Actions = append(r.Actions, x.name)
		}
	}
	for _, p := range w.opts.ItemProviders {
		if p != nil {
			r.ItemProviders = append(r.ItemProviders, p.Name())
		}
	}
	for _, g := range w.opts.GateResolvers {
		if g != nil && !slices.Contains(core.BuiltinGateResolvers, g.Type()) {
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
	r.MCPServers = append([]string{}, mcpServerNames(w.opts.MCPServers)...) // worker_mcp.go; [] when none
	return r
}

// Registry describes what the worker registered, which definitions are validated
// against (flowdef.NewStaticRegistry builds the flowdef.Registry from it): the activities
// registered with RegisterActivity besides the built-in actions, whether it has a
// fallback action (RegisterFallbackAction), the item providers, gate resolvers and
// services of its options, and the Go flows it serves (Flows).
func (w *Worker) Registry() core.RegistryInfo {
	r := w.registryInfo()
	for _, f := range w.flowList() {
		if f != nil {
			r.Flows = append(r.Flows, f.Name())
			if s := f.Info().InputSchema; len(s) > 0 {
				if r.FlowInputSchemas == nil {
					r.FlowInputSchemas = map[string]json.RawMessage{}
				}
				r.FlowInputSchemas[f.Name()] = s
			}
		}
	}
	return r
}

// Guards are the worker's default run limits: WorkerOptions.Guards with zero fields
// filled from DefaultGuards (a flow's WithGuards overrides them). Definitions served from
// a directory are validated against them (flowdef.WithWorkerGuards).
func (w *Worker) Guards() Guards { return w.opts.Guards.resolve(Guards{}) }

func sortedUnique(s []string) []string {
	sort.Strings(s)
	return slices.Compact(s)
}

// registryEntry is the worker's registries as a catalog entry.
func (w *Worker) registryEntry(identity string, now time.Time) (json.RawMessage, error) {
	e := startplan.RegistryEntry{Name: protocol.RegistryEntryName, Kind: "registry", Registry: w.registryInfo()}
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
