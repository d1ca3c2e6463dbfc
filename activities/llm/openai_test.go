package llm

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const openAIOK = `{
  "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini-2024-07-18",
  "choices": [{"index": 0, "message": {"role": "assistant", "content": "Looks good.", "refusal": null},
               "finish_reason": "stop"}],
  "usage": {"prompt_tokens": 1234, "completion_tokens": 567, "total_tokens": 1801}
}`

func TestOpenAICompleteWireFormat(t *testing.T) {
	srv := newFakeServer(t, http.StatusOK, nil, openAIOK)
	p := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1/", APIKey: "sk-test-123"})
	require.Equal(t, ProviderOpenAI, p.Name())

	resp, err := p.Complete(context.Background(), Request{Model: "gpt-4o-mini", System: "You review code.",
		Prompt: "Review: diff", MaxTokens: 256})
	require.NoError(t, err)

	got := srv.only(t)
	assert.Equal(t, http.MethodPost, got.Method)
	assert.Equal(t, "/v1/chat/completions", got.Path)
	assert.Equal(t, "Bearer sk-test-123", got.Header.Get("Authorization"))
	assert.Equal(t, "application/json", got.Header.Get("Content-Type"))
	assert.JSONEq(t, `{"model": "gpt-4o-mini", "max_tokens": 256, "messages": [
		{"role": "system", "content": "You review code."},
		{"role": "user", "content": "Review: diff"}]}`, got.Body)

	assert.Equal(t, "Looks good.", resp.Text)
	assert.Equal(t, Usage{InputTokens: 1234, OutputTokens: 567}, resp.Usage)
	assert.Equal(t, "gpt-4o-mini-2024-07-18", resp.Model)
	assert.Equal(t, "stop", resp.StopReason)
	assert.Nil(t, resp.CostUSD, "no usage.cost in the body")

	// The dated model name prices as gpt-4o-mini ($0.15 / $0.60): 1234×0.15/1e6 + 567×0.60/1e6.
	price, ok := DefaultPrices().Lookup(resp.Model)
	require.True(t, ok)
	cost := price.Cost(resp.Usage)
	assert.Equal(t, "0.0005253", cost.String())
	assert.Equal(t, "0.00", cost.StringFixed(2))
}

func TestOpenAIRequestShapes(t *testing.T) {
	schema := `{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],"additionalProperties":false}`
	tests := []struct {
		name string
		req  Request
		want string
	}{
		{"user message only, no max_tokens",
			Request{Model: "gpt-4.1", Prompt: "hi"},
			`{"model":"gpt-4.1","messages":[{"role":"user","content":"hi"}]}`},
		{"response schema becomes a strict json_schema response_format",
			Request{Model: "gpt-4o", Prompt: "hi", MaxTokens: 10, ResponseSchema: json.RawMessage(schema)},
			`{"model":"gpt-4o","max_tokens":10,"messages":[{"role":"user","content":"hi"}],
			  "response_format":{"type":"json_schema","json_schema":{"name":"response","schema":` + schema + `,"strict":true}}}`},
		{"reasoning models get max_completion_tokens",
			Request{Model: "o3-mini", Prompt: "hi", MaxTokens: 500},
			`{"model":"o3-mini","max_completion_tokens":500,"messages":[{"role":"user","content":"hi"}]}`},
		{"gpt-5 is a reasoning model",
			Request{Model: "gpt-5-mini", Prompt: "hi", MaxTokens: 7},
			`{"model":"gpt-5-mini","max_completion_tokens":7,"messages":[{"role":"user","content":"hi"}]}`},
		{"o-prefixed names that are not o-series keep max_tokens",
			Request{Model: "o3x", Prompt: "hi", MaxTokens: 5},
			`{"model":"o3x","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, http.StatusOK, nil, openAIOK)
			_, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL}).Complete(context.Background(), tt.req)
			require.NoError(t, err)
			got := srv.only(t)
			assert.Equal(t, "/chat/completions", got.Path)
			assert.Empty(t, got.Header.Get("Authorization"), "no key, no header")
			assert.JSONEq(t, tt.want, got.Body)
		})
	}
}

func TestOpenAIReportedCost(t *testing.T) {
	tests := []struct {
		name, cost, want string // want "" means not reported
	}{
		// More digits than a float64 holds: parsed from the JSON text, not through a float.
		{"number", `0.000123456789012345678`, "0.000123456789012345678"},
		{"string", `"0.0042"`, "0.0042"},
		{"exponent", `1.5e-4`, "0.00015"},
		{"null", `null`, ""},
		{"negative is ignored", `-1`, ""},
		{"garbage is ignored", `"abc"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"model":"openai/gpt-4o","choices":[{"message":{"content":"x"},"finish_reason":"stop"}],
				"usage":{"prompt_tokens":10,"completion_tokens":2,"cost":` + tt.cost + `}}`
			srv := newFakeServer(t, http.StatusOK, nil, body)
			resp, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL}).Complete(context.Background(), Request{Model: "openai/gpt-4o", Prompt: "p"})
			require.NoError(t, err)
			if tt.want == "" {
				assert.Nil(t, resp.CostUSD)
				return
			}
			require.NotNil(t, resp.CostUSD)
			assert.Equal(t, tt.want, resp.CostUSD.String())
		})
	}
}

func TestOpenAIAnswerVariants(t *testing.T) {
	tests := []struct {
		name, body, wantText, wantStop string
		wantErr                        string
	}{
		{"content parts", `{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},"finish_reason":"length"}]}`,
			"ab", "length", ""},
		{"refusal", `{"choices":[{"message":{"content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`,
			"I can't help with that.", "refusal", ""},
		{"no choices", `{"choices":[]}`, "", "", "openai: HTTP 200: response has no choices"},
		{"not JSON", `<html>oops</html>`, "", "", "openai: HTTP 200: malformed response"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, http.StatusOK, nil, tt.body)
			resp, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL}).Complete(context.Background(), Request{Model: "gpt-4o", Prompt: "p"})
			if tt.wantErr != "" {
				var api *APIError
				require.True(t, errors.As(err, &api), "got %v", err)
				assert.True(t, api.Retryable)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantText, resp.Text)
			assert.Equal(t, tt.wantStop, resp.StopReason)
			assert.Equal(t, "gpt-4o", resp.Model, "the requested model when the body names none")
		})
	}
}

func TestOpenAIRateLimit(t *testing.T) {
	srv := newFakeServer(t, http.StatusTooManyRequests, map[string]string{"Retry-After": "3"},
		`{"error":{"message":"Rate limit reached for gpt-4o-mini","type":"requests","code":"rate_limit_exceeded"}}`)
	_, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL, APIKey: "sk-secret"}).Complete(context.Background(), Request{Model: "gpt-4o-mini", Prompt: "p"})
	var rl *RateLimitError
	require.True(t, errors.As(err, &rl), "got %T %v", err, err)
	assert.Equal(t, &RateLimitError{Provider: "openai", Status: 429, RetryAfter: 3 * time.Second,
		Message: "Rate limit reached for gpt-4o-mini"}, rl)
	assert.Equal(t, "openai: rate limited (HTTP 429), retry after 3s: Rate limit reached for gpt-4o-mini", err.Error())
}

func TestOpenAIErrorStatuses(t *testing.T) {
	const key = "sk-live-very-secret-key"
	tests := []struct {
		status        int
		body          string
		wantRetryable bool
		wantMsg       string
	}{
		{500, `{"error":{"message":"The server had an error","type":"server_error"}}`, true, "openai: HTTP 500: The server had an error"},
		{503, ``, true, "openai: HTTP 503: Service Unavailable"},
		{400, `{"error":{"message":"Invalid 'max_tokens'","type":"invalid_request_error"}}`, false, "openai: HTTP 400: Invalid 'max_tokens'"},
		{401, `{"error":{"message":"Incorrect API key provided: ` + key + `.","type":"invalid_request_error"}}`, false,
			"openai: HTTP 401: Incorrect API key provided: [redacted]."},
		{404, `{"error":"model not found"}`, false, "openai: HTTP 404: model not found"},
		{408, `{"message":"timeout"}`, true, "openai: HTTP 408: timeout"},
		{409, `not json at all`, true, "openai: HTTP 409: not json at all"},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			srv := newFakeServer(t, tt.status, nil, tt.body)
			_, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL, APIKey: key}).Complete(context.Background(), Request{Model: "gpt-4o", Prompt: "p"})
			var api *APIError
			require.True(t, errors.As(err, &api), "got %T %v", err, err)
			assert.Equal(t, tt.status, api.Status)
			assert.Equal(t, tt.wantRetryable, api.Retryable)
			assert.Equal(t, tt.wantMsg, err.Error())
			assert.NotContains(t, err.Error(), key)
			assert.Equal(t, "Bearer "+key, srv.only(t).Header.Get("Authorization"))
		})
	}
}

func TestOpenAITransportErrorIsRetryableAndHidesKey(t *testing.T) {
	const key = "sk-transport-secret"
	srv := newFakeServer(t, http.StatusOK, nil, openAIOK)
	url := srv.URL
	srv.Close() // nothing listens any more
	_, err := NewOpenAI(OpenAIConfig{BaseURL: url, APIKey: key}).Complete(context.Background(), Request{Model: "gpt-4o", Prompt: "p"})
	var api *APIError
	require.True(t, errors.As(err, &api), "got %T %v", err, err)
	assert.Equal(t, 0, api.Status)
	assert.True(t, api.Retryable)
	assert.NotContains(t, err.Error(), key)
}

func TestOpenAICancelled(t *testing.T) {
	srv := newFakeServer(t, http.StatusOK, nil, openAIOK)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL}).Complete(ctx, Request{Model: "gpt-4o", Prompt: "p"})
	assert.ErrorIs(t, err, context.Canceled)
	var api *APIError
	assert.False(t, errors.As(err, &api), "a cancelled call is not a provider failure")
}

func TestOpenAIFromEnv(t *testing.T) {
	t.Run("missing key for the public API", func(t *testing.T) {
		t.Setenv("OPENAI_BASE_URL", "")
		t.Setenv("OPENAI_API_KEY", "")
		_, err := OpenAIFromEnv()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "OPENAI_API_KEY is not set")
	})
	t.Run("missing key for a remote compatible server", func(t *testing.T) {
		t.Setenv("OPENAI_BASE_URL", "https://openrouter.ai/api/v1")
		t.Setenv("OPENAI_API_KEY", "")
		_, err := OpenAIFromEnv()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "OPENAI_API_KEY")
		assert.Contains(t, err.Error(), "https://openrouter.ai/api/v1")
	})
	for _, base := range []string{"http://localhost:11434/v1", "http://127.0.0.1:8000/v1", "http://[::1]:8080"} {
		t.Run("loopback needs no key "+base, func(t *testing.T) {
			t.Setenv("OPENAI_BASE_URL", base)
			t.Setenv("OPENAI_API_KEY", "")
			p, err := OpenAIFromEnv()
			require.NoError(t, err)
			assert.Equal(t, strings.TrimRight(base, "/"), p.BaseURL())
		})
	}
	t.Run("key and default URL", func(t *testing.T) {
		t.Setenv("OPENAI_BASE_URL", "")
		t.Setenv("OPENAI_API_KEY", "sk-env")
		p, err := OpenAIFromEnv()
		require.NoError(t, err)
		assert.Equal(t, DefaultOpenAIBaseURL, p.BaseURL())
	})
}

func TestLLMRetryAfter(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		headers map[string]string
		want    time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "3"}, 3 * time.Second},
		{"fractional seconds", map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond},
		{"HTTP date", map[string]string{"Retry-After": "Sun, 01 Jun 2025 12:00:42 GMT"}, 42 * time.Second},
		{"HTTP date in the past", map[string]string{"Retry-After": "Sun, 01 Jun 2025 11:00:00 GMT"}, 0},
		{"milliseconds win", map[string]string{"Retry-After": "3", "retry-after-ms": "1250"}, 1250 * time.Millisecond},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0},
		{"negative", map[string]string{"Retry-After": "-4"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.headers {
				h.Set(k, v)
			}
			assert.Equal(t, tt.want, RetryAfter(h, now))
		})
	}
}
