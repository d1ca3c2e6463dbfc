package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/signals"
)

// AgentTurnActivity is the Temporal activity name of one model turn of an agent loop
// (flow.Context.AgentLoop): the conversation so far goes in, the model's answer (text or
// tool calls) comes out, priced.
const AgentTurnActivity = "gateflow.agent.turn"

// AgentTurn is one model turn of an agent loop: the conversation so far, the tools the
// model may call and the model settings. It is paid for like an Agent step: the same
// budget refusal, pricing and error types.
type AgentTurn struct {
	// Model is the provider's model name. Required.
	Model string `json:"model"`
	// Provider names the provider explicitly; empty picks it from the model name.
	Provider string `json:"provider,omitempty"`
	// System is the system prompt; empty means none.
	System string `json:"system,omitempty"`
	// Messages is the conversation so far, starting with a user message. Required.
	Messages []llm.Message `json:"messages"`
	// Tools are the tools the model may call this turn; none means it must answer.
	Tools []llm.Tool `json:"tools,omitempty"`
	// ToolChoice says whether the model must, may or must not call a tool.
	ToolChoice llm.ToolChoice `json:"tool_choice,omitempty"`
	// MaxTokens bounds the answer; zero means the provider's default, or
	// DefaultAgentMaxTokens when MaxBudgetUSD is set.
	MaxTokens int `json:"max_tokens,omitempty"`
	// MaxBudgetUSD is what the turn may cost; zero means no limit. The turn is refused
	// (AgentBudgetErrorType) before the provider is called when its worst case exceeds it.
	MaxBudgetUSD decimal.Decimal `json:"max_budget_usd"`
	// ResponseSchema, when set, is the JSON Schema of the final answer: an answer without
	// tool calls must be JSON matching it (AgentBadJSONErrorType, AgentSchemaErrorType).
	ResponseSchema json.RawMessage `json:"response_schema,omitempty"`
}

// ActivityName is AgentTurnActivity.
func (AgentTurn) ActivityName() string { return AgentTurnActivity }

var _ Spec = AgentTurn{}

// Validate reports what is wrong with the turn before it is dispatched.
func (t AgentTurn) Validate() error {
	_, err := t.validate()
	return err
}

// validate is Validate returning the compiled response schema. The model, the limits and
// the schema are checked as an Agent's.
func (t AgentTurn) validate() (*signals.Schema, error) {
	schema, err := Agent{Prompt: "-", Model: t.Model, MaxTokens: t.MaxTokens, MaxBudgetUSD: t.MaxBudgetUSD,
		ResponseSchema: t.ResponseSchema}.validate()
	switch {
	case err != nil:
		return nil, err
	case len(t.Messages) == 0:
		return nil, errors.New("agent turn: the conversation is empty")
	}
	if err := t.request().Validate(); err != nil {
		return nil, fmt.Errorf("agent turn: %w", err)
	}
	return schema, nil
}

// request is the turn as a provider request.
func (t AgentTurn) request() llm.Request {
	return llm.Request{Model: t.Model, System: t.System, Messages: t.Messages, Tools: t.Tools,
		ToolChoice: t.ToolChoice, MaxTokens: t.MaxTokens, ResponseSchema: t.ResponseSchema}
}

// WorstCaseUsage is the most tokens the turn can use as far as its budget is concerned
// (llm.Request.WorstCaseUsage with DefaultAgentMaxTokens).
func (t AgentTurn) WorstCaseUsage() llm.Usage {
	return t.request().WorstCaseUsage(DefaultAgentMaxTokens)
}

// AgentTurnResult is what one turn produced: the answer, priced, as an AgentResult (its
// Text may be empty when the model only calls tools; JSON is set when the turn has a
// ResponseSchema and the model answered without tool calls), and the tool calls.
type AgentTurnResult struct {
	AgentResult
	// ToolCalls are the tools the model asks to call, in its order.
	ToolCalls []llm.ToolCall `json:"tool_calls,omitempty"`
	// Stop is why the model stopped, provider-neutral (AgentResult.StopReason is the
	// provider's word).
	Stop llm.StopKind `json:"stop,omitempty"`
	// Price is the price table's price of the model asked for (nil when it has none), so
	// the loop can reserve the worst case of its next turns exactly.
	Price *llm.Price `json:"price,omitempty"`
}

// RunAgentTurn is the agent turn activity: one provider call of the conversation, paid
// for and refused, priced and failed exactly as RunAgent's call.
func (a *AgentActivities) RunAgentTurn(ctx context.Context, in AgentTurn) (AgentTurnResult, error) {
	schema, err := in.validate()
	if err != nil {
		return AgentTurnResult{}, temporal.NewNonRetryableApplicationError(err.Error(), InvalidStepErrorType, nil)
	}
	paid, err := a.paidCall(ctx, in.Provider, in.request(), in.MaxBudgetUSD, in.WorstCaseUsage())
	res := AgentTurnResult{AgentResult: paid.result(), ToolCalls: paid.resp.ToolCalls, Stop: paid.resp.Stop,
		Price: paid.price}
	if err != nil {
		return res, paid.failure(err, res)
	}
	if schema != nil && len(res.ToolCalls) == 0 {
		if res.JSON, err = agentAnswerJSON(schema, res.Text, res); err != nil {
			return res, err
		}
	}
	return res, nil
}
