package activities

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/activities/llm"
)

const turnToolCallsBody = `{"id":"c1","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"finish_reason":"tool_calls",
"message":{"role":"assistant","content":null,"tool_calls":[
{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"host\": \"a\"}"}},
{"id":"call_2","type":"function","function":{"name":"lookup","arguments":"{\"host\":\"b\"}"}}]}}],
"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120}}`

func turnActivities(srvURL string) *AgentActivities {
	return &AgentActivities{Router: llm.NewRouter(map[string]llm.Provider{
		"openai": llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srvURL + "/v1", APIKey: "k"})}), Prices: llm.DefaultPrices()}
}

func turnInput() AgentTurn {
	return AgentTurn{Model: "gpt-4o-mini", Messages: []llm.Message{llm.UserMessage("check hosts a and b")},
		Tools: []llm.Tool{{Name: "lookup", Description: "looks a host up", Parameters: json.RawMessage(`{"type":"object"}`)}}}
}

func TestAgentTurnReturnsToolCallsPriced(t *testing.T) {
	srv := newAgentFakeProvider(t, http.StatusOK, nil, turnToolCallsBody, 0)
	res, err := turnActivities(srv.URL).RunAgentTurn(context.Background(), turnInput())
	require.NoError(t, err)
	require.Len(t, res.ToolCalls, 2)
	require.Equal(t, "call_1", res.ToolCalls[0].ID)
	require.JSONEq(t, `{"host":"a"}`, string(res.ToolCalls[0].Arguments))
	require.Equal(t, llm.StopToolUse, res.Stop)
	require.Equal(t, llm.Usage{InputTokens: 100, OutputTokens: 20}, res.Usage)
	price, ok := llm.DefaultPrices().Lookup("gpt-4o-mini")
	require.True(t, ok)
	require.True(t, res.CostKnown)
	require.True(t, price.Cost(res.Usage).Equal(res.CostUSD), "%s", res.CostUSD)
	require.Equal(t, &price, res.Price)
	require.True(t, strings.Contains(srv.bodies[0], `"tools"`), srv.bodies[0])
}

func TestAgentTurnRefusesOverBudgetBeforeCalling(t *testing.T) {
	srv := newAgentFakeProvider(t, http.StatusOK, nil, turnToolCallsBody, 0)
	in := turnInput()
	in.MaxBudgetUSD = decimal.RequireFromString("0.0000001")
	_, err := turnActivities(srv.URL).RunAgentTurn(context.Background(), in)
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	require.Equal(t, AgentBudgetErrorType, app.Type())
	require.Empty(t, srv.bodies, "the provider was called")
}

func TestAgentTurnValidate(t *testing.T) {
	require.ErrorContains(t, AgentTurn{Messages: []llm.Message{llm.UserMessage("x")}}.Validate(), "agent: model is empty")
	require.ErrorContains(t, AgentTurn{Model: "m"}.Validate(), "conversation is empty")
	require.NoError(t, turnInput().Validate())
	in := turnInput()
	in.ResponseSchema = json.RawMessage(`[1]`)
	require.ErrorContains(t, in.Validate(), "must be a JSON object")
}

func TestAgentTurnFinalAnswerChecksSchema(t *testing.T) {
	body := `{"id":"c2","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"finish_reason":"stop",
"message":{"role":"assistant","content":"{\"ok\":\"yes\"}"}}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`
	srv := newAgentFakeProvider(t, http.StatusOK, nil, body, 0)
	in := turnInput()
	in.ResponseSchema = json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)
	_, err := turnActivities(srv.URL).RunAgentTurn(context.Background(), in)
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	require.Equal(t, AgentSchemaErrorType, app.Type())
}
