package flow

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/internal/protocol"
)

// verdict is a typed choice: Decide returns any string type.
type verdict string

type decideIn struct {
	Req DecisionRequest `json:"req"`
}

var decideFlow = Define("unit/decide", func(ctx *Context, in decideIn) (verdict, error) {
	return Decide[verdict](ctx, "ship-or-hold", in.Req)
})

func agentDecision() DecisionRequest {
	return DecisionRequest{Options: []string{"ship", "hold"}, Prompt: "Ship v1.2?", Model: "gpt-4o-mini",
		System: "You are the release manager.", MaxBudgetUSD: decimal.RequireFromString("0.05")}
}

func decisionResult(text string, attempt int, cost string) activities.AgentResult {
	return activities.AgentResult{Text: text, JSON: json.RawMessage(text), Model: "gpt-4o-mini-2024-07-18", Provider: "openai",
		Attempt: attempt, CostUSD: dec(cost), CostKnown: true, Usage: llm.Usage{InputTokens: 100, OutputTokens: 20}}
}

func TestDecideByAgentPicksAnOption(t *testing.T) {
	env := newUnitEnv(t, runConfig{}, decideFlow)
	calls := mockAgent(env, func(activities.Agent) (activities.AgentResult, error) {
		return decisionResult(`{"choice":"hold","reason":"the tests are red"}`, 1, "0.002"), nil
	})
	env.ExecuteWorkflow(decideFlow.Name(), decideIn{Req: agentDecision()})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var out verdict
	require.NoError(t, env.GetWorkflowResult(&out))
	assert.Equal(t, verdict("hold"), out)

	require.Len(t, calls.all(), 1)
	a := calls.all()[0]
	assert.Equal(t, "gpt-4o-mini", a.Model)
	assert.Equal(t, "You are the release manager.", a.System)
	assert.True(t, a.MaxBudgetUSD.Equal(dec("0.05")))
	assert.Contains(t, a.Prompt, "Ship v1.2?")
	assert.Contains(t, a.Prompt, `Choose exactly one of these options: "ship", "hold".`)
	assert.JSONEq(t, `{"type":"object","properties":{"choice":{"enum":["ship","hold"]},"reason":{"type":"string"}},"required":["choice"]}`,
		string(a.ResponseSchema))

	st := queryState(t, env)
	d := stepByName(t, st, "ship-or-hold")
	assert.Equal(t, runs.KindDecision, d.Kind)
	assert.Equal(t, runs.StepCompleted, d.Status)
	require.NotNil(t, d.Decision)
	assert.Equal(t, runs.Decision{Options: []string{"ship", "hold"}, Choice: "hold", Reason: "the tests are red",
		By: "agent:gpt-4o-mini-2024-07-18"}, *d.Decision)
	assert.Equal(t, `chose "hold" (by agent:gpt-4o-mini-2024-07-18): the tests are red`, d.Output)
	assert.Equal(t, "0.002", d.CostUSD.String(), "the decision costs what its call cost")
	assert.Equal(t, "0.002", st.CostUSD.String())
	assert.Equal(t, runs.Tokens{Input: 100, Output: 20}, st.Tokens)
}

func TestDecideByAgentRetriesAnAnswerOutsideTheOptions(t *testing.T) {
	env := newUnitEnv(t, runConfig{}, decideFlow)
	var attempts []int32
	env.OnActivity(activities.AgentActivity, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, a activities.Agent) (activities.AgentResult, error) {
			// The run makes each attempt of a cost-bearing step as its own activity.
			n := int32(len(attempts) + 1)
			attempts = append(attempts, n)
			if n == 1 {
				// What RunAgent returns when the answer does not match the schema.
				paid := decisionResult(`{"choice":"maybe"}`, 1, "0.001")
				return paid, temporal.NewApplicationError(`agent: the answer does not match the response schema (at /choice: want one of "ship", "hold", got "maybe")`,
					activities.AgentSchemaErrorType, paid)
			}
			return decisionResult(`{"choice":"ship","reason":"all green"}`, int(n), "0.002"), nil
		})
	env.ExecuteWorkflow(decideFlow.Name(), decideIn{Req: agentDecision()})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var out verdict
	require.NoError(t, env.GetWorkflowResult(&out))
	assert.Equal(t, verdict("ship"), out)
	assert.Equal(t, []int32{1, 2}, attempts, "the schema error is retried")

	d := stepByName(t, queryState(t, env), "ship-or-hold")
	assert.Equal(t, runs.StepCompleted, d.Status)
	assert.Equal(t, 2, d.Attempt)
	require.NotNil(t, d.Decision)
	assert.Equal(t, "ship", d.Decision.Choice)
	assert.Equal(t, "0.003", d.CostUSD.String(), "both paid calls are charged: the refused one and the one that decided")
	require.Len(t, d.Attempts, 2)
	assert.Contains(t, d.Attempts[0].Error, "does not match the response schema")
}

func TestDecideByAgentRefusesAChoiceThatIsNoOption(t *testing.T) {
	// A mocked step (or a provider that ignores the schema) can hand back any choice: the
	// decision checks it again.
	env := newUnitEnv(t, runConfig{}, decideFlow)
	mockAgent(env, func(activities.Agent) (activities.AgentResult, error) {
		return decisionResult(`{"choice":"later"}`, 1, "0.001"), nil
	})
	env.ExecuteWorkflow(decideFlow.Name(), decideIn{Req: agentDecision()})
	require.True(t, env.IsWorkflowCompleted())
	err := env.GetWorkflowError()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `decision ship-or-hold: the choice "later" is not one of the options "ship", "hold"`)
	st := queryState(t, env)
	d := stepByName(t, st, "ship-or-hold")
	assert.Equal(t, runs.StepFailed, d.Status)
	require.NotNil(t, d.Decision)
	assert.Empty(t, d.Decision.Choice)
	assert.Equal(t, "0.001", st.CostUSD.String(), "the call was paid for")
}

func TestDecideRefusesBadRequestsBeforeAnythingRuns(t *testing.T) {
	people := func(r DecisionRequest) DecisionRequest {
		r.Model, r.System, r.MaxBudgetUSD = "", "", decimal.Zero
		r.AssignTo = []string{"alice", "group:release"}
		return r
	}
	with := func(f func(*DecisionRequest)) DecisionRequest {
		r := agentDecision()
		f(&r)
		return r
	}
	tests := []struct {
		name    string
		req     DecisionRequest
		wantErr string
	}{
		{"no options", with(func(r *DecisionRequest) { r.Options = nil }), "decision ship-or-hold: no options: give at least one"},
		{"blank option", with(func(r *DecisionRequest) { r.Options = []string{"ship", " "} }), "decision ship-or-hold: option 2 is blank"},
		{"repeated option", with(func(r *DecisionRequest) { r.Options = []string{"ship", "hold", "ship"} }),
			`decision ship-or-hold: option 3 ("ship") repeats option 1`},
		{"blank prompt", with(func(r *DecisionRequest) { r.Prompt = "\n" }), "decision ship-or-hold: prompt is empty"},
		{"agent without a model", with(func(r *DecisionRequest) { r.Model = "" }),
			"decision ship-or-hold: model is empty: an agent decides when AssignTo is empty"},
		{"negative timeout", with(func(r *DecisionRequest) { r.Timeout = -time.Second }), "decision ship-or-hold: timeout -1s is negative"},
		{"agent settings for people", func() DecisionRequest {
			r := people(agentDecision())
			r.Model = "gpt-4o"
			r.Provider = "openai"
			return r
		}(),
			"decision ship-or-hold: Model, Provider configure the agent that decides without AssignTo; people decide this one (AssignTo alice, group:release)"},
		{"blank assignee", func() DecisionRequest {
			r := people(agentDecision())
			r.AssignTo = []string{"alice", "group: "}
			return r
		}(),
			"decision ship-or-hold: assign to: entry 2 is blank"},
		{"people without options", func() DecisionRequest { r := people(agentDecision()); r.Options = []string{}; return r }(),
			"decision ship-or-hold: no options: give at least one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newPeopleEnv(t, decideFlow)
			calls := mockAgent(env, func(activities.Agent) (activities.AgentResult, error) {
				return decisionResult(`{"choice":"ship"}`, 1, "0.001"), nil
			})
			env.ExecuteWorkflow(decideFlow.Name(), decideIn{Req: tt.req})
			require.True(t, env.IsWorkflowCompleted())
			err := env.GetWorkflowError()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.Empty(t, calls.all(), "nothing was dispatched")
			st := queryState(t, env)
			d := stepByName(t, st, "ship-or-hold")
			assert.Equal(t, runs.KindDecision, d.Kind)
			assert.Equal(t, runs.StepFailed, d.Status)
			assert.Equal(t, tt.wantErr, d.Error)
			assert.Empty(t, st.Waiting, "nobody was asked")
			assert.True(t, st.CostUSD.IsZero())
		})
	}
}

func TestDecideByPeople(t *testing.T) {
	req := DecisionRequest{Options: []string{"ship", "hold"}, Prompt: "Ship v1.2?", AssignTo: []string{"alice", "group:release"}, Timeout: time.Hour}
	t.Run("an option as a string, by an assignee", func(t *testing.T) {
		env := newPeopleEnv(t, decideFlow)
		calls := mockAgent(env, func(activities.Agent) (activities.AgentResult, error) { return activities.AgentResult{}, nil })
		outside := updateAt(env, time.Minute, protocol.UpdateInput, protocol.InputAnswer{Name: "ship-or-hold", Data: json.RawMessage(`"maybe"`), By: "alice"})
		wrongType := updateAt(env, 2*time.Minute, protocol.UpdateInput, protocol.InputAnswer{Name: "ship-or-hold", Data: json.RawMessage(`{"reason":"x"}`), By: "alice"})
		stranger := updateAt(env, 3*time.Minute, protocol.UpdateInput, protocol.InputAnswer{Name: "ship-or-hold", Data: json.RawMessage(`"ship"`), By: "mallory"})
		during := stateAt(t, env, 4*time.Minute)
		good := updateAt(env, 5*time.Minute, protocol.UpdateInput, protocol.InputAnswer{Name: "ship-or-hold", Data: json.RawMessage(`"hold"`), By: "carol"})
		env.ExecuteWorkflow(decideFlow.Name(), decideIn{Req: req})
		require.True(t, env.IsWorkflowCompleted())
		require.NoError(t, env.GetWorkflowError())
		var out verdict
		require.NoError(t, env.GetWorkflowResult(&out))
		assert.Equal(t, verdict("hold"), out)
		assert.Empty(t, calls.all(), "people decide: no agent call")

		assert.ErrorContains(t, outside.refusal(t), `input "ship-or-hold": answer does not match the schema`)
		assert.ErrorContains(t, wrongType.refusal(t), `answer does not match the schema`)
		assert.ErrorContains(t, stranger.refusal(t), `"mallory" is not among the assignees`)
		good.value(t)
		assert.Equal(t, runs.StatusAwaitingInput, during.Status)
		assert.Equal(t, []string{"input:ship-or-hold"}, during.Waiting)
		dd := stepByName(t, *during, "ship-or-hold")
		require.NotNil(t, dd.Decision, "the options show while the run waits")
		assert.Equal(t, []string{"ship", "hold"}, dd.Decision.Options)

		st := queryState(t, env)
		d := stepByName(t, st, "ship-or-hold")
		assert.Equal(t, runs.KindDecision, d.Kind)
		assert.Equal(t, runs.StepCompleted, d.Status)
		require.NotNil(t, d.Decision)
		assert.Equal(t, runs.Decision{Options: []string{"ship", "hold"}, Choice: "hold", By: "carol",
			AssignTo: []string{"alice", "group:release"}}, *d.Decision)
		assert.Equal(t, `chose "hold" (by carol)`, d.Output)
		assert.True(t, st.CostUSD.IsZero())
	})
	t.Run("an object with a reason", func(t *testing.T) {
		env := newPeopleEnv(t, decideFlow)
		updateAt(env, time.Minute, protocol.UpdateInput, protocol.InputAnswer{Name: "ship-or-hold", Data: json.RawMessage(`{"choice":"ship","reason":"signed off"}`), By: "alice"})
		env.ExecuteWorkflow(decideFlow.Name(), decideIn{Req: req})
		require.True(t, env.IsWorkflowCompleted())
		require.NoError(t, env.GetWorkflowError())
		d := stepByName(t, queryState(t, env), "ship-or-hold")
		require.NotNil(t, d.Decision)
		assert.Equal(t, "ship", d.Decision.Choice)
		assert.Equal(t, "signed off", d.Decision.Reason)
		assert.Equal(t, "alice", d.Decision.By)
	})
	t.Run("nobody answers in time", func(t *testing.T) {
		env := newPeopleEnv(t, decideFlow)
		env.ExecuteWorkflow(decideFlow.Name(), decideIn{Req: req})
		require.True(t, env.IsWorkflowCompleted())
		err := env.GetWorkflowError()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "nobody answered within 1h0m0s")
		d := stepByName(t, queryState(t, env), "ship-or-hold")
		assert.Equal(t, runs.StepFailed, d.Status)
		require.NotNil(t, d.Decision)
		assert.Empty(t, d.Decision.Choice)
	})
}
