package serve

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/mcptools"
)

const agentMCP = `name: triage
steps:
  - id: triage
    uses: agent
    with:
      prompt: p
      reads: [{mcp: triage, uri: 'runbook://checkout'}]
      tools:
        - {mcp: triage, tool: lookup_runbook}
`

// A worker loads a definition whose agent names its MCP servers, and refuses one naming a
// server it does not declare (at line:col), or any server when it declares none.
func TestDirChecksAgentMCPServersAgainstTheWorkers(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "triage.yaml", agentMCP)
	triage := []mcptools.Server{{Name: "triage", Command: []string{"never-started"}}}
	w := flow.NewWorker(nil, flow.WorkerOptions{MCPServers: triage})
	l, err := Dir(w, dir, Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{"triage"}, l.Names())

	for _, opts := range []flow.WorkerOptions{
		{MCPServers: []mcptools.Server{{Name: "docs", Command: []string{"never-started"}}}},
		{},
	} {
		w := flow.NewWorker(nil, opts)
		_, err := Dir(w, dir, Options{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "triage.yaml:7:")
		assert.Contains(t, err.Error(), "triage.yaml:9:")
		assert.Contains(t, err.Error(), "no MCP server 'triage' on the workers")
		assert.Empty(t, w.Flows(), "nothing is added when a file is invalid")
	}
}
