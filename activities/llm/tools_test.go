package llm

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// toolConversation is the second turn of a tool loop: the task, the model's first answer
// (a text and two parallel tool calls) and the two results, the second one a failure.
func toolConversation(model string) Request {
	return Request{Model: model, System: "You triage incidents.", Prompt: "Triage db-1", MaxTokens: 100,
		Messages: []Message{
			{Role: RoleAssistant, Text: "Checking.", ToolCalls: []ToolCall{
				{ID: "call_1", Name: "disk_usage", Arguments: json.RawMessage(`{"host":"db-1"}`)},
				{ID: "call_2", Name: "uptime"}}},
			ToolResult("call_1", "100%", false),
			ToolResult("call_2", "host unreachable", true),
		},
		Tools: []Tool{
			{Name: "disk_usage", Description: "Disk use of a host",
				Parameters: json.RawMessage(`{"type":"object","properties":{"host":{"type":"string"}},"required":["host"]}`)},
			{Name: "uptime"},
		},
		ToolChoice: ToolRequired}
}

// From the Chat Completions reference: an answer calling two tools in parallel.
const openAIParallelCalls = `{
  "id": "chatcmpl-abc123", "object": "chat.completion", "created": 1741570283, "model": "gpt-4o-2024-08-06",
  "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "refusal": null, "annotations": [],
     "tool_calls": [
       {"id": "call_12345xyz", "type": "function", "function": {"name": "get_weather", "arguments": "{\"location\":\"Paris, France\"}"}},
       {"id": "call_67890abc", "type": "function", "function": {"name": "get_weather", "arguments": "{\"location\": \"Bogotá, Colombia\",\n \"unit\": \"c\"}"}}]},
     "logprobs": null, "finish_reason": "tool_calls"}],
  "usage": {"prompt_tokens": 82, "completion_tokens": 40, "total_tokens": 122, "cost": 0.000615,
     "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0}},
  "service_tier": "default", "system_fingerprint": "fp_2f406b9113"
}`

func TestOpenAIToolConversationWireFormat(t *testing.T) {
	srv := newFakeServer(t, http.StatusOK, nil, openAIOK)
	_, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL}).Complete(context.Background(), toolConversation("gpt-4o"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"model": "gpt-4o", "max_tokens": 100,
	  "messages": [
	    {"role": "system", "content": "You triage incidents."},
	    {"role": "user", "content": "Triage db-1"},
	    {"role": "assistant", "content": "Checking.", "tool_calls": [
	      {"id": "call_1", "type": "function", "function": {"name": "disk_usage", "arguments": "{\"host\":\"db-1\"}"}},
	      {"id": "call_2", "type": "function", "function": {"name": "uptime", "arguments": "{}"}}]},
	    {"role": "tool", "tool_call_id": "call_1", "content": "100%"},
	    {"role": "tool", "tool_call_id": "call_2", "content": "Error: host unreachable"}],
	  "tools": [
	    {"type": "function", "function": {"name": "disk_usage", "description": "Disk use of a host",
	      "parameters": {"type":"object","properties":{"host":{"type":"string"}},"required":["host"]}}},
	    {"type": "function", "function": {"name": "uptime"}}],
	  "tool_choice": "required"}`, srv.only(t).Body)
}

func TestOpenAIParallelToolCalls(t *testing.T) {
	srv := newFakeServer(t, http.StatusOK, nil, openAIParallelCalls)
	req := Request{Model: "gpt-4o", Prompt: "Weather in Paris and Bogotá?",
		Tools: []Tool{{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object"}`)}}}
	resp, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL}).Complete(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, []ToolCall{
		{ID: "call_12345xyz", Name: "get_weather", Arguments: json.RawMessage(`{"location":"Paris, France"}`)},
		{ID: "call_67890abc", Name: "get_weather", Arguments: json.RawMessage(`{"location":"Bogotá, Colombia","unit":"c"}`)},
	}, resp.ToolCalls, "in order, arguments compacted")
	assert.Empty(t, resp.Text)
	assert.Equal(t, StopToolUse, resp.Stop)
	assert.Equal(t, "tool_calls", resp.StopReason)
	assert.Equal(t, Usage{InputTokens: 82, OutputTokens: 40}, resp.Usage)
	require.NotNil(t, resp.CostUSD)
	assert.Equal(t, "0.000615", resp.CostUSD.String(), "the provider-reported cost")
	assert.NotContains(t, srv.only(t).Body, "tool_choice", "no choice given: the provider's default (auto)")
}

// From the Messages reference: a text block and two tool_use blocks.
const anthropicToolUse = `{
  "id": "msg_01Aq9w938a90dw8q", "type": "message", "role": "assistant", "model": "claude-sonnet-4-20250514",
  "content": [
    {"type": "text", "text": "I'll check both."},
    {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather",
     "input": {"location": "San Francisco, CA", "unit": "celsius"}},
    {"type": "tool_use", "id": "toolu_01B", "name": "get_time", "input": {"timezone": "America/Los_Angeles"}}],
  "stop_reason": "tool_use", "stop_sequence": null,
  "usage": {"input_tokens": 472, "output_tokens": 91, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
}`

func TestAnthropicToolConversationWireFormat(t *testing.T) {
	srv := newFakeServer(t, http.StatusOK, nil, anthropicOK)
	_, err := NewAnthropic(AnthropicConfig{BaseURL: srv.URL}).Complete(context.Background(), toolConversation("claude-sonnet-4"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"model": "claude-sonnet-4", "max_tokens": 100,
	  "system": "You triage incidents.",
	  "messages": [
	    {"role": "user", "content": [{"type": "text", "text": "Triage db-1"}]},
	    {"role": "assistant", "content": [
	      {"type": "text", "text": "Checking."},
	      {"type": "tool_use", "id": "call_1", "name": "disk_usage", "input": {"host": "db-1"}},
	      {"type": "tool_use", "id": "call_2", "name": "uptime", "input": {}}]},
	    {"role": "user", "content": [
	      {"type": "tool_result", "tool_use_id": "call_1", "is_error": false, "content": [{"type": "text", "text": "100%"}]},
	      {"type": "tool_result", "tool_use_id": "call_2", "is_error": true, "content": [{"type": "text", "text": "host unreachable"}]}]}],
	  "tools": [
	    {"name": "disk_usage", "description": "Disk use of a host",
	     "input_schema": {"type":"object","properties":{"host":{"type":"string"}},"required":["host"]}},
	    {"name": "uptime", "input_schema": {"type": "object", "properties": {}}}],
	  "tool_choice": {"type": "any"}}`, srv.only(t).Body)
}

func TestAnthropicEmptyToolResult(t *testing.T) {
	srv := newFakeServer(t, http.StatusOK, nil, anthropicOK)
	req := Request{Model: "claude-sonnet-4", Prompt: "p", Tools: []Tool{{Name: "f"}}, Messages: []Message{
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "t1", Name: "f"}}}, ToolResult("t1", "", false)}}
	_, err := NewAnthropic(AnthropicConfig{BaseURL: srv.URL}).Complete(context.Background(), req)
	require.NoError(t, err)
	var body struct{ Messages []json.RawMessage }
	require.NoError(t, json.Unmarshal([]byte(srv.only(t).Body), &body))
	require.Len(t, body.Messages, 3)
	assert.JSONEq(t, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":false}]}`, string(body.Messages[2]),
		"no empty text block, which the API refuses")
}

func TestAnthropicParallelToolUse(t *testing.T) {
	srv := newFakeServer(t, http.StatusOK, nil, anthropicToolUse)
	req := Request{Model: "claude-sonnet-4", Prompt: "Weather and time in SF?", ToolChoice: ToolAuto,
		Tools: []Tool{{Name: "get_weather"}, {Name: "get_time"}}}
	resp, err := NewAnthropic(AnthropicConfig{BaseURL: srv.URL}).Complete(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "I'll check both.", resp.Text)
	assert.Equal(t, []ToolCall{
		{ID: "toolu_01A09q90qw90lq917835lq9", Name: "get_weather", Arguments: json.RawMessage(`{"location":"San Francisco, CA","unit":"celsius"}`)},
		{ID: "toolu_01B", Name: "get_time", Arguments: json.RawMessage(`{"timezone":"America/Los_Angeles"}`)},
	}, resp.ToolCalls)
	assert.Equal(t, StopToolUse, resp.Stop)
	assert.Equal(t, "tool_use", resp.StopReason)
	assert.Equal(t, Usage{InputTokens: 472, OutputTokens: 91}, resp.Usage)
	assert.Nil(t, resp.CostUSD)
	price, ok := DefaultPrices().Lookup(resp.Model)
	require.True(t, ok)
	assert.Equal(t, "0.002781", price.Cost(resp.Usage).String(), "472×3/1e6 + 91×15/1e6")

	var body map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(srv.only(t).Body), &body))
	assert.JSONEq(t, `{"type":"auto"}`, string(body["tool_choice"]))
}

func TestModelToolCallsAreChecked(t *testing.T) {
	tests := []struct {
		name, body string
		anthropic  bool
		want       string
	}{
		{"openai truncated arguments",
			`{"choices":[{"message":{"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\": "}}]},"finish_reason":"tool_calls"}]}`,
			false, `openai: HTTP 200: tool call 1 ("f"): arguments: invalid JSON object`},
		{"openai arguments not an object",
			`{"choices":[{"message":{"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"[1]"}}]},"finish_reason":"tool_calls"}]}`,
			false, `openai: HTTP 200: tool call 1 ("f"): arguments: not a JSON object`},
		{"openai call without an ID",
			`{"choices":[{"message":{"tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
			false, `openai: HTTP 200: tool call 1 ("f"): no ID`},
		{"anthropic input not an object",
			`{"content":[{"type":"tool_use","id":"t1","name":"f","input":"x"}],"stop_reason":"tool_use"}`,
			true, `anthropic: HTTP 200: tool call 1 ("f"): arguments: not a JSON object`},
		{"anthropic bad tool name",
			`{"content":[{"type":"tool_use","id":"t1","name":"rm -rf","input":{}}],"stop_reason":"tool_use"}`,
			true, `anthropic: HTTP 200: tool call 1 ("rm -rf"): tool name "rm -rf": want letters`},
		{"anthropic not JSON", `<html>oops</html>`, true, "anthropic: HTTP 200: malformed response: <html>oops</html>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, http.StatusOK, nil, tt.body)
			req := Request{Model: "m", Prompt: "p", Tools: []Tool{{Name: "f"}}}
			var p Provider = NewOpenAI(OpenAIConfig{BaseURL: srv.URL})
			if tt.anthropic {
				p = NewAnthropic(AnthropicConfig{BaseURL: srv.URL})
			}
			_, err := p.Complete(context.Background(), req)
			var api *APIError
			require.True(t, errors.As(err, &api), "got %T %v", err, err)
			assert.True(t, api.Retryable, "another attempt of the turn may get a well-formed answer")
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestRequestValidate(t *testing.T) {
	call := ToolCall{ID: "c1", Name: "f", Arguments: json.RawMessage(`{}`)}
	tests := []struct {
		name string
		req  Request
		want string // "" means valid
	}{
		{"single call", Request{Prompt: "p"}, ""},
		{"empty single call as before", Request{}, ""},
		{"loop", Request{Prompt: "p", Tools: []Tool{{Name: "f"}}, Messages: []Message{
			{Role: RoleAssistant, ToolCalls: []ToolCall{call}}, ToolResult("c1", "ok", false)}}, ""},
		{"conversation without prompt", Request{Messages: []Message{UserMessage("hi")}}, ""},
		{"result of an unknown call", Request{Prompt: "p", Messages: []Message{ToolResult("c9", "ok", false)}},
			`message 2: tool result for call "c9", which no earlier assistant message made`},
		{"result given twice", Request{Prompt: "p", Messages: []Message{
			{Role: RoleAssistant, ToolCalls: []ToolCall{call}}, ToolResult("c1", "a", false), ToolResult("c1", "b", false)}},
			`message 4: tool result for call "c1"`},
		{"call without ID", Request{Prompt: "p", Messages: []Message{{Role: RoleAssistant, ToolCalls: []ToolCall{{Name: "f"}}}}},
			`tool call of "f" has no ID`},
		{"call with bad arguments", Request{Prompt: "p", Messages: []Message{{Role: RoleAssistant,
			ToolCalls: []ToolCall{{ID: "c", Name: "f", Arguments: json.RawMessage(`"x"`)}}}}}, `tool call "c": arguments: not a JSON object`},
		{"unknown role", Request{Prompt: "p", Messages: []Message{{Role: "system", Text: "x"}}}, `unknown role "system"`},
		{"user with a call ID", Request{Prompt: "p", Messages: []Message{{Role: RoleUser, ToolCallID: "c"}}}, "a user message has only text"},
		{"tool declared twice", Request{Prompt: "p", Tools: []Tool{{Name: "f"}, {Name: "f"}}}, `tool "f" is declared twice`},
		{"bad tool name", Request{Prompt: "p", Tools: []Tool{{Name: "a b"}}}, `tool 1: tool name "a b"`},
		{"schema not an object", Request{Prompt: "p", Tools: []Tool{{Name: "f", Parameters: json.RawMessage(`[]`)}}},
			`tool "f": parameters: not a JSON object`},
		{"unknown tool choice", Request{Prompt: "p", ToolChoice: "any"}, `tool choice "any"`},
		{"required without tools", Request{Prompt: "p", ToolChoice: ToolRequired}, `"required" without tools`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.req.Validate()
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestProvidersRefuseInvalidRequests(t *testing.T) {
	srv := newFakeServer(t, http.StatusOK, nil, openAIOK)
	bad := Request{Model: "m", Prompt: "p", Messages: []Message{ToolResult("nope", "x", false)}}
	for _, p := range []Provider{NewOpenAI(OpenAIConfig{BaseURL: srv.URL}), NewAnthropic(AnthropicConfig{BaseURL: srv.URL}), NewScripted(ScriptRule{Text: "x"})} {
		_, err := p.Complete(context.Background(), bad)
		assert.ErrorContains(t, err, `tool result for call "nope"`, p.Name())
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	assert.Empty(t, srv.reqs, "nothing is sent")
}

func TestDecodeArguments(t *testing.T) {
	for in, want := range map[string]string{
		``: `{}`, "  \n": `{}`, `{}`: `{}`, ` { "a" : [1, 2.50, "x"] } `: `{"a":[1,2.50,"x"]}`,
		`{"big": 12345678901234567890}`: `{"big":12345678901234567890}`,
	} {
		got, err := DecodeArguments([]byte(in))
		require.NoError(t, err, "%q", in)
		assert.Equal(t, want, string(got), "%q", in)
	}
	for _, in := range []string{`[]`, `"x"`, `null`, `1`, `{"a":1} {"b":2}`, `{"a":1}x`, `{"a":}`, `{`,
		`{"a":1,"a":2}`, `{"a":{"b":1,"b":1}}`, `{"a":[{"c":1,"c":2}]}`} {
		_, err := DecodeArguments([]byte(in))
		assert.Error(t, err, "%q", in)
	}
}

func TestStopKind(t *testing.T) {
	for reason, want := range map[string]StopKind{
		"stop": StopEnd, "end_turn": StopEnd, "stop_sequence": StopEnd,
		"tool_calls": StopToolUse, "tool_use": StopToolUse,
		"length": StopMaxTokens, "max_tokens": StopMaxTokens,
		"refusal": StopRefusal, "content_filter": StopRefusal,
		"pause_turn": StopOther, "": StopOther,
	} {
		assert.Equal(t, want, stopKind(reason, 0), reason)
	}
	assert.Equal(t, StopToolUse, stopKind("stop", 1), "calls make it a tool stop whatever the reason")
}

func TestWorstCaseUsage(t *testing.T) {
	single := Request{System: "12345678", Prompt: "1234", ResponseSchema: json.RawMessage(`{}`)}
	assert.Equal(t, Usage{InputTokens: 4, OutputTokens: 1024}, single.WorstCaseUsage(1024), "ceil(14/4), the default")

	loop := toolConversation("claude-sonnet-4")
	n := len(loop.System) + len("Triage db-1") + len("Checking.") +
		len("call_1") + len("disk_usage") + len(`{"host":"db-1"}`) + len("call_2") + len("uptime") +
		len("call_1") + len("100%") + len("call_2") + len("host unreachable") +
		len("disk_usage") + len("Disk use of a host") + len(loop.Tools[0].Parameters) + len("uptime")
	assert.Equal(t, Usage{InputTokens: int64(n+3) / 4, OutputTokens: 100}, loop.WorstCaseUsage(1024))

	price := mtok("3", "15")
	assert.Equal(t, "0.01536", price.Cost(Usage{InputTokens: 120, OutputTokens: 1000}).String())
}
