package llm

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const anthropicOK = `{
  "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-20250514",
  "content": [{"type": "text", "text": "Hello"}, {"type": "tool_use", "id": "t", "name": "x", "input": {}},
              {"type": "text", "text": " world"}],
  "stop_reason": "end_turn", "stop_sequence": null,
  "usage": {"input_tokens": 100, "cache_creation_input_tokens": 20, "cache_read_input_tokens": 30, "output_tokens": 50}
}`

func TestAnthropicCompleteWireFormat(t *testing.T) {
	srv := newFakeServer(t, http.StatusOK, nil, anthropicOK)
	p := NewAnthropic(AnthropicConfig{BaseURL: srv.URL + "/", APIKey: "sk-ant-test"})
	require.Equal(t, ProviderAnthropic, p.Name())

	resp, err := p.Complete(context.Background(), Request{Model: "claude-sonnet-4-20250514", System: "Be brief.",
		Prompt: "Say hello", MaxTokens: 300})
	require.NoError(t, err)

	got := srv.only(t)
	assert.Equal(t, http.MethodPost, got.Method)
	assert.Equal(t, "/v1/messages", got.Path)
	assert.Equal(t, "sk-ant-test", got.Header.Get("x-api-key"))
	assert.Equal(t, "2023-06-01", got.Header.Get("anthropic-version"))
	assert.Empty(t, got.Header.Get("Authorization"))
	assert.JSONEq(t, `{"model":"claude-sonnet-4-20250514","max_tokens":300,"system":"Be brief.",
		"messages":[{"role":"user","content":[{"type":"text","text":"Say hello"}]}]}`, got.Body)

	assert.Equal(t, "Hello world", resp.Text, "text blocks only, in order")
	assert.Equal(t, Usage{InputTokens: 150, OutputTokens: 50}, resp.Usage, "cache writes and reads count as input")
	assert.Equal(t, "end_turn", resp.StopReason)
	assert.Equal(t, "claude-sonnet-4-20250514", resp.Model)
	assert.Nil(t, resp.CostUSD)

	// claude-sonnet-4 at $3 / $15: 150×3/1e6 + 50×15/1e6 = 0.00045 + 0.00075.
	price, ok := DefaultPrices().Lookup(resp.Model)
	require.True(t, ok)
	assert.Equal(t, "0.0012", price.Cost(resp.Usage).String())
}

func TestAnthropicRequestShapes(t *testing.T) {
	schema := `{"type":"object","properties":{"ok":{"type":"boolean"}}}`
	tests := []struct {
		name        string
		cfg         AnthropicConfig
		req         Request
		wantBody    string
		wantVersion string
	}{
		{"max_tokens defaults to 1024, no system",
			AnthropicConfig{}, Request{Model: "claude-3-5-haiku-latest", Prompt: "hi"},
			`{"model":"claude-3-5-haiku-latest","max_tokens":1024,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`, "2023-06-01"},
		{"custom version",
			AnthropicConfig{Version: "2024-01-01"}, Request{Model: "claude-opus-4", Prompt: "hi", MaxTokens: 5},
			`{"model":"claude-opus-4","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`, "2024-01-01"},
		{"schema goes into the system prompt after the caller's",
			AnthropicConfig{}, Request{Model: "claude-haiku-4-5", System: "You grade.", Prompt: "hi", ResponseSchema: json.RawMessage(schema)},
			mustJSON(t, map[string]any{"model": "claude-haiku-4-5", "max_tokens": 1024,
				"system":   "You grade.\n\n" + SchemaInstruction + schema,
				"messages": []any{map[string]any{"role": "user", "content": textBlocks("hi")}}}), "2023-06-01"},
		{"schema alone is the system prompt",
			AnthropicConfig{}, Request{Model: "claude-haiku-4-5", Prompt: "hi", ResponseSchema: json.RawMessage(schema)},
			mustJSON(t, map[string]any{"model": "claude-haiku-4-5", "max_tokens": 1024,
				"system":   SchemaInstruction + schema,
				"messages": []any{map[string]any{"role": "user", "content": textBlocks("hi")}}}), "2023-06-01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, http.StatusOK, nil, anthropicOK)
			tt.cfg.BaseURL = srv.URL
			_, err := NewAnthropic(tt.cfg).Complete(context.Background(), tt.req)
			require.NoError(t, err)
			got := srv.only(t)
			assert.JSONEq(t, tt.wantBody, got.Body)
			assert.Equal(t, tt.wantVersion, got.Header.Get("anthropic-version"))
			assert.Empty(t, got.Header.Get("x-api-key"), "no key, no header")
		})
	}
}

// textBlocks is the SDK's wire form of a text: one text content block.
func textBlocks(text string) []any { return []any{map[string]any{"type": "text", "text": text}} }

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return string(data)
}

func TestAnthropicRateLimits(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		headers map[string]string
		body    string
		want    RateLimitError
	}{
		{"429 with retry-after", 429, map[string]string{"retry-after": "3"},
			`{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`,
			RateLimitError{Provider: "anthropic", Status: 429, RetryAfter: 3 * time.Second,
				Message: "Number of request tokens has exceeded your per-minute rate limit"}},
		{"529 overloaded without a delay", 529, nil,
			`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			RateLimitError{Provider: "anthropic", Status: 529, Message: "Overloaded"}},
		{"retry-after-ms", 429, map[string]string{"retry-after-ms": "2500", "retry-after": "3"},
			`{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`,
			RateLimitError{Provider: "anthropic", Status: 429, RetryAfter: 2500 * time.Millisecond, Message: "slow down"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, tt.status, tt.headers, tt.body)
			_, err := NewAnthropic(AnthropicConfig{BaseURL: srv.URL}).Complete(context.Background(), Request{Model: "claude-sonnet-4", Prompt: "p"})
			var rl *RateLimitError
			require.True(t, errors.As(err, &rl), "got %T %v", err, err)
			assert.Equal(t, tt.want, *rl)
		})
	}
}

func TestAnthropicErrorStatuses(t *testing.T) {
	const key = "sk-ant-api03-secret"
	tests := []struct {
		status        int
		body          string
		wantRetryable bool
		wantMsg       string
	}{
		{400, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}}`, false,
			"anthropic: HTTP 400: max_tokens: Field required"},
		{401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key ` + key + `"}}`, false,
			"anthropic: HTTP 401: invalid x-api-key [redacted]"},
		{500, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`, true,
			"anthropic: HTTP 500: Internal server error"},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			srv := newFakeServer(t, tt.status, nil, tt.body)
			_, err := NewAnthropic(AnthropicConfig{BaseURL: srv.URL, APIKey: key}).Complete(context.Background(), Request{Model: "claude-sonnet-4", Prompt: "p"})
			var api *APIError
			require.True(t, errors.As(err, &api), "got %T %v", err, err)
			assert.Equal(t, tt.wantRetryable, api.Retryable)
			assert.Equal(t, tt.wantMsg, err.Error())
			assert.NotContains(t, err.Error(), key)
		})
	}
}

func TestAnthropicFromEnv(t *testing.T) {
	t.Setenv("ANTHROPIC_BASE_URL", "")
	t.Setenv("ANTHROPIC_API_KEY", "")
	_, err := AnthropicFromEnv()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ANTHROPIC_API_KEY is not set")

	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9999")
	p, err := AnthropicFromEnv()
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:9999", p.BaseURL())

	t.Setenv("ANTHROPIC_BASE_URL", "")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-env")
	p, err = AnthropicFromEnv()
	require.NoError(t, err)
	assert.Equal(t, DefaultAnthropicBaseURL, p.BaseURL())
}
