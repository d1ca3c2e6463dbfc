package flow

import (
	"fmt"
	"slices"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/mcptools"
)

// checkMCPServers reports what is wrong with the declared MCP servers (an invalid
// declaration, a name declared twice), without starting or reaching any.
func checkMCPServers(servers []mcptools.Server) error {
	if _, err := mcptools.NewPool(servers, mcptools.Options{}); err != nil {
		return fmt.Errorf("MCPServers: %w", err)
	}
	return nil
}

// mcpServerNames are the names of servers, sorted; nil when there are none.
func mcpServerNames(servers []mcptools.Server) []string {
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// openMCP creates the pool of the worker's MCP servers; it connects to a server at its
// first use.
func (w *Worker) openMCP() error {
	if len(w.opts.MCPServers) == 0 || w.opts.mcp != nil {
		return nil
	}
	pool, err := mcptools.NewPool(w.opts.MCPServers, mcptools.Options{})
	if err != nil {
		return fmt.Errorf("MCPServers: %w", err)
	}
	w.opts.mcp = pool
	return nil
}

// closeMCP closes the pool openMCP created, stopping the servers' processes.
func (w *Worker) closeMCP() {
	if w.opts.mcp == nil {
		return
	}
	_ = w.opts.mcp.Close() // the processes are stopped (killed after a grace period) either way
	w.opts.mcp = nil
}

// registerMCP registers the MCP activities when opts declare MCP servers, over the pool
// Worker.Start opened. Registered elsewhere (RegisterActivities without Start, as
// package testsuite does) they have no pool and refuse every call unless mocked.
func registerMCP(r worker.ActivityRegistry, opts WorkerOptions) {
	if len(opts.MCPServers) == 0 {
		return
	}
	a := &activities.MCPActivities{Pool: opts.mcp}
	r.RegisterActivityWithOptions(a.Catalog, activity.RegisterOptions{Name: activities.MCPCatalogActivity})
	r.RegisterActivityWithOptions(a.Call, activity.RegisterOptions{Name: activities.MCPCallActivity})
	r.RegisterActivityWithOptions(a.Read, activity.RegisterOptions{Name: activities.MCPReadActivity})
}
