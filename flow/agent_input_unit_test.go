package flow

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/signals"
)

func TestInputToolAsksAPerson(t *testing.T) {
	req := signals.InputRequest{Prompt: "The triage agent asks:", Assignees: []string{"alice"},
		Schema: json.RawMessage(`{"type":"string","minLength":2}`)}
	a := AgentLoop{Agent: activities.Agent{Prompt: "fix prod", Model: "m"}, Tools: []Tool{InputTool("ask", req)}}
	env, turns, f := approveEnv(t, runConfig{}, a, func(n int, _ activities.AgentTurn) (activities.AgentTurnResult, error) {
		switch n {
		case 1:
			return turnAnswer("", toolCall("c1", "ask", `{"question":"May I restart db-1?"}`), toolCall("c2", "ask", `{"question":"Which region?"}`)), nil
		case 2:
			return turnAnswer("", toolCall("c3", "ask", `{"question":""}`), toolCall("c4", "ask", `{"q":"x"}`)), nil
		}
		return turnAnswer("restarted"), nil
	})
	min := func(m int) time.Duration { return time.Duration(m) * time.Minute }
	open := stateAt(t, env, min(1))
	notAssigned := updateAt(env, min(2), protocol.UpdateInput, protocol.InputAnswer{Name: "ask", Data: json.RawMessage(`"yes"`), By: "bob"})
	badSchema := updateAt(env, min(3), protocol.UpdateInput, protocol.InputAnswer{Name: "ask", Data: json.RawMessage(`{"ok":true}`), By: "alice"})
	yes := updateAt(env, min(4), protocol.UpdateInput, protocol.InputAnswer{Name: "ask", Data: json.RawMessage(`"yes, restart it"`), By: "alice"})
	region := updateAt(env, min(5), protocol.UpdateInput, protocol.InputAnswer{Name: "ask#2", Data: json.RawMessage(`"eu-west"`), By: "alice"})

	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())

	require.Len(t, open.Inputs, 2)
	assert.Equal(t, "ask", open.Inputs[0].Name)
	assert.Equal(t, "The triage agent asks:\n\nMay I restart db-1?", open.Inputs[0].Request.Prompt)
	assert.Equal(t, "ask#2", open.Inputs[1].Name)
	assert.Equal(t, "The triage agent asks:\n\nWhich region?", open.Inputs[1].Request.Prompt)
	assert.Error(t, notAssigned.refusal(t))
	assert.Error(t, badSchema.refusal(t))
	yes.value(t)
	region.value(t)

	all := turns.all()
	require.Len(t, all, 3)
	assert.Equal(t, llm.ToolResult("c1", "yes, restart it", false), all[1].Messages[2])
	assert.Equal(t, llm.ToolResult("c2", "eu-west", false), all[1].Messages[3])
	bad := all[2].Messages[len(all[2].Messages)-2:]
	assert.True(t, bad[0].IsError)
	assert.Contains(t, bad[0].Text, "the question is empty")
	assert.True(t, bad[1].IsError)
	assert.Contains(t, bad[1].Text, `unknown field "q"`)
	assert.Len(t, all[0].Tools, 1)
	assert.JSONEq(t, inputToolParameters, string(all[0].Tools[0].Parameters))
}
