package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/signals"
)

// AgentActivity is the Temporal activity name of agent steps.
const AgentActivity = "gateflow.agent"

// Application error types of agent steps.
const (
	// AgentBudgetErrorType: the step's worst-case cost exceeds its MaxBudgetUSD; the
	// provider was not called. Non-retryable.
	AgentBudgetErrorType = "gateflow.AgentBudget"
	// AgentBadJSONErrorType: the step has a ResponseSchema and the answer is not JSON.
	// Retryable; the details are the AgentResult of the paid call.
	AgentBadJSONErrorType = "gateflow.AgentBadJSON"
	// AgentSchemaErrorType: the step has a ResponseSchema and the answer is JSON that does
	// not match it (a field missing, a value outside an enum). Retryable, so the model is
	// asked again; the details are the AgentResult of the paid call, and the message says
	// what did not match.
	AgentSchemaErrorType = "gateflow.AgentSchema"
	// AgentRateLimitedErrorType: the provider rate limited the call (429, or Anthropic's
	// 529). Retryable, with NextRetryDelay set from the provider's Retry-After.
	AgentRateLimitedErrorType = "gateflow.AgentRateLimited"
	// AgentAPIErrorType: the provider failed the call; retryable for 5xx, 408, 409 and
	// transport failures, not for other 4xx.
	AgentAPIErrorType = "gateflow.AgentAPI"
	// AgentUnpricedErrorType: the step has a budget but its model has no price and the
	// provider reported no cost, so the spend cannot be known. Non-retryable; the details
	// are the AgentResult (with its usage) of the paid call.
	AgentUnpricedErrorType = "gateflow.AgentUnpriced"
	// AgentFailedErrorType: any other provider failure. Retryable.
	AgentFailedErrorType = "gateflow.AgentFailed"
)

// DefaultAgentRetryAfter is the retry delay of a rate-limited call whose provider did not
// say how long to wait; MaxAgentRetryAfter caps what a provider may ask for.
const (
	DefaultAgentRetryAfter = 5 * time.Second
	MaxAgentRetryAfter     = 10 * time.Minute
)

// DefaultAgentMaxTokens bounds the answer of a step that has a MaxBudgetUSD but no
// MaxTokens, so that its worst-case cost is finite.
const DefaultAgentMaxTokens = 1024

// Agent is an AI-agent step: one model call with a prompt.
type Agent struct {
	// Prompt is the user message. Required.
	Prompt string `json:"prompt"`
	// System is the system prompt; empty means none.
	System string `json:"system,omitempty"`
	// Model is the provider's model name, e.g. "gpt-4o-mini". Required.
	Model string `json:"model"`
	// Provider names the provider explicitly (a key of the worker's llm.Router); empty
	// picks it from the model name (llm.ProviderForModel).
	Provider string `json:"provider,omitempty"`
	// MaxTokens bounds the answer's length; zero means the provider's default, or
	// DefaultAgentMaxTokens when MaxBudgetUSD is set.
	MaxTokens int `json:"max_tokens,omitempty"`
	// MaxBudgetUSD is the step's own cost limit; zero means none. The call is refused
	// before it reaches the provider when its worst case (WorstCaseUsage, priced) exceeds
	// it. A call that costs more than estimated still returns, with Overshoot set.
	MaxBudgetUSD decimal.Decimal `json:"max_budget_usd"`
	// ResponseSchema, when set, is a JSON Schema (an object) the answer must follow: the
	// answer must then be JSON, is parsed into AgentResult.JSON and is validated against
	// the schema (signals.CompileSchema: draft 2020-12 unless "$schema" says otherwise, no
	// references outside the schema). An answer that is not JSON fails the attempt with
	// AgentBadJSONErrorType, one that does not match with AgentSchemaErrorType; both are
	// paid for and retried.
	ResponseSchema json.RawMessage `json:"response_schema,omitempty"`
}

// Validate reports what is wrong with an agent step before it is dispatched: a blank
// prompt or model, negative limits, or a ResponseSchema that is not a JSON object or does
// not compile as a JSON Schema.
func (a Agent) Validate() error {
	_, err := a.validate()
	return err
}

// validate is Validate returning the compiled response schema (nil without one), so a
// call compiles it once.
func (a Agent) validate() (*signals.Schema, error) {
	if strings.TrimSpace(a.Prompt) == "" {
		return nil, errors.New("agent: prompt is empty")
	}
	if strings.TrimSpace(a.Model) == "" {
		return nil, errors.New("agent: model is empty")
	}
	if a.MaxTokens < 0 {
		return nil, fmt.Errorf("agent: max tokens %d is negative", a.MaxTokens)
	}
	if a.MaxBudgetUSD.IsNegative() {
		return nil, fmt.Errorf("agent: max budget $%s is negative", a.MaxBudgetUSD)
	}
	if len(a.ResponseSchema) == 0 {
		return nil, nil
	}
	if !json.Valid(a.ResponseSchema) {
		return nil, errors.New("agent: response schema is not valid JSON")
	}
	if trimmed := bytes.TrimSpace(a.ResponseSchema); len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, errors.New("agent: response schema must be a JSON object")
	}
	schema, err := signals.CompileSchema(a.ResponseSchema)
	if err != nil {
		return nil, fmt.Errorf("agent: response schema: %w", err)
	}
	return schema, nil
}

// WorstCaseUsage is the most tokens the step can use as far as its budget check is
// concerned: input estimated as ceil(bytes of prompt, system prompt and response schema /
// 4), output MaxTokens (DefaultAgentMaxTokens when MaxTokens is zero).
func (a Agent) WorstCaseUsage() llm.Usage {
	n := int64(len(a.Prompt) + len(a.System) + len(a.ResponseSchema))
	out := int64(a.MaxTokens)
	if out == 0 {
		out = DefaultAgentMaxTokens
	}
	return llm.Usage{InputTokens: (n + 3) / 4, OutputTokens: out}
}

// AgentResult is what an agent step produced.
type AgentResult struct {
	// Text is the answer.
	Text string `json:"text"`
	// JSON is the answer parsed as JSON (compacted), set when the step has a ResponseSchema.
	JSON json.RawMessage `json:"json,omitempty"`
	// Usage is the tokens the provider reported.
	Usage llm.Usage `json:"usage"`
	// CostUSD is what the call cost: the provider's reported cost, else the price table's.
	CostUSD decimal.Decimal `json:"cost_usd"`
	// CostKnown is false when neither the provider nor the price table priced the call
	// (allowed only for steps without a budget); CostUSD is then zero.
	CostKnown bool `json:"cost_known"`
	// Overshoot is set when CostUSD exceeds the step's MaxBudgetUSD (the provider used more
	// than the estimate); the result is returned anyway and the caller decides.
	Overshoot bool `json:"overshoot,omitempty"`
	// Model is the model that answered, as the provider names it.
	Model string `json:"model"`
	// Provider is the name of the provider that answered.
	Provider string `json:"provider"`
	// StopReason is the provider's reason for stopping (e.g. "stop", "max_tokens").
	StopReason string `json:"stop_reason,omitempty"`
	// Attempt is the activity attempt that produced this result (1 for the first).
	Attempt int `json:"attempt"`
	// Duration is how long the provider call took.
	Duration time.Duration `json:"duration"`
}

// AgentActivities holds what agent steps need: the providers and the price table.
// Register its RunAgent method under AgentActivity.
type AgentActivities struct {
	// Router picks the provider of each step. Required.
	Router *llm.Router
	// Prices prices the calls whose provider reports no cost; nil means
	// llm.DefaultPrices().
	Prices llm.PriceTable
}

// RunAgent is the agent step activity. It refuses a step whose worst case exceeds its
// budget (AgentBudgetErrorType) without calling the provider, heartbeats every second
// while the call is in flight, prices the answer and, with a ResponseSchema, parses it as
// JSON (AgentBadJSONErrorType) and validates it against the schema
// (AgentSchemaErrorType); both failures are retryable and carry the paid AgentResult. Provider failures become application errors: AgentRateLimitedErrorType (with the
// provider's retry delay), AgentAPIErrorType, AgentFailedErrorType; an unknown provider
// or model is a non-retryable "gateflow.InvalidStep".
func (a *AgentActivities) RunAgent(ctx context.Context, in Agent) (AgentResult, error) {
	schema, err := in.validate()
	if err != nil {
		return AgentResult{}, temporal.NewNonRetryableApplicationError(err.Error(), InvalidStepErrorType, nil)
	}
	req := llm.Request{Model: in.Model, System: in.System, Prompt: in.Prompt, MaxTokens: in.MaxTokens,
		ResponseSchema: in.ResponseSchema}
	paid, err := a.paidCall(ctx, in.Provider, req, in.MaxBudgetUSD, in.WorstCaseUsage())
	res := paid.result()
	if err != nil {
		return res, paid.failure(err, res)
	}
	if len(in.ResponseSchema) > 0 {
		if res.JSON, err = agentAnswerJSON(schema, res.Text, res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// agentPaid is one provider call of an agent step or turn: the answer and what it cost.
type agentPaid struct {
	resp      llm.Response
	model     string
	provider  string
	cost      decimal.Decimal
	costKnown bool
	overshoot bool
	attempt   int
	duration  time.Duration
	budget    decimal.Decimal
	// price is the price table's price of the model asked for, nil when it has none.
	price *llm.Price
}

// errAgentUnpriced: the call was made and paid for, but nothing priced it and it has a
// budget (agentPaid.failure turns it into AgentUnpricedErrorType with the result).
var errAgentUnpriced = errors.New("agent: unpriced call with a budget")

// paidCall makes one provider call of req: it picks the provider (providerName, or by the
// model), refuses a call whose worst case, priced, exceeds a positive budget
// (AgentBudgetErrorType) without calling the provider, and prices the answer (the
// provider's reported cost, else the price table). With a budget, the request's
// MaxTokens becomes worst.OutputTokens.
func (a *AgentActivities) paidCall(ctx context.Context, providerName string, req llm.Request, budget decimal.Decimal, worst llm.Usage) (agentPaid, error) {
	paid := agentPaid{model: req.Model, attempt: 1, budget: budget}
	if activity.IsActivity(ctx) {
		paid.attempt = int(activity.GetInfo(ctx).Attempt)
	}
	var router *llm.Router
	prices := llm.PriceTable(nil)
	if a != nil {
		router, prices = a.Router, a.Prices
	}
	if prices == nil {
		prices = llm.DefaultPrices()
	}
	provider, err := router.For(req.Model, providerName)
	if err != nil {
		return paid, temporal.NewNonRetryableApplicationError("agent: "+err.Error(), InvalidStepErrorType, nil)
	}
	paid.provider = providerName
	if paid.provider == "" {
		paid.provider = provider.Name()
	}
	hasBudget := budget.IsPositive()
	price, priced := prices.Lookup(req.Model)
	if priced {
		paid.price = &price
	}
	if hasBudget {
		req.MaxTokens = int(worst.OutputTokens)
		// An unpriced model cannot be estimated; the provider may still report its cost.
		if priced {
			if cost := price.Cost(worst); cost.GreaterThan(budget) {
				return paid, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
					"agent: worst-case cost $%s of model %s (%d input tokens estimated + %d output tokens) exceeds the step budget $%s",
					cost, req.Model, worst.InputTokens, worst.OutputTokens, budget), AgentBudgetErrorType, nil)
			}
		}
	}
	start := time.Now()
	resp, err := agentComplete(ctx, provider, req)
	paid.duration = time.Since(start)
	if err != nil {
		return paid, agentError(ctx, err)
	}
	paid.resp = resp
	if resp.Model != "" {
		paid.model = resp.Model
	}
	if !priced && resp.Model != "" {
		price, priced = prices.Lookup(resp.Model)
	}
	switch {
	case resp.CostUSD != nil:
		paid.cost, paid.costKnown = *resp.CostUSD, true
	case priced:
		paid.cost, paid.costKnown = price.Cost(resp.Usage), true
	case hasBudget:
		return paid, errAgentUnpriced
	}
	paid.overshoot = hasBudget && paid.cost.GreaterThan(budget)
	return paid, nil
}

// result is the call as an AgentResult (without JSON).
func (p agentPaid) result() AgentResult {
	return AgentResult{Text: p.resp.Text, Usage: p.resp.Usage, CostUSD: p.cost, CostKnown: p.costKnown,
		Overshoot: p.overshoot, Model: p.model, Provider: p.provider, StopReason: p.resp.StopReason,
		Attempt: p.attempt, Duration: p.duration}
}

// failure is the error paidCall returned, with details (the paid result) for an unpriced call.
func (p agentPaid) failure(err error, details any) error {
	if !errors.Is(err, errAgentUnpriced) {
		return err
	}
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(
		"agent: model %s has no price and provider %s reported no cost, so the step budget $%s cannot be enforced; add the model to the price table",
		p.model, p.provider, p.budget), AgentUnpricedErrorType, nil, details)
}

// agentAnswerJSON parses an answer as JSON and validates it against schema; a failure is
// a retryable AgentBadJSONErrorType or AgentSchemaErrorType error carrying details.
func agentAnswerJSON(schema *signals.Schema, text string, details any) (json.RawMessage, error) {
	js, err := agentJSON(text)
	if err != nil {
		return nil, temporal.NewApplicationError(fmt.Sprintf("agent: the answer is not JSON (%v): %s",
			err, agentHead(text, 200)), AgentBadJSONErrorType, details)
	}
	if err := schema.Validate(js); err != nil {
		return nil, temporal.NewApplicationError(fmt.Sprintf("agent: the answer does not match the response schema (%s): %s",
			agentSchemaProblem(err), httpOneLine(text, 200)), AgentSchemaErrorType, details)
	}
	return js, nil
}

// agentComplete makes the provider call, heartbeating every second while it is in flight
// (inside an activity) with a LiveOutput whose Progress says whom it waits for and how long. It returns when the call does or when ctx is done.
func agentComplete(ctx context.Context, p llm.Provider, req llm.Request) (llm.Response, error) {
	return heartbeatWhile(ctx, func(waited time.Duration) string {
		return fmt.Sprintf("waiting for provider %s (model %s), %s", p.Name(), req.Model, waited)
	}, func() (llm.Response, error) { return p.Complete(ctx, req) })
}

// agentError maps a provider error onto a Temporal application error.
func agentError(ctx context.Context, err error) error {
	var app *temporal.ApplicationError
	var rl *llm.RateLimitError
	var api *llm.APIError
	switch {
	case errors.As(err, &app):
		return err
	case errors.As(err, &rl):
		delay := rl.RetryAfter
		if delay <= 0 {
			delay = DefaultAgentRetryAfter
		}
		delay = min(delay, MaxAgentRetryAfter)
		return temporal.NewApplicationErrorWithOptions("agent: "+rl.Error(), AgentRateLimitedErrorType,
			temporal.ApplicationErrorOptions{NextRetryDelay: delay, Cause: err})
	case errors.As(err, &api):
		return temporal.NewApplicationErrorWithOptions("agent: "+api.Error(), AgentAPIErrorType,
			temporal.ApplicationErrorOptions{NonRetryable: !api.Retryable, Cause: err})
	case ctx.Err() != nil:
		return err
	default:
		return temporal.NewApplicationErrorWithOptions("agent: "+err.Error(), AgentFailedErrorType,
			temporal.ApplicationErrorOptions{Cause: err})
	}
}

// agentJSON parses an answer as JSON, tolerating surrounding white space and a Markdown
// code fence (```json … ```), and returns it compacted.
func agentJSON(text string) (json.RawMessage, error) {
	s := strings.TrimSpace(text)
	if strings.HasPrefix(s, "```") && strings.HasSuffix(s, "```") && len(s) >= 6 {
		s = strings.TrimSuffix(s, "```")
		if nl := strings.IndexByte(s, '\n'); nl >= 0 {
			s = s[nl+1:]
		} else {
			s = strings.TrimPrefix(s, "```")
		}
		s = strings.TrimSpace(s)
	}
	if s == "" {
		return nil, errors.New("empty answer")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s)); err != nil {
		return nil, err
	}
	return json.RawMessage(buf.Bytes()), nil
}

// agentHead returns at most n bytes from the start of s, trimmed of white space, cut on a
// rune boundary and marked with "…" when shortened.
func agentHead(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// agentSchemaProblem is a schema mismatch on one short line: the first few problems.
func agentSchemaProblem(err error) string {
	var se *signals.SchemaError
	if !errors.As(err, &se) || len(se.Errors) == 0 {
		return httpOneLine(err.Error(), 300)
	}
	const most = 3
	msgs := se.Errors
	if len(msgs) > most {
		msgs = append(append([]string(nil), msgs[:most]...), fmt.Sprintf("and %d more", len(se.Errors)-most))
	}
	return httpOneLine(strings.Join(msgs, "; "), 300)
}
