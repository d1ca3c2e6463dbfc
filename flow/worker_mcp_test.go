package flow

import (
	"testing"

	"github.com/stretchr/testify/assert"

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
	assert.Nil(t, NewWorker(nil, WorkerOptions{}).Registry().MCPServers)

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
