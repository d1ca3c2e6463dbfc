package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/gateflow/gateflow/activities/llm"
)

// agentFakeProvider is a real local HTTP server speaking a provider's wire format with one
// canned answer; it records the request bodies it received.
type agentFakeProvider struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
	auth   []string
}

func newAgentFakeProvider(t *testing.T, status int, headers map[string]string, body string, delay time.Duration) *agentFakeProvider {
	t.Helper()
	f := &agentFakeProvider{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.bodies = append(f.bodies, string(data))
		f.auth = append(f.auth, r.Header.Get("Authorization")+r.Header.Get("x-api-key"))
		f.mu.Unlock()
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *agentFakeProvider) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

func (f *agentFakeProvider) body(t *testing.T, i int) map[string]any {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Greater(t, len(f.bodies), i)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(f.bodies[i]), &m))
	return m
}

func agentOpenAIAnswer(content string, in, out int64, extraUsage string) string {
	c, _ := json.Marshal(content)
	return fmt.Sprintf(`{"model":"gpt-4o-mini-2024-07-18","choices":[{"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],
		"usage":{"prompt_tokens":%d,"completion_tokens":%d%s}}`, c, in, out, extraUsage)
}

func agentOpenAIActivities(srv *agentFakeProvider, key string) *AgentActivities {
	return &AgentActivities{
		Router: llm.NewRouter(map[string]llm.Provider{"openai": llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: key})}),
		Prices: llm.DefaultPrices(),
	}
}

func agentScriptedActivities(rules ...llm.ScriptRule) (*AgentActivities, *llm.Scripted) {
	s := llm.NewScripted(rules...)
	return &AgentActivities{Router: llm.NewRouter(map[string]llm.Provider{"scripted": s}), Prices: llm.DefaultPrices()}, s
}

func agentTestEnv(a *AgentActivities) (*testsuite.TestActivityEnvironment, *atomic.Int32) {
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(a.RunAgent, activity.RegisterOptions{Name: AgentActivity})
	var heartbeats atomic.Int32
	env.SetOnActivityHeartbeatListener(func(*activity.Info, converter.EncodedValues) { heartbeats.Add(1) })
	return env, &heartbeats
}

func agentAppError(t *testing.T, err error, wantType string) *temporal.ApplicationError {
	t.Helper()
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "want *temporal.ApplicationError, got %T %v", err, err)
	require.Equal(t, wantType, app.Type(), "message: %s", app.Message())
	return app
}

func agentUSD(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func TestAgentValidate(t *testing.T) {
	tests := []struct {
		name    string
		in      Agent
		wantErr string
	}{
		{"minimal", Agent{Prompt: "hi", Model: "gpt-4o"}, ""},
		{"all fields", Agent{Prompt: "hi", System: "s", Model: "gpt-4o", Provider: "openai", MaxTokens: 10,
			MaxBudgetUSD: agentUSD("0.25"), ResponseSchema: json.RawMessage(` {"type":"object"}`)}, ""},
		{"empty prompt", Agent{Prompt: " \n", Model: "gpt-4o"}, "agent: prompt is empty"},
		{"empty model", Agent{Prompt: "hi"}, "agent: model is empty"},
		{"negative max tokens", Agent{Prompt: "hi", Model: "m", MaxTokens: -1}, "agent: max tokens -1 is negative"},
		{"negative budget", Agent{Prompt: "hi", Model: "m", MaxBudgetUSD: agentUSD("-0.01")}, "agent: max budget $-0.01 is negative"},
		{"schema not JSON", Agent{Prompt: "hi", Model: "m", ResponseSchema: json.RawMessage(`{"type":`)}, "agent: response schema is not valid JSON"},
		{"schema not an object", Agent{Prompt: "hi", Model: "m", ResponseSchema: json.RawMessage(`true`)}, "agent: response schema must be a JSON object"},
		{"schema does not compile", Agent{Prompt: "hi", Model: "m", ResponseSchema: json.RawMessage(`{"required":"choice"}`)},
			"agent: response schema: signals: invalid schema: at /required: want array, got string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assertValidation(t, tt.in.Validate(), tt.wantErr) })
	}
}

func TestAgentWorstCaseUsage(t *testing.T) {
	assert.Equal(t, llm.Usage{InputTokens: 3, OutputTokens: 100},
		Agent{Prompt: "0123456789", System: "x", MaxTokens: 100}.WorstCaseUsage(), "ceil(11/4) = 3")
	assert.Equal(t, llm.Usage{InputTokens: 2, OutputTokens: DefaultAgentMaxTokens},
		Agent{Prompt: "12345678"}.WorstCaseUsage())
	assert.Equal(t, llm.Usage{InputTokens: 6, OutputTokens: 1}, // ceil((4 + 17) / 4)
		Agent{Prompt: "1234", ResponseSchema: json.RawMessage(`{"type":"object"}`), MaxTokens: 1}.WorstCaseUsage(), "the schema is sent too")
}

func TestAgentRunOpenAIThroughActivityEnvironment(t *testing.T) {
	srv := newAgentFakeProvider(t, http.StatusOK, nil, agentOpenAIAnswer("Looks good.", 1234, 567, ""), 0)
	env, _ := agentTestEnv(agentOpenAIActivities(srv, "sk-test"))

	val, err := env.ExecuteActivity(AgentActivity, Agent{Prompt: "Review: diff", System: "You review.", Model: "gpt-4o-mini",
		MaxBudgetUSD: agentUSD("0.25")})
	require.NoError(t, err)
	var res AgentResult
	require.NoError(t, val.Get(&res))

	assert.Equal(t, "Looks good.", res.Text)
	assert.Nil(t, res.JSON)
	assert.Equal(t, llm.Usage{InputTokens: 1234, OutputTokens: 567}, res.Usage)
	assert.Equal(t, "0.0005253", res.CostUSD.String(), "1234 × $0.15/M + 567 × $0.60/M, exactly")
	assert.Equal(t, "0.00", res.CostUSD.StringFixed(2))
	assert.True(t, res.CostKnown)
	assert.False(t, res.Overshoot)
	assert.Equal(t, "gpt-4o-mini-2024-07-18", res.Model)
	assert.Equal(t, "openai", res.Provider)
	assert.Equal(t, "stop", res.StopReason)
	assert.Equal(t, 1, res.Attempt, "the attempt comes from the activity info")
	assert.Positive(t, res.Duration)

	req := srv.body(t, 0)
	assert.Equal(t, "gpt-4o-mini", req["model"])
	assert.Equal(t, float64(DefaultAgentMaxTokens), req["max_tokens"], "a budget without MaxTokens bounds the answer")
	assert.Equal(t, []any{map[string]any{"role": "system", "content": "You review."},
		map[string]any{"role": "user", "content": "Review: diff"}}, req["messages"])
	assert.Equal(t, "Bearer sk-test", srv.auth[0])
}

func TestAgentNoBudgetLeavesMaxTokensToTheProvider(t *testing.T) {
	srv := newAgentFakeProvider(t, http.StatusOK, nil, agentOpenAIAnswer("ok", 1, 1, ""), 0)
	_, err := agentOpenAIActivities(srv, "").RunAgent(context.Background(), Agent{Prompt: "p", Model: "gpt-4o"})
	require.NoError(t, err)
	_, has := srv.body(t, 0)["max_tokens"]
	assert.False(t, has)
}

func TestAgentProviderReportedCostWins(t *testing.T) {
	srv := newAgentFakeProvider(t, http.StatusOK, nil, agentOpenAIAnswer("ok", 1234, 567, `,"cost":0.000987654321987654321`), 0)
	res, err := agentOpenAIActivities(srv, "k").RunAgent(context.Background(), Agent{Prompt: "p", Model: "gpt-4o-mini",
		MaxBudgetUSD: agentUSD("1")})
	require.NoError(t, err)
	assert.Equal(t, "0.000987654321987654321", res.CostUSD.String(), "not the table's 0.0005253, and not through a float")
	assert.True(t, res.CostKnown)
}

func TestAgentRateLimited(t *testing.T) {
	tests := []struct {
		name      string
		headers   map[string]string
		wantDelay time.Duration
	}{
		{"Retry-After seconds", map[string]string{"Retry-After": "3"}, 3 * time.Second},
		{"no Retry-After", nil, DefaultAgentRetryAfter},
		{"capped", map[string]string{"Retry-After": "86400"}, MaxAgentRetryAfter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newAgentFakeProvider(t, http.StatusTooManyRequests, tt.headers,
				`{"error":{"message":"Rate limit reached","type":"requests"}}`, 0)
			a := agentOpenAIActivities(srv, "sk-rate-secret")

			// Directly: the provider's error carries the delay.
			_, err := a.RunAgent(context.Background(), Agent{Prompt: "p", Model: "gpt-4o-mini"})
			app := agentAppError(t, err, AgentRateLimitedErrorType)
			assert.Equal(t, tt.wantDelay, app.NextRetryDelay())
			assert.False(t, app.NonRetryable())
			var rl *llm.RateLimitError
			require.True(t, errors.As(err, &rl))
			assert.Contains(t, app.Message(), "Rate limit reached")
			assert.NotContains(t, app.Error(), "sk-rate-secret")

			// Through Temporal's activity environment (the error crosses the failure converter).
			env, _ := agentTestEnv(a)
			_, err = env.ExecuteActivity(AgentActivity, Agent{Prompt: "p", Model: "gpt-4o-mini"})
			app = agentAppError(t, err, AgentRateLimitedErrorType)
			assert.Equal(t, tt.wantDelay, app.NextRetryDelay())
			assert.False(t, app.NonRetryable())
		})
	}
}

func TestAgentAPIErrors(t *testing.T) {
	const key = "sk-agent-api-secret"
	tests := []struct {
		status       int
		body         string
		nonRetryable bool
	}{
		{500, `{"error":{"message":"The server had an error"}}`, false},
		{502, `bad gateway`, false},
		{400, `{"error":{"message":"Invalid model ` + key + `"}}`, true},
		{401, `{"error":{"message":"Incorrect API key provided: ` + key + `"}}`, true},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			srv := newAgentFakeProvider(t, tt.status, nil, tt.body, 0)
			env, _ := agentTestEnv(agentOpenAIActivities(srv, key))
			_, err := env.ExecuteActivity(AgentActivity, Agent{Prompt: "p", Model: "gpt-4o"})
			app := agentAppError(t, err, AgentAPIErrorType)
			assert.Equal(t, tt.nonRetryable, app.NonRetryable())
			assert.Contains(t, app.Message(), fmt.Sprintf("HTTP %d", tt.status))
			assert.NotContains(t, err.Error(), key)
			assert.Equal(t, 1, srv.requests())
		})
	}
}

func TestAgentBudgetRefusalDoesNotCallTheProvider(t *testing.T) {
	srv := newAgentFakeProvider(t, http.StatusOK, nil, agentOpenAIAnswer("ok", 10, 10, ""), 0)
	a := agentOpenAIActivities(srv, "k")
	// 4,000 prompt bytes → 1,000 input tokens; 1,000 output tokens; gpt-4o at $2.50 / $10:
	// 0.0025 + 0.01 = 0.0125 worst case.
	step := Agent{Prompt: strings.Repeat("x", 4000), Model: "gpt-4o", MaxTokens: 1000, MaxBudgetUSD: agentUSD("0.01")}

	env, _ := agentTestEnv(a)
	_, err := env.ExecuteActivity(AgentActivity, step)
	app := agentAppError(t, err, AgentBudgetErrorType)
	assert.True(t, app.NonRetryable())
	assert.Equal(t, "agent: worst-case cost $0.0125 of model gpt-4o (1000 input tokens estimated + 1000 output tokens) exceeds the step budget $0.01",
		app.Message())
	assert.Equal(t, 0, srv.requests(), "the provider was never called")

	step.MaxBudgetUSD = agentUSD("0.0125") // equal to the worst case is allowed
	res, err := a.RunAgent(context.Background(), step)
	require.NoError(t, err)
	assert.Equal(t, 1, srv.requests())
	assert.Equal(t, "0.000125", res.CostUSD.String())
	assert.False(t, res.Overshoot)
}

func TestAgentOvershootStillReturnsTheResult(t *testing.T) {
	// The provider used far more than max_tokens (a misbehaving or reasoning-heavy model).
	a, s := agentScriptedActivities(llm.ScriptRule{Text: "long answer", InputTokens: 5, OutputTokens: 1000})
	res, err := a.RunAgent(context.Background(), Agent{Prompt: "hi", Model: "scripted", MaxTokens: 10, MaxBudgetUSD: agentUSD("0.0001")})
	require.NoError(t, err)
	assert.Equal(t, 1, s.Calls())
	assert.Equal(t, "0.002005", res.CostUSD.String(), "5 × $1/M + 1000 × $2/M")
	assert.True(t, res.Overshoot)
	assert.Equal(t, "long answer", res.Text)
	assert.Equal(t, "scripted", res.Provider)
}

func TestAgentUnpricedModel(t *testing.T) {
	rule := llm.ScriptRule{Text: "ok", InputTokens: 10, OutputTokens: 20}
	step := Agent{Prompt: "p", Model: "my-fine-tune", Provider: "scripted"}

	t.Run("no budget: cost unknown, not an error", func(t *testing.T) {
		a, _ := agentScriptedActivities(rule)
		res, err := a.RunAgent(context.Background(), step)
		require.NoError(t, err)
		assert.True(t, res.CostUSD.IsZero())
		assert.False(t, res.CostKnown)
	})
	t.Run("budget: error with the usage, after the call", func(t *testing.T) {
		a, s := agentScriptedActivities(rule)
		withBudget := step
		withBudget.MaxBudgetUSD = agentUSD("1")
		env, _ := agentTestEnv(a)
		_, err := env.ExecuteActivity(AgentActivity, withBudget)
		app := agentAppError(t, err, AgentUnpricedErrorType)
		assert.True(t, app.NonRetryable())
		assert.Contains(t, app.Message(), "my-fine-tune has no price")
		var partial AgentResult
		require.NoError(t, app.Details(&partial))
		assert.Equal(t, llm.Usage{InputTokens: 10, OutputTokens: 20}, partial.Usage)
		assert.False(t, partial.CostKnown)
		assert.Equal(t, 1, s.Calls(), "an unpriced model cannot be estimated, so the call is made")
	})
	t.Run("budget and a reported cost", func(t *testing.T) {
		cost := agentUSD("0.42")
		withCost := rule
		withCost.CostUSD = &cost
		a, _ := agentScriptedActivities(withCost)
		withBudget := step
		withBudget.MaxBudgetUSD = agentUSD("1")
		res, err := a.RunAgent(context.Background(), withBudget)
		require.NoError(t, err)
		assert.Equal(t, "0.42", res.CostUSD.String())
		assert.True(t, res.CostKnown)
	})
	t.Run("nil price table means the default prices", func(t *testing.T) {
		s := llm.NewScripted(rule)
		a := &AgentActivities{Router: llm.NewRouter(map[string]llm.Provider{"scripted": s})}
		res, err := a.RunAgent(context.Background(), Agent{Prompt: "p", Model: "scripted", MaxBudgetUSD: agentUSD("1")})
		require.NoError(t, err)
		assert.Equal(t, "0.00005", res.CostUSD.String(), "10 × $1/M + 20 × $2/M")
	})
}

func TestAgentResponseSchema(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)
	tests := []struct {
		name, answer, wantJSON string
	}{
		{"plain JSON", `{"ok": true}`, `{"ok":true}`},
		{"white space", "\n  {\"ok\": false}\n", `{"ok":false}`},
		{"code fence", "```json\n{\"ok\": true}\n```", `{"ok":true}`},
		{"bare fence", "```\n{\"ok\": true, \"note\": [1, 2]}\n```", `{"ok":true,"note":[1,2]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, _ := agentScriptedActivities(llm.ScriptRule{Text: tt.answer})
			res, err := a.RunAgent(context.Background(), Agent{Prompt: "p", Model: "scripted", ResponseSchema: schema})
			require.NoError(t, err)
			assert.Equal(t, tt.wantJSON, string(res.JSON))
			assert.Equal(t, tt.answer, res.Text)
		})
	}
	t.Run("not JSON is a retryable error carrying the paid result", func(t *testing.T) {
		a, _ := agentScriptedActivities(llm.ScriptRule{Text: "Sure! Here it is: ok=true", InputTokens: 100, OutputTokens: 10})
		env, _ := agentTestEnv(a)
		_, err := env.ExecuteActivity(AgentActivity, Agent{Prompt: "p", Model: "scripted", ResponseSchema: schema})
		app := agentAppError(t, err, AgentBadJSONErrorType)
		assert.False(t, app.NonRetryable())
		assert.Contains(t, app.Message(), "Sure! Here it is")
		var partial AgentResult
		require.NoError(t, app.Details(&partial))
		assert.Equal(t, "0.00012", partial.CostUSD.String(), "100 × $1/M + 10 × $2/M: the call was paid for")
		assert.Equal(t, 1, partial.Attempt)
	})
}

func TestAgentResponseSchemaValidation(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"choice":{"enum":["ship","hold"]},"reason":{"type":"string"}},"required":["choice"]}`)
	tests := []struct {
		name, answer, wantMsg string
	}{
		{"value outside the enum", `{"choice": "maybe"}`, `at /choice: want one of "ship", "hold", got "maybe"`},
		{"required property missing", `{"reason": "no idea"}`, `at (root): missing property "choice"`},
		{"wrong type", `{"choice": "ship", "reason": 3}`, `at /reason: want string, got number`},
		{"not an object", `["ship"]`, `at (root): want object, got array`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, s := agentScriptedActivities(llm.ScriptRule{Text: tt.answer, InputTokens: 100, OutputTokens: 10})
			env, _ := agentTestEnv(a)
			_, err := env.ExecuteActivity(AgentActivity, Agent{Prompt: "p", Model: "scripted", ResponseSchema: schema})
			app := agentAppError(t, err, AgentSchemaErrorType)
			assert.False(t, app.NonRetryable(), "a mismatch is retried: the model may answer better")
			assert.Contains(t, app.Message(), "agent: the answer does not match the response schema ("+tt.wantMsg+")")
			assert.Contains(t, app.Message(), tt.answer, "the message shows the answer")
			assert.NotContains(t, app.Message(), "\n")
			var paid AgentResult
			require.NoError(t, app.Details(&paid))
			assert.Equal(t, "0.00012", paid.CostUSD.String(), "100 × $1/M + 10 × $2/M: the call was paid for")
			assert.Equal(t, llm.Usage{InputTokens: 100, OutputTokens: 10}, paid.Usage)
			assert.Equal(t, tt.answer, paid.Text)
			assert.Equal(t, 1, s.Calls())
		})
	}
	t.Run("a matching answer passes", func(t *testing.T) {
		a, _ := agentScriptedActivities(llm.ScriptRule{Text: `{"choice": "hold", "reason": "tests are red"}`})
		res, err := a.RunAgent(context.Background(), Agent{Prompt: "p", Model: "scripted", ResponseSchema: schema})
		require.NoError(t, err)
		assert.Equal(t, `{"choice":"hold","reason":"tests are red"}`, string(res.JSON))
	})
	t.Run("a long or multi-line answer is cut to one line", func(t *testing.T) {
		long := "{\"choice\":\n\"" + strings.Repeat("x", 500) + "\"}"
		a, _ := agentScriptedActivities(llm.ScriptRule{Text: long})
		_, err := a.RunAgent(context.Background(), Agent{Prompt: "p", Model: "scripted", ResponseSchema: schema})
		app := agentAppError(t, err, AgentSchemaErrorType)
		assert.NotContains(t, app.Message(), "\n")
		assert.Less(t, len(app.Message()), 700)
		assert.Contains(t, app.Message(), "…")
	})
	t.Run("a schema that does not compile is an invalid step, the provider is not called", func(t *testing.T) {
		a, s := agentScriptedActivities(llm.ScriptRule{Text: `{}`})
		_, err := a.RunAgent(context.Background(), Agent{Prompt: "p", Model: "scripted", ResponseSchema: json.RawMessage(`{"$ref":"other.json"}`)})
		app := agentAppError(t, err, InvalidStepErrorType)
		assert.True(t, app.NonRetryable())
		assert.Contains(t, app.Message(), `refers to "other.json"`)
		assert.Zero(t, s.Calls())
	})
	t.Run("over the OpenAI wire: a mismatching answer, then a matching one", func(t *testing.T) {
		var calls atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			answer := `{"choice":"later"}`
			if calls.Add(1) > 1 {
				answer = `{"choice":"ship"}`
			}
			_, _ = io.WriteString(w, agentOpenAIAnswer(answer, 1000, 20, ""))
		}))
		t.Cleanup(srv.Close)
		a := &AgentActivities{Router: llm.NewRouter(map[string]llm.Provider{"openai": llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: "k"})}),
			Prices: llm.DefaultPrices()}
		step := Agent{Prompt: "Ship?", Model: "gpt-4o-mini", ResponseSchema: schema}
		_, err := a.RunAgent(context.Background(), step)
		agentAppError(t, err, AgentSchemaErrorType)
		res, err := a.RunAgent(context.Background(), step)
		require.NoError(t, err)
		assert.Equal(t, `{"choice":"ship"}`, string(res.JSON))
		assert.Equal(t, int32(2), calls.Load())
	})
}

func TestAgentAnthropicWithSchema(t *testing.T) {
	srv := newAgentFakeProvider(t, http.StatusOK, nil, `{"type":"message","model":"claude-3-5-haiku-20241022",
		"content":[{"type":"text","text":"{\"verdict\":\"ship\"}"}],"stop_reason":"end_turn",
		"usage":{"input_tokens":2000,"output_tokens":300,"cache_read_input_tokens":1000}}`, 0)
	a := &AgentActivities{Router: llm.NewRouter(map[string]llm.Provider{
		"anthropic": llm.NewAnthropic(llm.AnthropicConfig{BaseURL: srv.URL, APIKey: "sk-ant-k"})})}
	schema := `{"type":"object","properties":{"verdict":{"enum":["ship","hold"]}}}`
	res, err := a.RunAgent(context.Background(), Agent{Prompt: "Ship?", System: "You decide.", Model: "claude-3-5-haiku-latest",
		MaxTokens: 200, MaxBudgetUSD: agentUSD("0.05"), ResponseSchema: json.RawMessage(schema)})
	require.NoError(t, err)
	assert.Equal(t, `{"verdict":"ship"}`, string(res.JSON))
	assert.Equal(t, llm.Usage{InputTokens: 3000, OutputTokens: 300}, res.Usage)
	assert.Equal(t, "0.0036", res.CostUSD.String(), "3000 × $0.80/M + 300 × $4/M")
	assert.Equal(t, "anthropic", res.Provider)
	assert.Equal(t, "claude-3-5-haiku-20241022", res.Model)

	req := srv.body(t, 0)
	assert.Equal(t, float64(200), req["max_tokens"])
	assert.Equal(t, "You decide.\n\n"+llm.SchemaInstruction+schema, req["system"])
	assert.Equal(t, "sk-ant-k", srv.auth[0])
}

func TestAgentInvalidStep(t *testing.T) {
	a, s := agentScriptedActivities(llm.ScriptRule{Text: "ok"})
	tests := []struct {
		name    string
		acts    *AgentActivities
		in      Agent
		wantMsg string
	}{
		{"invalid", a, Agent{Model: "scripted"}, "agent: prompt is empty"},
		{"unknown model", a, Agent{Prompt: "p", Model: "llama-3"}, `no provider is known for model "llama-3"`},
		{"provider not configured", a, Agent{Prompt: "p", Model: "gpt-4o"}, `needs provider "openai", which is not configured (configured: scripted)`},
		{"explicit provider not configured", a, Agent{Prompt: "p", Model: "scripted", Provider: "vllm"}, `provider "vllm" is not configured`},
		{"no router", &AgentActivities{}, Agent{Prompt: "p", Model: "gpt-4o"}, "no model providers are configured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.acts.RunAgent(context.Background(), tt.in)
			app := agentAppError(t, err, "gateflow.InvalidStep")
			assert.True(t, app.NonRetryable())
			assert.Contains(t, app.Message(), tt.wantMsg)
		})
	}
	assert.Equal(t, 0, s.Calls())
}

func TestAgentOtherProviderFailures(t *testing.T) {
	a, _ := agentScriptedActivities(llm.ScriptRule{Match: "deploy", Text: "ok"})
	_, err := a.RunAgent(context.Background(), Agent{Prompt: "something else", Model: "scripted"})
	app := agentAppError(t, err, AgentFailedErrorType)
	assert.False(t, app.NonRetryable())
	assert.Contains(t, app.Message(), `no rule matches the prompt "something else"`)

	custom := temporal.NewNonRetryableApplicationError("custom", "my.Type", nil)
	a, _ = agentScriptedActivities(llm.ScriptRule{Err: custom})
	_, err = a.RunAgent(context.Background(), Agent{Prompt: "p", Model: "scripted"})
	agentAppError(t, err, "my.Type")
}

func TestAgentHeartbeatsWhileTheCallIsInFlight(t *testing.T) {
	srv := newAgentFakeProvider(t, http.StatusOK, nil, agentOpenAIAnswer("slow", 1, 1, ""), 1300*time.Millisecond)
	env, heartbeats := agentTestEnv(agentOpenAIActivities(srv, "k"))
	val, err := env.ExecuteActivity(AgentActivity, Agent{Prompt: "p", Model: "gpt-4o"})
	require.NoError(t, err)
	var res AgentResult
	require.NoError(t, val.Get(&res))
	assert.Equal(t, "slow", res.Text)
	assert.Greater(t, heartbeats.Load(), int32(0), "a call longer than a second heartbeats")
	assert.GreaterOrEqual(t, res.Duration, 1300*time.Millisecond)
}

func TestAgentCancelledCallReturnsPromptly(t *testing.T) {
	srv := newAgentFakeProvider(t, http.StatusOK, nil, agentOpenAIAnswer("late", 1, 1, ""), 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := agentOpenAIActivities(srv, "k").RunAgent(ctx, Agent{Prompt: "p", Model: "gpt-4o"})
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 5*time.Second)
}

func ExampleAgentActivities_RunAgent() {
	acts := &AgentActivities{
		Router: llm.NewRouter(map[string]llm.Provider{
			llm.ProviderScripted: llm.NewScripted(llm.ScriptRule{Match: "Review", Text: `{"approve": true}`}),
		}),
		Prices: llm.DefaultPrices(),
	}
	res, err := acts.RunAgent(context.Background(), Agent{
		Prompt:         "Review the release notes",
		Model:          "scripted",
		MaxBudgetUSD:   decimal.RequireFromString("0.01"),
		ResponseSchema: json.RawMessage(`{"type":"object","properties":{"approve":{"type":"boolean"}}}`),
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(string(res.JSON))
	fmt.Printf("%d+%d tokens, $%s (known: %v), attempt %d\n",
		res.Usage.InputTokens, res.Usage.OutputTokens, res.CostUSD, res.CostKnown, res.Attempt)
	// Output:
	// {"approve":true}
	// 6+3 tokens, $0.000012 (known: true), attempt 1
}

func TestAgentHead(t *testing.T) {
	assert.Equal(t, "short", agentHead("  short \n", 10))
	assert.Equal(t, "abc…", agentHead("abcdef", 3))
	assert.Equal(t, "é…", agentHead("ééé", 3), "never cuts a rune in half")
}
