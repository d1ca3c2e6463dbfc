package interp_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/runs"
	"github.com/gateflow/gateflow/testsuite"
)

var (
	restartsMu sync.Mutex
	restarts   []string
)

func restartAction(_ context.Context, in hostArgs) (string, error) {
	restartsMu.Lock()
	defer restartsMu.Unlock()
	restarts = append(restarts, in.Host)
	return "restarted " + in.Host, nil
}

const agentApproveYAML = `
name: approve-yaml
steps:
  - id: triage
    uses: agent
    with:
      prompt: "db is slow"
      approve: [restart]
      approvers: [alice]
      tools:
        - action: restart
          parameters: {type: object, properties: {host: {type: string}}, required: [host], additionalProperties: false}
        - input: {prompt: "The agent asks:", approvers: [bob]}
  - {id: done, finish: {output: {answer: "${{ steps.triage.output }}"}}}
`

// A YAML agent whose restart tool waits for alice: rejected, the model is told; approved
// with edits, it runs with them; its question goes to bob through the input tool.
func TestAgentApproveAndInputToolInYAML(t *testing.T) {
	def := parse(t, agentApproveYAML)
	require.NoError(t, flowdef.Validate(def, &flowdef.StaticRegistry{Actions: []string{"restart"}}))
	restarts = nil
	r := run(t, agentApproveYAML, nil, func(e *testsuite.Env) {
		e.RegisterActivity(restartAction, "restart")
		e.ScriptAgent(
			llm.ScriptRule{Turn: 1, Text: "restart db-1", ToolCalls: []llm.ToolCall{{Name: "restart", Arguments: json.RawMessage(`{"host":"db-1"}`)}}},
			llm.ScriptRule{Turn: 2, AfterTool: "restart", ResultMatch: "alice rejected it: not db-1",
				ToolCalls: []llm.ToolCall{{Name: "restart", Arguments: json.RawMessage(`{"host":"db-2"}`)}}},
			llm.ScriptRule{Turn: 3, AfterTool: "restart", ResultMatch: "restarted db-9",
				ToolCalls: []llm.ToolCall{{Name: "ask_human", Arguments: json.RawMessage(`{"question":"is it fast now?"}`)}}},
			llm.ScriptRule{Turn: 4, AfterTool: "ask_human", ResultMatch: "yes, fast", Text: "fixed"},
		)
		e.Vote(time.Minute, approval.Vote{Gate: "triage/restart", Kind: approval.Reject, By: "alice", Comment: "not db-1"})
		e.Vote(2*time.Minute, approval.Vote{Gate: "triage/restart#2", Kind: approval.Approve, By: "bob"}) // not an approver
		e.Vote(3*time.Minute, approval.Vote{Gate: "triage/restart#2", Kind: approval.Approve, By: "alice", Arguments: json.RawMessage(`{"host":"db-9"}`)})
		e.Answer(4*time.Minute, "ask_human", "yes, fast", "bob")
	})
	require.NoError(t, r.Err)
	assert.Equal(t, runs.StatusCompleted, r.Status())
	assert.Equal(t, map[string]any{"answer": "fixed"}, output(t, r))
	assert.Equal(t, []string{"db-9"}, restarts)
	assert.Equal(t, []string{"triage", "triage/turn-1", "triage/approve-restart", "triage/turn-2", "triage/approve-restart#2",
		"triage/restart", "triage/turn-3", "triage/ask_human", "triage/turn-4"}, activityIDs(r))
	require.Len(t, r.State.Gates, 2)
	assert.Equal(t, []string{"alice"}, r.State.Gates[0].Request.Approvers)
	assert.Equal(t, "restart db-1", r.State.Gates[0].Request.Tool.Reason)
}
