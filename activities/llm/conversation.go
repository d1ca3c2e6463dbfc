package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gateflow/gateflow/internal/strictjson"
)

// Role is who a Message is from.
type Role string

// Message roles.
const (
	// RoleUser is a message from the user (the caller).
	RoleUser Role = "user"
	// RoleAssistant is an earlier answer of the model: text and/or tool calls.
	RoleAssistant Role = "assistant"
	// RoleTool is the result of one tool call, answering the call ToolCallID.
	RoleTool Role = "tool"
)

// Message is one message of a provider-neutral conversation.
//
//   - A user message has Text.
//   - An assistant message has Text, ToolCalls or both, as the model answered them.
//   - A tool message is the result of one tool call: ToolCallID names the call (a
//     ToolCall.ID of the assistant message before it), Text is the result and IsError
//     says the tool failed (Text then says how).
type Message struct {
	Role       Role       `json:"role"`
	Text       string     `json:"text,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	IsError    bool       `json:"is_error,omitempty"`
}

// UserMessage is a user message with text.
func UserMessage(text string) Message { return Message{Role: RoleUser, Text: text} }

// AssistantMessage is the message recording a model's answer, to send back on the next turn.
func AssistantMessage(r Response) Message {
	return Message{Role: RoleAssistant, Text: r.Text, ToolCalls: r.ToolCalls}
}

// ToolResult is the tool message answering call id with text; isError marks a failure.
func ToolResult(id, text string, isError bool) Message {
	return Message{Role: RoleTool, ToolCallID: id, Text: text, IsError: isError}
}

// ToolCall is one call of a tool the model asked for.
type ToolCall struct {
	// ID is the provider's ID of the call; its result names it (Message.ToolCallID).
	ID string `json:"id"`
	// Name is the tool's name (a Tool.Name of the request).
	Name string `json:"name"`
	// Arguments is the call's arguments: one compact JSON object.
	Arguments json.RawMessage `json:"arguments"`
}

// Tool is a tool the model may call.
type Tool struct {
	// Name is the tool's name: letters, digits, '_' and '-', at most 64 characters.
	Name string `json:"name"`
	// Description tells the model what the tool does and when to call it.
	Description string `json:"description,omitempty"`
	// Parameters is the JSON Schema (an object schema) of the call's arguments; empty
	// means the tool takes no arguments.
	Parameters json.RawMessage `json:"parameters,omitempty"`
}

// ToolChoice says whether the model must call a tool.
type ToolChoice string

// Tool choices.
const (
	// ToolAuto lets the model choose between answering and calling tools (the default).
	ToolAuto ToolChoice = "auto"
	// ToolNone forbids tool calls: the model answers with text.
	ToolNone ToolChoice = "none"
	// ToolRequired makes the model call at least one tool.
	ToolRequired ToolChoice = "required"
)

// StopKind is why a model stopped, the same for every provider.
type StopKind string

// Stop kinds.
const (
	// StopEnd is a finished answer ("stop", "end_turn", "stop_sequence").
	StopEnd StopKind = "end"
	// StopToolUse is an answer that calls tools: run them and send their results back.
	StopToolUse StopKind = "tool_use"
	// StopMaxTokens is an answer cut at the token limit ("length", "max_tokens").
	StopMaxTokens StopKind = "max_tokens"
	// StopRefusal is a refusal ("refusal", "content_filter").
	StopRefusal StopKind = "refusal"
	// StopOther is any other reason; Response.StopReason has the provider's word.
	StopOther StopKind = "other"
)

// stopKind maps a provider's stop reason onto a StopKind; a response with tool calls
// stops for StopToolUse whatever the provider said.
func stopKind(reason string, toolCalls int) StopKind {
	switch {
	case toolCalls > 0 || reason == "tool_calls" || reason == "tool_use" || reason == "function_call":
		return StopToolUse
	case reason == "stop" || reason == "end_turn" || reason == "stop_sequence":
		return StopEnd
	case reason == "length" || reason == "max_tokens" || reason == "model_context_window_exceeded":
		return StopMaxTokens
	case reason == "refusal" || reason == "content_filter":
		return StopRefusal
	}
	return StopOther
}

// Conversation is the request's messages in order: Prompt as the first user message (also
// when it is empty and there are no Messages, as a single call always sends one), then
// Messages.
func (r Request) Conversation() []Message {
	if r.Prompt == "" && len(r.Messages) > 0 {
		return r.Messages
	}
	return append([]Message{UserMessage(r.Prompt)}, r.Messages...)
}

// Validate checks the conversation and the tools before they go to a provider: known
// roles, tool results naming a call of an earlier assistant message, tool calls with an ID,
// a name and a JSON-object Arguments, tools with a unique name and an object Parameters,
// and a known ToolChoice.
func (r Request) Validate() error {
	names := map[string]bool{}
	for i, t := range r.Tools {
		if err := validToolName(t.Name); err != nil {
			return fmt.Errorf("llm: tool %d: %w", i+1, err)
		}
		if names[t.Name] {
			return fmt.Errorf("llm: tool %q is declared twice", t.Name)
		}
		names[t.Name] = true
		if len(t.Parameters) > 0 {
			if _, err := DecodeArguments(t.Parameters); err != nil {
				return fmt.Errorf("llm: tool %q: parameters: %w", t.Name, err)
			}
		}
	}
	switch r.ToolChoice {
	case "", ToolAuto, ToolNone, ToolRequired:
	default:
		return fmt.Errorf("llm: tool choice %q: want %q, %q or %q", r.ToolChoice, ToolAuto, ToolNone, ToolRequired)
	}
	if r.ToolChoice == ToolRequired && len(r.Tools) == 0 {
		return errors.New("llm: tool choice \"required\" without tools")
	}
	return validConversation(r.Conversation())
}

func validConversation(msgs []Message) error {
	calls := map[string]bool{}
	for i, m := range msgs {
		var err error
		switch m.Role {
		case RoleUser:
			if len(m.ToolCalls) > 0 || m.ToolCallID != "" || m.IsError {
				err = errors.New("a user message has only text")
			}
		case RoleAssistant:
			err = validToolCalls(m.ToolCalls, calls)
		case RoleTool:
			if !calls[m.ToolCallID] {
				err = fmt.Errorf("tool result for call %q, which no earlier assistant message made", m.ToolCallID)
			}
			delete(calls, m.ToolCallID)
		default:
			err = fmt.Errorf("unknown role %q (want user, assistant or tool)", m.Role)
		}
		if err != nil {
			return fmt.Errorf("llm: message %d: %w", i+1, err)
		}
	}
	return nil
}

func validToolCalls(tcs []ToolCall, calls map[string]bool) error {
	for _, tc := range tcs {
		if tc.ID == "" {
			return fmt.Errorf("tool call of %q has no ID", tc.Name)
		}
		if calls[tc.ID] {
			return fmt.Errorf("tool call ID %q is used twice", tc.ID)
		}
		if err := validToolName(tc.Name); err != nil {
			return fmt.Errorf("tool call %q: %w", tc.ID, err)
		}
		if _, err := DecodeArguments(tc.Arguments); err != nil {
			return fmt.Errorf("tool call %q: arguments: %w", tc.ID, err)
		}
		calls[tc.ID] = true
	}
	return nil
}

func validToolName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("tool name %q: want 1 to 64 characters", name)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("tool name %q: want letters, digits, '_' and '-' only", name)
		}
	}
	return nil
}

// DecodeArguments checks that raw (tool-call arguments a model produced, or a tool's
// parameter schema) is exactly one JSON object, and returns it compacted; empty or
// white space only is the empty object {}. Anything else — another JSON type, trailing
// data, invalid JSON, a key twice in one object at any depth — is an error: a schema check,
// an approver and the tool must all read the same arguments, and with a key twice two
// readers could pick different values.
func DecodeArguments(raw []byte) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return json.RawMessage("{}"), nil
	}
	if raw[0] != '{' {
		return nil, errors.New("not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var obj map[string]json.RawMessage
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("invalid JSON object: %w", err)
	}
	if dec.More() {
		return nil, errors.New("data after the JSON object")
	}
	if err := strictjson.Check(raw, nil); err != nil {
		return nil, fmt.Errorf("arguments: %w", err)
	}
	var out bytes.Buffer
	if err := json.Compact(&out, raw); err != nil {
		return nil, fmt.Errorf("invalid JSON object: %w", err)
	}
	return out.Bytes(), nil
}

// WorstCaseUsage is the most tokens one call of r can use, for reserving money before it:
// input estimated as ceil(bytes of the system prompt, the conversation — texts and tool
// calls —, the tools and the response schema / 4), output MaxTokens (defaultMaxTokens
// when MaxTokens is zero). Price it with Price.Cost.
func (r Request) WorstCaseUsage(defaultMaxTokens int) Usage {
	n := len(r.System) + len(r.ResponseSchema)
	for _, m := range r.Conversation() {
		n += len(m.Text) + len(m.ToolCallID)
		for _, tc := range m.ToolCalls {
			n += len(tc.ID) + len(tc.Name) + len(tc.Arguments)
		}
	}
	for _, t := range r.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	out := r.MaxTokens
	if out <= 0 {
		out = defaultMaxTokens
	}
	return Usage{InputTokens: (int64(n) + 3) / 4, OutputTokens: int64(out)}
}

// modelToolCall is the i-th (from 0) tool call a provider's answer made, checked: an ID,
// a valid tool name and arguments that are one JSON object (compacted, so the same call
// is recorded the same way). A bad call is a retryable *APIError: another attempt of the
// turn may get a well-formed one.
func modelToolCall(provider string, i int, id, name string, args []byte) (ToolCall, error) {
	bad := func(msg string) (ToolCall, error) {
		return ToolCall{}, &APIError{Provider: provider, Status: 200, Retryable: true,
			Message: fmt.Sprintf("tool call %d (%q): %s", i+1, name, msg)}
	}
	if id == "" {
		return bad("no ID")
	}
	if err := validToolName(name); err != nil {
		return bad(err.Error())
	}
	a, err := DecodeArguments(args)
	if err != nil {
		return bad("arguments: " + err.Error())
	}
	return ToolCall{ID: id, Name: name, Arguments: a}, nil
}

// argumentsOrEmpty is a call's arguments, {} when it has none.
func argumentsOrEmpty(a json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(a)) == 0 {
		return json.RawMessage("{}")
	}
	return a
}
