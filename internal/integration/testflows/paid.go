package testflows

import (
	"encoding/json"

	"github.com/shopspring/decimal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/flow"
)

// PaidFlows are the flows of the paid-attempt tests.
func PaidFlows() []flow.Definition { return []flow.Definition{Paid, PaidWave} }

// PaidInput is one agent step: its prompt (which picks the fake provider's script), model,
// whether it wants JSON, and its cost limit.
type PaidInput struct {
	Prompt   string `json:"prompt"`
	Model    string `json:"model"`
	JSON     bool   `json:"json,omitempty"`
	LimitUSD string `json:"limit_usd,omitempty"`
}

func (in PaidInput) agent() activities.Agent {
	a := activities.Agent{Prompt: in.Prompt, Model: in.Model}
	if in.JSON {
		a.ResponseSchema = json.RawMessage(`{"type":"object"}`)
	}
	if in.LimitUSD != "" {
		a.MaxBudgetUSD = decimal.RequireFromString(in.LimitUSD)
	}
	return a
}

// Paid runs one agent step, summarize.
var Paid = flow.Define("test.paid", func(ctx *flow.Context, in PaidInput) (string, error) {
	res, err := ctx.Agent("summarize", in.agent())
	return res.Text, err
})

// PaidWave runs three copies of the agent step in one Parallel wave.
var PaidWave = flow.Define("test.paid.wave", func(ctx *flow.Context, in PaidInput) (string, error) {
	a := in.agent()
	_, err := ctx.Parallel("wave", flow.WaitAll, flow.AgentStep("a", a), flow.AgentStep("b", a), flow.AgentStep("c", a))
	return "", err
})
