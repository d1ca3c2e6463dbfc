package examples_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/mcptools"
	"github.com/gateflow/gateflow/testsuite"
)

// triageEnv is a test environment for the triage agents: the examples' scripted
// answers, the MCP server declared (its catalog read, the step "tools", and its tool
// steps mocked by the tests), and a local health endpoint.
func triageEnv(t *testing.T) (*testsuite.Env, string) {
	t.Helper()
	health := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	t.Cleanup(health.Close)
	env := testsuite.NewEnv(t, flow.WorkerOptions{Directory: examples.Directory(),
		MCPServers: []mcptools.Server{{Name: examples.TriageServer, Command: []string{"triage-tools"}}}})
	env.ScriptAgent(examples.ScriptedRules()...)
	env.MockStep("tools", triageCatalog(t), nil)
	return env, health.URL
}

// triageCatalog is what examples/mcp/triage-tools lists: its three tools with their
// descriptions and input schemas.
func triageCatalog(t *testing.T) mcptools.Catalog {
	t.Helper()
	const service = `"service": {"type": "string", "description": "the service's name, such as checkout"}`
	destructive := true
	var c mcptools.Catalog
	require.NoError(t, c.Add(examples.TriageServer, []mcptools.Tool{
		{Name: "lookup_runbook", Description: "Returns the runbook of a service as text.",
			InputSchema: json.RawMessage(`{"type": "object", "required": ["service"], "additionalProperties": false, "properties": {` + service + `}}`),
			Annotations: &mcptools.Annotations{ReadOnly: true}},
		{Name: "recent_deploys", Description: "Lists the last deploys of a service, newest first.",
			InputSchema: json.RawMessage(`{"type": "object", "required": ["service"], "additionalProperties": false, "properties": {` + service + `,
 "limit": {"type": "integer", "minimum": 1, "maximum": 5, "description": "how many deploys, newest first (1 to 5, default 3)"}}}`),
			Annotations: &mcptools.Annotations{ReadOnly: true}},
		{Name: "restart_service", Description: "Restarts every instance of a service. Destructive: in-flight requests fail.",
			InputSchema: json.RawMessage(`{"type": "object", "required": ["service"], "additionalProperties": false, "properties": {` + service + `}}`),
			Annotations: &mcptools.Annotations{Destructive: &destructive}},
	}))
	return c
}

func TestExampleTriageAgentRuns(t *testing.T) {
	env, health := triageEnv(t)
	env.MockStep("lookup_runbook", mcptools.Result{Text: "# checkout\n2. If it rose after a deploy, roll the deploy back."}, nil)
	env.MockStep("recent_deploys", mcptools.Result{Structured: []byte(`{"service":"checkout","deploys":[{"version":"checkout-v1.9","by":"ana"}]}`)}, nil)
	env.Register(examples.TriageAgent)
	out, r := testsuite.Run(env, examples.TriageAgent, examples.TriageInput{Service: "checkout", HealthURL: health})
	require.NoError(t, r.Err)
	assert.Equal(t, examples.TriageOutput{Severity: "high", Cause: "deploy checkout-v1.9 by ana; the disk and the health endpoint are fine",
		Action: "roll back checkout-v1.9 (runbook step 2)", Turns: 4, ToolCalls: 4}, out)
	assert.Equal(t, []string{"triage", "tools", "turn-1", "lookup_runbook", "turn-2", "recent_deploys", "turn-3", "disk_usage", "check_health", "turn-4"},
		r.StepNames(), "one step per turn and per tool call")
	for _, step := range []string{"lookup_runbook", "recent_deploys", "disk_usage", "check_health"} {
		assert.Equal(t, 1, env.Calls("triage/"+step), step)
	}
	assert.Equal(t, 0, env.Calls("triage/restart_service"))
	// 2510 input and 135 output tokens at the scripted model's $1 and $2 per million.
	assert.Equal(t, "0.00278", r.Cost().String(), "the run costs the sum of its turns")
	assert.Equal(t, "0.00278", r.StepCost("triage").String())
}

// restart_service runs only after a person of group:release approved it; a rejection
// goes back to the model, which answers without the restart.
func TestExampleTriageAgentAsksBeforeRestart(t *testing.T) {
	for _, approve := range []bool{true, false} {
		env, health := triageEnv(t)
		env.MockStep("lookup_runbook", mcptools.Result{Text: "# search\n1. Check the index lag; above 5 minutes, restart the indexer."}, nil)
		env.MockStep("restart_service", mcptools.Result{Text: "restarted search: 3 of 3 instances healthy"}, nil)
		env.Register(examples.TriageAgent)
		if approve {
			env.Approve(time.Minute, "triage/restart_service", "alice")
		} else {
			env.Reject(time.Minute, "triage/restart_service", "bob", "not during the sale")
		}
		out, r := testsuite.Run(env, examples.TriageAgent, examples.TriageInput{Service: "search", HealthURL: health})
		require.NoError(t, r.Err)
		for _, a := range env.Actions() {
			require.NoError(t, a.Err, a.What)
		}
		steps := []string{"triage", "tools", "turn-1", "lookup_runbook", "turn-2", "approve-restart_service"}
		if approve {
			assert.Equal(t, "restarted search: 3 of 3 instances healthy", out.Action)
			assert.Equal(t, 1, env.Calls("triage/restart_service"))
			steps = append(steps, "restart_service")
		} else {
			assert.Equal(t, "restart refused: page the search on-call", out.Action)
			assert.Equal(t, 0, env.Calls("triage/restart_service"), "a rejected restart never runs")
		}
		assert.Equal(t, append(steps, "turn-3"), r.StepNames(), "the approval is a step of its own, before the tool")
		assert.Equal(t, 3, out.Turns)
	}
}

// The definition (examples/flows/triage-agent.yaml) is the same agent: the MCP server's
// catalog read once, its tools (mocked here), and the shell and http tools for real.
func TestExampleTriageAgentYAMLRuns(t *testing.T) {
	env, health := triageEnv(t)
	env.MockStep("lookup_runbook", mcptools.Result{Text: "# checkout\n2. If it rose after a deploy, roll the deploy back."}, nil)
	env.MockStep("recent_deploys", mcptools.Result{Structured: []byte(`{"service":"checkout","deploys":[{"version":"checkout-v1.9","by":"ana"}]}`)}, nil)
	env.Register(examplesFlow(t, "triage-agent-yaml"))
	r := env.Run("triage-agent-yaml", map[string]any{"service": "checkout", "health_url": health})
	out := outputOf(t, r)
	assert.Equal(t, map[string]any{"severity": "high", "cause": "deploy checkout-v1.9 by ana; the disk and the health endpoint are fine",
		"action": "roll back checkout-v1.9 (runbook step 2)"}, out)
	assert.Equal(t, []string{"triage", "tools", "turn-1", "lookup_runbook", "turn-2", "recent_deploys", "turn-3", "disk_usage", "check_health", "turn-4"},
		r.StepNames())
	for _, step := range []string{"tools", "lookup_runbook", "recent_deploys", "disk_usage", "check_health"} {
		assert.Equal(t, 1, env.Calls("triage/"+step), step)
	}
	assert.Equal(t, "0.00278", r.Cost().String(), "the same turns as the Go agent's, at the same price")
	disk, ok := r.Step("disk_usage")
	require.True(t, ok)
	assert.Regexp(t, `^\d+% used on /`, disk.Output, "df ran on this machine")
}

// The definition's restart_service waits at the gate triage/restart_service for
// group:release (approve: in its with:), as the Go agent's does; a vote from outside the
// group is refused.
func TestExampleTriageAgentYAMLAsksBeforeRestart(t *testing.T) {
	env, health := triageEnv(t)
	env.MockStep("lookup_runbook", mcptools.Result{Text: "# search\n1. Check the index lag; above 5 minutes, restart the indexer."}, nil)
	env.MockStep("restart_service", mcptools.Result{Text: "restarted search: 3 of 3 instances healthy"}, nil)
	env.Register(examplesFlow(t, "triage-agent-yaml"))
	outsider := env.Approve(30*time.Second, "triage/restart_service", "mallory")
	env.Approve(time.Minute, "triage/restart_service", "alice")
	r := env.Run("triage-agent-yaml", map[string]any{"service": "search", "health_url": health})
	out := outputOf(t, r)
	assert.Equal(t, "restarted search: 3 of 3 instances healthy", out["action"])
	require.Error(t, outsider.Err)
	assert.Contains(t, outsider.Err.Error(), "mallory may not decide (approvers: group:release)")
	assert.Equal(t, []string{"triage", "tools", "turn-1", "lookup_runbook", "turn-2", "approve-restart_service", "restart_service", "turn-3"},
		r.StepNames())
	assert.Equal(t, 1, env.Calls("triage/restart_service"))
}
