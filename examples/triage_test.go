package examples_test

import (
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
// answers, the MCP server declared (its tool steps mocked by the tests), and a local
// health endpoint.
func triageEnv(t *testing.T) (*testsuite.Env, string) {
	t.Helper()
	health := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	t.Cleanup(health.Close)
	env := testsuite.NewEnv(t, flow.WorkerOptions{Directory: examples.Directory(),
		MCPServers: []mcptools.Server{{Name: examples.TriageServer, Command: []string{"triage-tools"}}}})
	env.ScriptAgent(examples.ScriptedRules()...)
	return env, health.URL
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
	assert.Equal(t, []string{"triage", "turn-1", "lookup_runbook", "turn-2", "recent_deploys", "turn-3", "disk_usage", "check_health", "turn-4"},
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
			env.Approve(time.Minute, "approve-restart", "alice")
		} else {
			env.Reject(time.Minute, "approve-restart", "bob", "not during the sale")
		}
		out, r := testsuite.Run(env, examples.TriageAgent, examples.TriageInput{Service: "search", HealthURL: health})
		require.NoError(t, r.Err)
		for _, a := range env.Actions() {
			require.NoError(t, a.Err, a.What)
		}
		if approve {
			assert.Equal(t, "restarted search: 3 of 3 instances healthy", out.Action)
			assert.Equal(t, 1, env.Calls("triage/restart_service"))
		} else {
			assert.Equal(t, "restart refused: page the search on-call", out.Action)
			assert.Equal(t, 0, env.Calls("triage/restart_service"), "a rejected restart never runs")
		}
		assert.Equal(t, 3, out.Turns)
	}
}

// The definition (examples/flows/triage-agent.yaml) runs its shell and http tools for
// real: both in one turn, then the answer.
func TestExampleTriageAgentYAMLRuns(t *testing.T) {
	env, health := triageEnv(t)
	env.Register(examplesFlow(t, "triage-agent-yaml"))
	r := env.Run("triage-agent-yaml", map[string]any{"service": "checkout", "health_url": health})
	out := outputOf(t, r)
	assert.Equal(t, map[string]any{"severity": "medium", "cause": "not the disk nor the health endpoint",
		"action": "look at the recent deploys"}, out)
	assert.Equal(t, []string{"triage", "turn-1", "disk_usage", "check_health", "turn-2"}, r.StepNames())
	assert.Equal(t, 1, env.Calls("triage/disk_usage"))
	assert.Equal(t, 1, env.Calls("triage/check_health"))
	assert.True(t, r.Cost().IsPositive(), "the turns cost money")
	disk, ok := r.Step("disk_usage")
	require.True(t, ok)
	assert.Regexp(t, `^\d+% used on /`, disk.Output, "df ran on this machine")
}
