package integration

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/flowdef/interp"
	"github.com/gateflow/gateflow/mcptools"
	"github.com/gateflow/gateflow/runs"
	"github.com/gateflow/gateflow/testsuite"
	"github.com/gateflow/gateflow/testsuite/server"
)

// triageTools caches the example MCP server's binary, built once per test binary.
var triageTools struct {
	once sync.Once
	path string
	err  error
}

// triageToolsBin is examples/mcp/triage-tools built: from GATEFLOW_BIN_DIR when the
// Makefile built it (make build), else built here once.
func triageToolsBin(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("GATEFLOW_BIN_DIR"); dir != "" {
		if p := filepath.Join(dir, "triage-tools"); fileExists(p) {
			return p
		}
	}
	triageTools.once.Do(func() {
		dir, err := os.MkdirTemp("", "gateflow-triage-tools-")
		if err != nil {
			triageTools.err = err
			return
		}
		triageTools.path = filepath.Join(dir, "triage-tools")
		out, err := exec.Command("go", "build", "-o", triageTools.path, "github.com/gateflow/gateflow/examples/mcp/triage-tools").CombinedOutput()
		if err != nil {
			triageTools.err = err
			triageTools.path = string(out)
		}
	})
	require.NoError(t, triageTools.err, "building triage-tools: %s", triageTools.path)
	return triageTools.path
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// healthServer is a local health endpoint answering "ok".
func healthServer(t *testing.T) string {
	t.Helper()
	h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	t.Cleanup(h.Close)
	return h.URL
}

// scheduledActivities are the IDs of the activities of steps under prefix the run's
// history scheduled, in order.
func scheduledActivities(t *testing.T, srv *server.Server, run, prefix string) []string {
	t.Helper()
	var ids []string
	hist := srv.Temporal.GetWorkflowHistory(ctxT(t, time.Minute), run, "", false, 0)
	for hist.HasNext() {
		ev, err := hist.Next()
		require.NoError(t, err)
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && strings.HasPrefix(a.GetActivityId(), prefix) {
			ids = append(ids, a.GetActivityId())
		}
	}
	return ids
}

// The triage-agent example (examples/triage.go) on the embedded server, with the example
// MCP server as a real process over stdio, the scripted provider and a local health
// endpoint: checkout goes through four turns and four tool calls, each its own activity,
// each MCP tool call made once, and the history replays with the server gone; search asks
// a person before restart_service, which runs once when approved and never when rejected.
func TestTriageAgentExample(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(dir, "calls")
	servers := []mcptools.Server{{Name: examples.TriageServer, Command: []string{triageToolsBin(t), "--count-file", count}}}
	srv := server.Start(t, server.Options{Worker: flow.WorkerOptions{MCPServers: servers,
		Providers: examples.Providers(), Directory: examples.Directory()}}, examples.All()...)
	ctx := ctxT(t, 3*time.Minute)
	health := healthServer(t)
	start := func(id, service string) {
		_, err := srv.Client.Start(ctx, "triage-agent", examples.TriageInput{Service: service, HealthURL: health}, core.StartOptions{ID: id})
		require.NoError(t, err)
	}
	wait := func(id string) (*runs.Description, examples.TriageOutput) {
		d, err := srv.Client.Wait(ctx, id)
		require.NoError(t, err)
		require.Equal(t, runs.StatusCompleted, d.Status, "error: %s", d.Error)
		var out examples.TriageOutput
		require.NoError(t, json.Unmarshal(d.Result, &out))
		return d, out
	}

	start("triage-checkout", "checkout")
	d, out := wait("triage-checkout")
	assert.Equal(t, examples.TriageOutput{Severity: "high", Cause: "deploy checkout-v1.9 by ana; the disk and the health endpoint are fine",
		Action: "roll back checkout-v1.9 (runbook step 2)", Turns: 4, ToolCalls: 4}, out)
	assert.Equal(t, []string{"triage/tools", "triage/turn-1", "triage/lookup_runbook", "triage/turn-2", "triage/recent_deploys", "triage/turn-3",
		"triage/disk_usage", "triage/check_health", "triage/turn-4"}, scheduledActivities(t, srv, "triage-checkout", "triage/"),
		"one catalog read, one activity per turn and per tool call")
	assert.Equal(t, runs.KindMCP, stepNamed(t, d.State.Steps, "tools").Kind)
	assert.Equal(t, "0.00278", d.State.CostUSD.String(), "the run costs its four turns")
	assert.Equal(t, runs.KindMCP, stepNamed(t, d.State.Steps, "recent_deploys").Kind)
	assert.Contains(t, stepNamed(t, d.State.Steps, "recent_deploys").Output, "checkout-v1.9")
	assert.Regexp(t, `^\d+% used on /`, stepNamed(t, d.State.Steps, "disk_usage").Output)

	path := filepath.Join(dir, "triage-agent.json")
	require.NoError(t, srv.RecordHistory(ctx, "triage-checkout", path))
	before, err := os.ReadFile(count)
	require.NoError(t, err)
	require.NoError(t, testsuite.Replay(path, flow.WorkerOptions{MCPServers: servers}, examples.All()...))
	after, err := os.ReadFile(count)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "the replay called no tool")

	// search: the runbook says restart; restart_service waits for group:release.
	for _, approve := range []bool{true, false} {
		id := map[bool]string{true: "triage-search-approved", false: "triage-search-rejected"}[approve]
		start(id, "search")
		dw := eventually(t, srv.Client, id, "waits for the approval of the restart", waitingFor("approval:triage/restart_service"))
		require.Len(t, dw.State.Gates, 1)
		assert.Equal(t, `Run tool restart_service with {"service":"search"}?`, dw.State.Gates[0].Request.Message)
		assert.Equal(t, []string{"group:release"}, dw.State.Gates[0].Request.Approvers)
		vote := approval.Vote{Gate: "triage/restart_service", Kind: approval.Approve, By: "carol"}
		if !approve {
			vote = approval.Vote{Gate: "triage/restart_service", Kind: approval.Reject, By: "bob", Comment: "not during the sale"}
		}
		_, err := srv.Client.Vote(ctx, id, vote)
		require.NoError(t, err)
		_, out := wait(id)
		if approve {
			assert.Equal(t, "restarted search: 3 of 3 instances healthy", out.Action)
		} else {
			assert.Equal(t, "restart refused: page the search on-call", out.Action)
		}
	}
	calls, err := os.ReadFile(count)
	require.NoError(t, err)
	assert.Equal(t, []string{"lookup_runbook checkout", "recent_deploys checkout", "lookup_runbook search", "restart_service search", "lookup_runbook search"},
		strings.Split(strings.TrimSpace(string(calls)), "\n"), "each tool call ran once; the rejected restart never")
}

// runTriageAgentYAMLExample runs examples/flows/triage-agent.yaml, the same agent as
// triage-agent, with the example MCP server as a real process: for checkout the catalog
// read, four turns and four tool calls, and the history replays; for search the restart
// waits at the gate triage/restart_service and runs once carol approved it.
func runTriageAgentYAMLExample(t *testing.T, c *flowclient.Client) {
	ctx := ctxT(t, 2*time.Minute)
	health := healthServer(t)
	run, err := c.Start(ctx, "triage-agent-yaml", map[string]any{"service": "checkout", "health_url": health}, core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.JSONEq(t, `{"severity": "high", "cause": "deploy checkout-v1.9 by ana; the disk and the health endpoint are fine", `+
		`"action": "roll back checkout-v1.9 (runbook step 2)"}`, string(d.Result))
	assert.Equal(t, []string{"triage", "tools", "turn-1", "lookup_runbook", "turn-2", "recent_deploys", "turn-3", "disk_usage", "check_health", "turn-4"},
		stepNames(d))
	assert.Contains(t, stepNamed(t, d.State.Steps, "recent_deploys").Output, "checkout-v1.9", "the real server answered")
	assert.Equal(t, "ok", stepNamed(t, d.State.Steps, "check_health").Output)
	assert.Equal(t, "0.00278", d.State.CostUSD.String(), "the run costs its four turns, as the Go agent's")
	replayTriageYAML(t, run.ID)

	run, err = c.Start(ctx, "triage-agent-yaml", map[string]any{"service": "search", "health_url": health}, core.StartOptions{})
	require.NoError(t, err)
	eventually(t, c, run.ID, "waits for the approval of the restart", waitingFor("approval:triage/restart_service"))
	_, err = c.Vote(ctx, run.ID, approval.Vote{Gate: "triage/restart_service", Kind: approval.Approve, By: "mallory"})
	require.ErrorContains(t, err, "mallory may not decide (approvers: group:release)")
	_, err = c.Vote(ctx, run.ID, approval.Vote{Gate: "triage/restart_service", Kind: approval.Approve, By: "carol"})
	require.NoError(t, err)
	d, err = c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.Equal(t, "restarted search: 3 of 3 instances healthy", stepNamed(t, d.State.Steps, "restart_service").Output)
	assert.Equal(t, []string{"triage", "tools", "turn-1", "lookup_runbook", "turn-2", "approve-restart_service", "restart_service", "turn-3"},
		stepNames(d))
}

// replayTriageYAML replays run's history on examples/flows/triage-agent.yaml with the
// example MCP server declared by name (as the workers that ran it; never started).
func replayTriageYAML(t *testing.T, run string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(examplesFlowsDir, "triage-agent.yaml"))
	require.NoError(t, err)
	def, err := flowdef.Parse("triage-agent.yaml", src)
	require.NoError(t, err)
	f, err := interp.Flow(def, interp.DefaultModel(llm.ProviderScripted))
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "history.json")
	require.NoError(t, testsuite.RecordHistory(ctxT(t, time.Minute), shared.tc, run, file))
	assert.NoError(t, testsuite.Replay(file, flow.WorkerOptions{MCPServers: []mcptools.Server{{Name: examples.TriageServer, Command: []string{"triage-tools"}}}}, f),
		"the history of %s replays", run)
}
