package testflows

import (
	"encoding/json"
	"time"

	"github.com/gateflow/gateflow/quality"

	"github.com/gateflow/gateflow/runs"

	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/flow"
)

// QualityFlows are the flows of the quality gate and decision tests.
func QualityFlows() []flow.Definition { return []flow.Definition{Quality, Decide} }

// QualityRules are the scripted provider's answers for QualityFlows: review scores of 79
// and 80, and a decision to ship.
func QualityRules() []llm.ScriptRule {
	return []llm.ScriptRule{
		{Match: "quality-review-79", Text: `{"review":{"score":79,"notes":"almost"}}`, InputTokens: 1000, OutputTokens: 20},
		{Match: "quality-review-80", Text: `{"review":{"score":80,"notes":"good enough"}}`, InputTokens: 1000, OutputTokens: 20},
		{Match: "decide-ship", Text: `{"choice":"ship","reason":"all checks are green"}`, InputTokens: 2000, OutputTokens: 30},
	}
}

// QualityInput is the review prompt (its scripted answer carries the score) and the gate's
// threshold.
type QualityInput struct {
	Prompt    string         `json:"prompt"`
	Threshold float64        `json:"threshold"`
	OnFail    quality.OnFail `json:"on_fail,omitempty"`
}

// Quality asks the scripted agent for a review with a score, then gates on review.score.
var Quality = flow.Define("test.quality", func(ctx *flow.Context, in QualityInput) (runs.Quality, error) {
	review, err := ctx.Agent("review", activities.Agent{Prompt: in.Prompt, Model: "scripted",
		MaxBudgetUSD:   decimal.RequireFromString("0.01"),
		ResponseSchema: json.RawMessage(`{"type":"object","properties":{"review":{"type":"object"}},"required":["review"]}`)})
	if err != nil {
		return runs.Quality{}, err
	}
	return ctx.QualityGate("review-quality", review, quality.Gate{Threshold: in.Threshold, Field: "review.score", OnFail: in.OnFail})
})

// DecideInput is a decision: an agent of Model decides without AssignTo.
type DecideInput struct {
	Prompt   string        `json:"prompt"`
	Options  []string      `json:"options"`
	Model    string        `json:"model,omitempty"`
	AssignTo []string      `json:"assign_to,omitempty"`
	Timeout  time.Duration `json:"timeout,omitempty"`
}

// Verdict is Decide's typed choice.
type Verdict string

// Decide makes one decision (flow.Decide) and returns the choice.
var Decide = flow.Define("test.decide", func(ctx *flow.Context, in DecideInput) (Verdict, error) {
	req := flow.DecisionRequest{Options: in.Options, Prompt: in.Prompt, AssignTo: in.AssignTo, Timeout: in.Timeout}
	if len(in.AssignTo) == 0 {
		req.Model, req.System, req.MaxBudgetUSD = in.Model, "You are the release manager.", decimal.RequireFromString("0.01")
	}
	// Quick retries, so a refused answer is asked again at once.
	retry := temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumAttempts: 3}
	return flow.Decide[Verdict](ctx.With(flow.Retry(retry)), "ship-or-hold", req)
})
