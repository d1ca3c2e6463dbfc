// Package llm owns gateflow's connections to language-model providers and the money side of
// a model call: the provider-neutral Request and Response — a conversation (Message: user,
// assistant text and tool calls, tool results), the Tools the model may call, the
// ToolCalls it answers with and a StopKind — the Provider implementations (OpenAI-compatible
// Chat Completions and Anthropic Messages on the providers' official Go SDKs, and a
// deterministic Scripted provider, whose rules can script tool loops, for examples and
// tests), the Router that picks a provider for a model name, the errors a provider call
// can end with (RateLimitError, APIError), and the per-model price table (PriceTable) that
// turns token usage into an exact decimal USD cost, per turn and as a turn's worst case.
//
// It knows nothing about Temporal: the agent step activity (activities.RunAgent) maps these
// errors onto Temporal application errors, heartbeats while a call is in flight and enforces
// the step's own budget. Requests and responses are plain JSON-tagged values, recorded as
// activity inputs and outputs. Money is decimal.Decimal throughout, never a float.
package llm
