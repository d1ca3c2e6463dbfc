package flowdef

import (
	"encoding/json"
	"fmt"
	"github.com/gateflow/gateflow/core"
	"maps"
	"path/filepath"
	"slices"
	"sync"
)

// Registry is what Validate checks names against: the worker's registries. The worker
// implements it over what was registered on it, so validation and dispatch read the same
// tables; StaticRegistry is a plain implementation for tools and tests.
type Registry interface {
	// HasAction reports whether a step may `uses:` this action (core.BuiltinActions are
	// accepted before asking).
	HasAction(name string) bool
	// HasFallbackAction reports whether a fallback action takes every unknown name; then
	// every `uses:` passes.
	HasFallbackAction() bool
	// HasItemProvider reports whether a foreach may take its items from this provider.
	HasItemProvider(name string) bool
	// HasGateType reports whether a poll gate may use this resolver type
	// (core.BuiltinGateResolvers are accepted before asking).
	HasGateType(name string) bool
	// HasService reports whether a step may name this service (`service:`,
	// flow.UseService): one the workers declared (flow.WorkerOptions.Services).
	HasService(name string) bool
	// HasGoFlow reports whether a Go flow (flow.Define) of this name is registered; a
	// `call:` to it is not validated further.
	HasGoFlow(name string) bool
	// LoadDefinition returns the definition `call: name` refers to, or an error wrapping
	// ErrNotFound when there is none.
	LoadDefinition(name string) (*Definition, error)
}

// StaticRegistry is a Registry over fixed lists and an in-memory or on-disk set of
// definitions. The zero value knows nothing but the builtins.
type StaticRegistry struct {
	// Actions are the registered action names.
	Actions []string
	// Fallback is true when a fallback action is registered.
	Fallback bool
	// ItemProviders are the registered item provider names.
	ItemProviders []string
	// GateTypes are the registered poll resolver types.
	GateTypes []string
	// GoFlows are the registered Go flow names.
	GoFlows []string
	// Services are the declared service names; nil means they are not known (offline
	// checks), and then any service name is accepted.
	Services []string
	// InputSchemas are the input schemas of GoFlows by name, where known: an agent's
	// `flow:` tool offers the model its flow's (FlowInputSchema).
	InputSchemas map[string]json.RawMessage
	// MCPServers are the declared MCP server names (flow.WorkerOptions.MCPServers); nil
	// means they are not known (offline checks), and then any server name is accepted.
	MCPServers []string
	// Definitions are sub-definitions by name.
	Definitions map[string]*Definition
	// Dir, when set, is searched for <name>.yaml, <name>.yml and <name>.json when a name
	// is not in Definitions. Files are parsed once and cached.
	Dir string

	mu    sync.Mutex
	cache map[string]*Definition
}

// NewStaticRegistry is the registry of what info describes (flow.Worker.Registry, or
// the registries a catalog lists with its flows as info.Flows): the built-in actions and
// gate resolvers and those of info, its item providers, services and flows. The zero info
// (no worker published its registries) knows the built-ins only, and any service.
func NewStaticRegistry(info core.RegistryInfo) *StaticRegistry {
	return &StaticRegistry{
		Actions:       append(slices.Clone(core.BuiltinActions), info.Actions...),
		Fallback:      info.Fallback,
		ItemProviders: slices.Clone(info.ItemProviders),
		GateTypes:     append(slices.Clone(core.BuiltinGateResolvers), info.GateTypes...),
		Services:      slices.Clone(info.Services),
		GoFlows:       slices.Clone(info.Flows),
		MCPServers:    slices.Clone(info.MCPServers),
		InputSchemas:  maps.Clone(info.FlowInputSchemas),
	}
}

// HasAction implements Registry.
func (r *StaticRegistry) HasAction(name string) bool { return slices.Contains(r.Actions, name) }

// HasFallbackAction implements Registry.
func (r *StaticRegistry) HasFallbackAction() bool { return r.Fallback }

// HasItemProvider implements Registry.
func (r *StaticRegistry) HasItemProvider(name string) bool {
	return slices.Contains(r.ItemProviders, name)
}

// HasGateType implements Registry.
func (r *StaticRegistry) HasGateType(name string) bool { return slices.Contains(r.GateTypes, name) }

// HasService implements Registry.
func (r *StaticRegistry) HasService(name string) bool {
	return r.Services == nil || slices.Contains(r.Services, name)
}

// MCPServerList returns the declared MCP server names, and whether they are known
// (agent tools and reads naming a server are checked against them).
func (r *StaticRegistry) MCPServerList() ([]string, bool) { return r.MCPServers, r.MCPServers != nil }

// FlowInputSchema returns the input schema of the Go flow name, when known.
func (r *StaticRegistry) FlowInputSchema(name string) (json.RawMessage, bool) {
	s, ok := r.InputSchemas[name]
	return s, ok && len(s) > 0
}

// HasGoFlow implements Registry.
func (r *StaticRegistry) HasGoFlow(name string) bool { return slices.Contains(r.GoFlows, name) }

// LoadDefinition implements Registry: Definitions first, then Dir. A file that does not
// parse is an error (not ErrNotFound) carrying the parse errors.
func (r *StaticRegistry) LoadDefinition(name string) (*Definition, error) {
	if d, ok := r.Definitions[name]; ok {
		return d, nil
	}
	if r.Dir == "" {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if d, ok := r.cache[name]; ok {
		return d, nil
	}
	for _, ext := range []string{".yaml", ".yml", ".json"} {
		path := filepath.Join(r.Dir, name+ext)
		data, err := ReadFile(path)
		if err != nil {
			continue
		}
		d, err := Parse(path, data)
		if err != nil {
			return nil, err
		}
		if r.cache == nil {
			r.cache = map[string]*Definition{}
		}
		r.cache[name] = d
		return d, nil
	}
	return nil, fmt.Errorf("%w: %s (looked in %s)", ErrNotFound, name, r.Dir)
}
