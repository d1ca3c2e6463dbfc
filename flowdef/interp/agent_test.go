package interp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/runs"
	"github.com/gateflow/gateflow/testsuite"
)

type hostArgs struct {
	Host string `json:"host"`
}

// lookupAction is a registered action used as an agent tool.
func lookupAction(_ context.Context, in hostArgs) (string, error) { return "10.0.0." + in.Host, nil }

const agentLoopYAML = `
name: triage
steps:
  - id: triage
    uses: agent
    with:
      prompt: "are hosts 1 and 2 up?"
      max_turns: 5
      context: [the hosts are in rack 4]
      tools:
        - action: lookup
          description: the address of a host
          parameters: {type: object, properties: {host: {type: string}}, required: [host]}
        - name: ping
          description: pings an address
          shell: {command: 'echo "pong $addr"'}
          params: [{name: addr, description: the address, required: true}]
  - {id: done, finish: {output: {answer: "${{ steps.triage.output }}"}}}
`

// A 3-turn loop in YAML: an action tool, then a shell tool, then the answer; each turn
// and each tool call a step nested under the agent step, whose output is the answer.
func TestAgentLoopWithActionAndShellTools(t *testing.T) {
	def := parse(t, agentLoopYAML)
	require.NoError(t, flowdef.Validate(def, &flowdef.StaticRegistry{Actions: []string{"lookup"}}))
	r := run(t, agentLoopYAML, nil, func(e *testsuite.Env) {
		e.RegisterActivity(lookupAction, "lookup")
		e.ScriptAgent(
			llm.ScriptRule{Turn: 1, ToolCalls: []llm.ToolCall{{Name: "lookup", Arguments: json.RawMessage(`{"host":"1"}`)}}},
			llm.ScriptRule{Turn: 2, AfterTool: "lookup", ResultMatch: "10.0.0.1",
				ToolCalls: []llm.ToolCall{{Name: "ping", Arguments: json.RawMessage(`{"addr":"10.0.0.1"}`)}}},
			llm.ScriptRule{Turn: 3, AfterTool: "ping", ResultMatch: "pong 10.0.0.1", Text: "host 1 is up"},
		)
	})
	require.NoError(t, r.Err)
	assert.Equal(t, runs.StatusCompleted, r.Status())
	assert.Equal(t, map[string]any{"answer": "host 1 is up"}, output(t, r))
	assert.Equal(t, []string{"triage", "triage/turn-1", "triage/lookup", "triage/turn-2", "triage/ping", "triage/turn-3"}, activityIDs(r))
	st, ok := r.Step("triage")
	require.True(t, ok)
	assert.Equal(t, runs.StepCompleted, st.Status)
	assert.True(t, st.CostUSD.Equal(r.Cost()), "the agent step holds the run's cost: %s, %s", st.CostUSD, r.Cost())
}

// Without loop keys an agent step stays one gateflow.agent call.
func TestAgentWithoutToolsIsOneCall(t *testing.T) {
	r := run(t, `
name: single
steps:
  - {id: ask, uses: agent, with: {prompt: "hello"}}
`, nil, func(e *testsuite.Env) { e.ScriptAgent(llm.ScriptRule{Text: "hi"}) })
	require.NoError(t, r.Err)
	assert.Equal(t, []string{"ask"}, r.StepNames())
}

// think: true asks for a JSON answer: the output is the object.
func TestAgentThink(t *testing.T) {
	r := run(t, `
name: think
steps:
  - {id: plan, uses: agent, with: {prompt: "plan it", think: true}}
  - {id: done, finish: {output: {steps: "${{ steps.plan.output.steps }}"}}}
`, nil, func(e *testsuite.Env) { e.ScriptAgent(llm.ScriptRule{Text: `{"steps": 3}`}) })
	assert.Equal(t, map[string]any{"steps": float64(3)}, output(t, r))
}

// on_limit: answer makes a last turn without tools at the turn limit.
func TestAgentOnLimitAnswer(t *testing.T) {
	r := run(t, `
name: limited
steps:
  - id: triage
    uses: agent
    with:
      prompt: "look it up"
      max_turns: 1
      on_limit: answer
      tools: [{action: lookup}]
`, nil, func(e *testsuite.Env) {
		e.RegisterActivity(lookupAction, "lookup")
		e.ScriptAgent(
			llm.ScriptRule{Turn: 1, ToolCalls: []llm.ToolCall{{Name: "lookup", Arguments: json.RawMessage(`{"host":"1"}`)}}},
			llm.ScriptRule{Turn: 2, Text: "probably up"},
		)
	})
	require.NoError(t, r.Err)
	assert.Equal(t, []string{"triage", "triage/turn-1", "triage/lookup", "triage/turn-2"}, activityIDs(r))
	assert.Equal(t, runs.StatusCompleted, r.Status())
}

// activityIDs are the IDs of a run's step records, nested steps as <parent>/<name>.
func activityIDs(r *testsuite.Result) []string {
	var ids []string
	for _, s := range r.State.Steps {
		ids = append(ids, s.ActivityID)
	}
	return ids
}

// An http tool: the model fills the declared params, sent as query parameters.
func TestAgentLoopHTTPTool(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("status of " + r.URL.Query().Get("host") + ": up"))
	}))
	defer srv.Close()
	r := run(t, `
name: web
steps:
  - id: ask
    uses: agent
    with:
      prompt: "is host 7 up?"
      tools:
        - name: status
          http: {url: "`+srv.URL+`/status", expect_status: [200]}
          params: [{name: host, required: true}]
`, nil, func(e *testsuite.Env) {
		e.ScriptAgent(
			llm.ScriptRule{Turn: 1, ToolCalls: []llm.ToolCall{{Name: "status", Arguments: json.RawMessage(`{"host":"7"}`)}}},
			llm.ScriptRule{Turn: 2, ResultMatch: "status of 7: up", Text: "yes"},
		)
	})
	require.NoError(t, r.Err)
	assert.Equal(t, []string{"ask", "ask/turn-1", "ask/status", "ask/turn-2"}, activityIDs(r))
}
