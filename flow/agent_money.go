package flow

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/activities/llm"
)

// An agent loop's money and time: the model's price pinned at the loop's start, so that
// the first turn reserves its worst case like every later turn, and the loop's wall-time
// limit (AgentLoop.MaxLoopTime).

// agentPriceChange is the workflow.GetVersion change that pins the price of an agent
// loop's model at the loop's start; loops recorded before it learn the price from their
// first turn, as they did.
const agentPriceChange = "gateflow.agent-loop-price"

// workerPrices is the worker's price table: WorkerOptions.Prices, or llm.DefaultPrices().
func workerPrices(opts WorkerOptions) llm.PriceTable {
	if opts.Prices != nil {
		return opts.Prices
	}
	return llm.DefaultPrices()
}

// pinnedPrice is what pinPrice records: the model's price, nil when it has none.
type pinnedPrice struct {
	Price *llm.Price `json:"price,omitempty"`
}

// pinPrice sets the loop's price to the worker's price of its model, looked up once and
// recorded (a SideEffect), so a replay uses the price the run saw whatever the replaying
// worker's price table says. A model the table does not price leaves the price unknown:
// the first turn then reserves what the loop's cost cap leaves, as before.
func (l *agentRun) pinPrice() error {
	if workflow.GetVersion(l.c.wctx, agentPriceChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return nil
	}
	prices, model := l.c.run.setup.prices, l.a.Model
	var pinned pinnedPrice
	if err := workflow.SideEffect(l.c.wctx, func(workflow.Context) any {
		if p, ok := prices.Lookup(model); ok {
			return pinnedPrice{Price: &p}
		}
		return pinnedPrice{}
	}).Get(&pinned); err != nil {
		return fmt.Errorf("agent: pin the price of model %s: %w", model, err)
	}
	if pinned.Price != nil {
		l.price = pinned.Price
	}
	return nil
}

// errAgentTimeUp ends a wave of tool calls that the loop's time limit stops.
var errAgentTimeUp = errors.New("agent: the loop's time limit is reached")

// timeUp reports whether the loop has run MaxLoopTime or longer (workflow time, from the
// agent step's start).
func (l *agentRun) timeUp() bool {
	return l.a.MaxLoopTime > 0 && l.c.Now().Sub(l.s.began) >= l.a.MaxLoopTime
}

// stopTools ends the tool calls of a turn at the time limit before the wave that starts
// at index next: the calls not made get a tool error as their result (the conversation
// stays well-formed for an answer turn), the calls made are counted and charged, and the
// error is errAgentTimeUp.
func (l *agentRun) stopTools(calls []llm.ToolCall, results []llm.Message, next, stepsBefore int) error {
	for i := next; i < len(calls); i++ {
		results[i] = llm.ToolResult(calls[i].ID, fmt.Sprintf("not run: the %s limit (%s) of this task is reached",
			AgentLimitTime, l.a.MaxLoopTime), true)
	}
	l.calls += next
	l.chargeTools(stepsBefore)
	l.msgs = append(l.msgs, results...)
	return errAgentTimeUp
}
