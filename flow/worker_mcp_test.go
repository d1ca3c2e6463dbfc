package flow

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/mcptools"
)

func TestWorkerMCPServers(t *testing.T) {
	servers := []mcptools.Server{
		{Name: "triage", Command: []string{"triage-tools"}},
		{Name: "docs", URL: "https://mcp.example.com/mcp"},
	}
	w := NewWorker(nil, WorkerOptions{MCPServers: servers})
	assert.Equal(t, []string{"docs", "triage"}, w.Registry().MCPServers, "published sorted")
	assert.NoError(t, w.Validate())
	assert.Equal(t, []string{}, NewWorker(nil, WorkerOptions{}).Registry().MCPServers, "none declared: known to be none")

	w = NewWorker(nil, WorkerOptions{MCPServers: append(servers, mcptools.Server{Name: "docs", Command: []string{"x"}})})
	assert.ErrorContains(t, w.Validate(), `MCPServers: mcp server "docs" declared twice`)
	w = NewWorker(nil, WorkerOptions{MCPServers: []mcptools.Server{{Name: "empty"}}})
	assert.ErrorContains(t, w.Validate(), "MCPServers:")
}

func TestWorkerMCPPoolLifetime(t *testing.T) {
	w := NewWorker(nil, WorkerOptions{MCPServers: []mcptools.Server{{Name: "triage", Command: []string{"triage-tools"}}}})
	assert.NoError(t, w.openMCP())
	pool := w.opts.mcp
	assert.NotNil(t, pool)
	assert.NoError(t, w.openMCP())
	assert.Same(t, pool, w.opts.mcp, "opened once")
	w.closeMCP()
	assert.Nil(t, w.opts.mcp)
	_, err := pool.ListTools(t.Context(), "triage")
	assert.ErrorIs(t, err, mcptools.ErrClosed)
}

// namesRegistry keeps the names of what is registered.
type namesRegistry struct{ names *[]string }

func (namesRegistry) RegisterActivity(any) {}
func (r namesRegistry) RegisterActivityWithOptions(_ any, o activity.RegisterOptions) {
	*r.names = append(*r.names, o.Name)
}
func (namesRegistry) RegisterDynamicActivity(any, activity.DynamicRegisterOptions) {}

func TestMCPActivitiesRegisteredWithServers(t *testing.T) {
	var names []string
	require.NoError(t, RegisterActivities(namesRegistry{&names}, WorkerOptions{Providers: map[string]llm.Provider{}}))
	assert.NotContains(t, names, activities.MCPCallActivity, "no servers, no MCP activities")
	names = nil
	require.NoError(t, RegisterActivities(namesRegistry{&names}, WorkerOptions{Providers: map[string]llm.Provider{},
		MCPServers: []mcptools.Server{{Name: "triage", Command: []string{"triage-tools"}}}}))
	assert.Subset(t, names, []string{activities.MCPCatalogActivity, activities.MCPCallActivity, activities.MCPReadActivity})
}

func TestMCPCallIsAStepActivity(t *testing.T) {
	assert.True(t, isStepActivity(activities.MCPCallActivity), "its retries are step.retrying events")
	assert.False(t, isStepActivity(activities.MCPCatalogActivity))
}
