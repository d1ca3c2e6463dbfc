package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gateflow/gateflow/internal/retryafter"
)

// Provider names, as returned by Provider.Name and used as Router keys.
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
	ProviderScripted  = "scripted"
)

// maxResponseBytes bounds how much of a provider's response body is read.
const maxResponseBytes = 32 << 20

// Request is one provider-neutral model call: a system prompt, the conversation so far
// (Prompt, then Messages) and the tools the model may call.
type Request struct {
	// Model is the provider's model name, e.g. "gpt-4o-mini" or "claude-sonnet-4-20250514".
	Model string `json:"model"`
	// System is the system prompt; empty means none.
	System string `json:"system,omitempty"`
	// Prompt is the first user message. A single call sets only Prompt; a conversation
	// may leave it empty and start Messages with a user message.
	Prompt string `json:"prompt,omitempty"`
	// Messages is the conversation after Prompt: user messages, the assistant's answers
	// and tool calls, and the results of those calls. See Message.
	Messages []Message `json:"messages,omitempty"`
	// Tools are the tools the model may call, in the order given to the provider.
	Tools []Tool `json:"tools,omitempty"`
	// ToolChoice says whether the model must, may or must not call a tool; empty means
	// ToolAuto. Ignored without Tools.
	ToolChoice ToolChoice `json:"tool_choice,omitempty"`
	// MaxTokens bounds the answer's length in tokens; zero means the provider's default.
	MaxTokens int `json:"max_tokens,omitempty"`
	// ResponseSchema is an optional JSON Schema (an object) the answer must follow.
	ResponseSchema json.RawMessage `json:"response_schema,omitempty"`
}

// Usage is the tokens a call consumed.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// Total is InputTokens + OutputTokens.
func (u Usage) Total() int64 { return u.InputTokens + u.OutputTokens }

// Response is what a provider answered.
type Response struct {
	// Text is the answer's text (may be empty when the model only calls tools).
	Text string `json:"text"`
	// ToolCalls are the tools the model asks to call, in the order it gave them.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// Usage is the tokens the provider reported.
	Usage Usage `json:"usage"`
	// Model is the model that answered, as the provider names it (often a dated name).
	Model string `json:"model"`
	// Stop is why the model stopped, the same for every provider (StopEnd, StopToolUse, …).
	Stop StopKind `json:"stop,omitempty"`
	// StopReason is the provider's reason for stopping ("stop", "end_turn", "length",
	// "tool_calls", "tool_use", "max_tokens", …), as the provider spells it.
	StopReason string `json:"stop_reason,omitempty"`
	// CostUSD is set only when the provider itself reports what the call cost (for example
	// OpenRouter's usage.cost); it then wins over the price table.
	CostUSD *decimal.Decimal `json:"cost_usd,omitempty"`
}

// Provider is a model provider.
type Provider interface {
	// Name is the provider's name (ProviderOpenAI, ProviderAnthropic, …).
	Name() string
	// Complete makes one model call. A rate limit ends with a *RateLimitError, another
	// non-2xx answer or a transport failure with an *APIError.
	Complete(ctx context.Context, req Request) (Response, error)
}

// RateLimitError is a provider refusing a call for now: HTTP 429, or Anthropic's 529
// (overloaded). RetryAfter is the provider's requested wait, zero when it gave none.
type RateLimitError struct {
	Provider   string        `json:"provider"`
	Status     int           `json:"status"`
	RetryAfter time.Duration `json:"retry_after"`
	Message    string        `json:"message"`
}

// Error implements error.
func (e *RateLimitError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: rate limited", e.Provider)
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, ", retry after %s", e.RetryAfter)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// APIError is a failed provider call other than a rate limit: a non-2xx answer (Status is
// the HTTP status) or a transport failure (Status 0). Retryable is true for 5xx, 408, 409,
// 429 and transport failures, false for other 4xx answers.
type APIError struct {
	Provider  string `json:"provider"`
	Status    int    `json:"status"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable"`
}

// Error implements error.
func (e *APIError) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("%s: %s", e.Provider, e.Message)
	}
	return fmt.Sprintf("%s: HTTP %d: %s", e.Provider, e.Status, e.Message)
}

// RetryableStatus reports whether an HTTP status is worth retrying: 5xx, 408, 409 and 429.
func RetryableStatus(status int) bool {
	return status >= 500 || status == http.StatusRequestTimeout || status == http.StatusConflict ||
		status == http.StatusTooManyRequests
}

// errorMessage extracts a provider's error message from an error body: {"error":
// {"message": …}} (OpenAI, Anthropic), {"error": "…"} or {"message": "…"} (some compatible
// servers), else the start of the body, else the status text.
func errorMessage(body []byte, status int) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  string          `json:"detail"`
	}
	if json.Unmarshal(body, &v) == nil {
		var obj struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &obj) == nil && obj.Message != "":
			return obj.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return s
		case v.Message != "":
			return v.Message
		case v.Detail != "":
			return v.Detail
		}
	}
	text := strings.TrimSpace(string(body))
	if len(text) > 300 {
		text = text[:300] + "…"
	}
	if text == "" {
		return http.StatusText(status)
	}
	return text
}

// RetryAfter reads how long a provider asked to wait: the retry-after-ms header
// (milliseconds) if present, else Retry-After as seconds (fractions allowed) or as an HTTP
// date (relative to now). Zero when neither is present or parseable.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if d := retryafter.Millis(h.Get("retry-after-ms")); d > 0 {
		return d
	}
	return retryafter.ParseFractional(h.Get("Retry-After"), now)
}

// baseURL is a configured API root without surrounding space or trailing slashes, or def
// when none is configured.
func baseURL(configured, def string) string {
	if u := strings.TrimRight(strings.TrimSpace(configured), "/"); u != "" {
		return u
	}
	return def
}

// isLoopback reports whether a base URL points at this machine (where a local server
// needs no API key).
func isLoopback(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// envKey reads an API key from the environment; a missing key is an error naming the
// variable unless the base URL is on this machine.
func envKey(keyVar, baseVar, base string) (string, error) {
	key := strings.TrimSpace(os.Getenv(keyVar))
	if key == "" && (base == "" || !isLoopback(base)) {
		where := "the provider's public endpoint"
		if base != "" {
			where = base
		}
		return "", fmt.Errorf("llm: %s is not set (needed for %s; set %s to a local server to run without a key)", keyVar, where, baseVar)
	}
	return key, nil
}
