package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/mcptools"
	"github.com/gateflow/gateflow/runs"
	"github.com/gateflow/gateflow/testsuite"
	"github.com/gateflow/gateflow/testsuite/server"
)

// mcpTriage looks up a service's runbook and restarts it, two tools of an MCP server.
var mcpTriage = flow.Define("mcp-triage", func(ctx *flow.Context, service string) (string, error) {
	args, err := json.Marshal(map[string]string{"service": service})
	if err != nil {
		return "", err
	}
	book, err := ctx.MCP("runbook", activities.MCPCall{Server: "triage", Tool: "lookup_runbook", Args: args})
	if err != nil {
		return "", err
	}
	restart, err := ctx.MCP("restart", activities.MCPCall{Server: "triage", Tool: "restart_service", Args: args})
	if err != nil {
		return "", err
	}
	return book.Text + "\n" + restart.Text, nil
})

// TestMCPToolStepsRunOnceAndReplay: a worker with the example MCP server over stdio runs a
// flow whose steps call two of its tools; each tool runs once, the history holds the calls,
// and it replays with the server gone.
func TestMCPToolStepsRunOnceAndReplay(t *testing.T) {
	dir := t.TempDir()
	bin, count := filepath.Join(dir, "triage-tools"), filepath.Join(dir, "calls")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/gateflow/gateflow/examples/mcp/triage-tools").CombinedOutput()
	require.NoError(t, err, "building triage-tools: %s", out)
	servers := []mcptools.Server{{Name: "triage", Command: []string{bin, "--count-file", count}}}
	srv := server.Start(t, server.Options{Worker: flow.WorkerOptions{MCPServers: servers}}, mcpTriage)
	ctx := ctxT(t, 2*time.Minute)

	cat, err := srv.Client.Workflows(ctx)
	require.NoError(t, err)
	require.NotNil(t, cat.Workers)
	assert.Equal(t, []string{"triage"}, cat.Workers.MCPServers, "the worker publishes its MCP servers")

	run, err := srv.Client.Start(ctx, mcpTriage.Name(), "checkout", core.StartOptions{ID: "mcp-triage-checkout"})
	require.NoError(t, err)
	d, err := srv.Client.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, "error: %s", d.Error)
	var result string
	require.NoError(t, json.Unmarshal(d.Result, &result))
	assert.Contains(t, result, "restarted checkout: 3 of 3 instances healthy")
	for _, name := range []string{"runbook", "restart"} {
		s := stepNamed(t, d.State.Steps, name)
		assert.Equal(t, runs.KindMCP, s.Kind, name)
		assert.Equal(t, runs.StepCompleted, s.Status, name)
	}

	calls, err := os.ReadFile(count)
	require.NoError(t, err)
	assert.Equal(t, []string{"lookup_runbook checkout", "restart_service checkout"},
		strings.Split(strings.TrimSpace(string(calls)), "\n"), "each tool call ran exactly once")

	var scheduled []string
	hist := srv.Temporal.GetWorkflowHistory(ctx, run.ID, "", false, 0)
	for hist.HasNext() {
		ev, err := hist.Next()
		require.NoError(t, err)
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == activities.MCPCallActivity {
			scheduled = append(scheduled, a.GetActivityId())
		}
	}
	assert.Equal(t, []string{"runbook", "restart"}, scheduled, "the history holds the tool calls")

	// Replay with the server's binary gone: the tools' answers come from the history.
	path := filepath.Join(dir, "mcp-triage.json")
	require.NoError(t, srv.RecordHistory(ctx, run.ID, path))
	require.NoError(t, os.Remove(bin))
	require.NoError(t, testsuite.Replay(path, flow.WorkerOptions{MCPServers: servers}, mcpTriage))
	after, err := os.ReadFile(count)
	require.NoError(t, err)
	assert.Equal(t, string(calls), string(after), "the replay called no tool")
}
