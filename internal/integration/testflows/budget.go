package testflows

import (
	"time"

	"github.com/shopspring/decimal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/flow"
)

// BudgetFlows are the flows of the budget tests.
func BudgetFlows() []flow.Definition {
	return []flow.Definition{Spend, SpendParallel, SpendChild, SpendParent, SpendThenWait, SpendThenSleep}
}

// BudgetRules are priced scripted answers: the "scripted" model costs $1 per million input
// tokens and $2 per million output tokens, so 249,998 in and 1 out cost exactly $0.25.
func BudgetRules() []llm.ScriptRule {
	return []llm.ScriptRule{
		{Match: "cost-25c", Text: "ok", InputTokens: 249998, OutputTokens: 1},
		{Match: "cost-13c", Text: "ok", InputTokens: 129998, OutputTokens: 1},
		{Match: "cost-1c", Text: "ok", InputTokens: 9998, OutputTokens: 1},
	}
}

// SpendStep is one agent step of Spend.
type SpendStep struct {
	Name     string `json:"name"`
	Prompt   string `json:"prompt"`
	LimitUSD string `json:"limit_usd"`
}

// SpendInput lists agent steps to run one after the other.
type SpendInput struct {
	Steps []SpendStep `json:"steps"`
}

func agentStep(s SpendStep) activities.Agent {
	return activities.Agent{Prompt: s.Prompt, Model: "scripted", MaxTokens: 1,
		MaxBudgetUSD: decimal.RequireFromString(s.LimitUSD)}
}

// Spend runs its agent steps in order.
var Spend = flow.Define("test.spend", func(ctx *flow.Context, in SpendInput) (int, error) {
	for i, s := range in.Steps {
		if _, err := ctx.Agent(s.Name, agentStep(s)); err != nil {
			return i, err
		}
	}
	return len(in.Steps), nil
})

// SpendParallel runs its agent steps in parallel.
var SpendParallel = flow.Define("test.spend.parallel", func(ctx *flow.Context, in SpendInput) (int, error) {
	var steps []flow.ParallelStep
	for _, s := range in.Steps {
		steps = append(steps, flow.AgentStep(s.Name, agentStep(s)))
	}
	_, err := ctx.Parallel("wave", flow.WaitAll, steps...)
	return len(steps), err
})

// SpendChild is Spend as a child flow.
var SpendChild = flow.Define("test.spend.child", func(ctx *flow.Context, in SpendInput) (int, error) {
	for i, s := range in.Steps {
		if _, err := ctx.Agent(s.Name, agentStep(s)); err != nil {
			return i, err
		}
	}
	return len(in.Steps), nil
})

var spendChild = SpendChild

// SpendParent spends $0.25, then runs SpendChild with the input.
var SpendParent = flow.Define("test.spend.parent", func(ctx *flow.Context, in SpendInput) (int, error) {
	if _, err := ctx.Agent("own", agentStep(SpendStep{Prompt: "cost-25c", LimitUSD: "0.25"})); err != nil {
		return 0, err
	}
	return flow.Child(ctx, "kid", spendChild, in)
})

// SpendThenWait spends $0.25, then waits for the gate "go" (alice).
var SpendThenWait = flow.Define("test.spend.wait", func(ctx *flow.Context, _ struct{}) (string, error) {
	if _, err := ctx.Agent("first", agentStep(SpendStep{Prompt: "cost-25c", LimitUSD: "0.25"})); err != nil {
		return "", err
	}
	d, err := ctx.Approval("go", approval.Request{Message: "go on?", Approvers: []string{"alice"}})
	return string(d.Outcome), err
})

// FileSpend is the input of SpendThenSleep.
type FileSpend struct {
	File string `json:"file"`
}

// SpendThenSleep spends $0.25, runs a long shell step (its worker is killed meanwhile),
// then spends $0.01.
var SpendThenSleep = flow.Define("test.spend.sleep", func(ctx *flow.Context, in FileSpend) (string, error) {
	if _, err := ctx.Agent("first", agentStep(SpendStep{Prompt: "cost-25c", LimitUSD: "0.25"})); err != nil {
		return "", err
	}
	if _, err := ctx.Shell("long", activities.Shell{Command: `echo start >> "$FILE"; sleep 4`, Env: map[string]string{"FILE": in.File}},
		flow.HeartbeatTimeout(2*time.Second)); err != nil {
		return "", err
	}
	_, err := ctx.Agent("last", agentStep(SpendStep{Prompt: "cost-1c", LimitUSD: "0.01"}))
	return "done", err
})
