// Package llm owns gateflow's connections to language-model providers and the money side of
// a model call: the provider-neutral Request and Response, the Provider implementations
// (OpenAI-compatible Chat Completions, Anthropic Messages, and a deterministic Scripted
// provider for examples and tests), the Router that picks a provider for a model name, the
// errors a provider call can end with (RateLimitError, APIError), and the per-model price
// table (PriceTable) that turns token usage into an exact decimal USD cost.
//
// It knows nothing about Temporal: the agent step activity (activities.RunAgent) maps these
// errors onto Temporal application errors, heartbeats while a call is in flight and enforces
// the step's own budget. Money is decimal.Decimal throughout, never a float.
package llm
