package flow

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/internal/display"
	"github.com/gateflow/gateflow/runs"
)

// defaultAgentMaxTurns is an agent loop's turn limit when AgentLoop.MaxTurns is zero.
const defaultAgentMaxTurns = 10

// agentToolParallelism is how many tool calls of one turn run at once.
const agentToolParallelism = 4

// AgentLoop is an agent step that may call tools: the model is asked in turns, each turn
// its own activity (activities.AgentTurnActivity) and each tool call its own step, until
// it answers without calling a tool.
type AgentLoop struct {
	// Agent is the prompt, system prompt, model and provider; MaxTokens bounds each
	// turn's answer, MaxBudgetUSD is the loop's cost cap (zero: none) and ResponseSchema
	// the final answer's schema.
	activities.Agent
	// Messages are seed messages, after the prompt (earlier turns, context).
	Messages []llm.Message
	// Tools are the tools the model may call. Without tools, messages and reads (and
	// without Think) the step is exactly a Context.Agent step: one gateflow.agent activity.
	Tools []Tool
	// Reads are resources of the worker's MCP servers, each read before turn 1 as the
	// step read-<n> (gateflow.mcp.read) and added, labelled with its URI, as a user
	// message after the seed messages (agent_mcp.go).
	Reads []activities.MCPRead
	// MaxTurns bounds the model turns; zero means 10.
	MaxTurns int
	// MaxLoopTokens bounds the tokens (input and output) of all turns; zero means none.
	MaxLoopTokens int64
	// MaxLoopTime bounds the loop's time (workflow time from the step's start), checked
	// before each turn and before each wave of tool calls; zero means none.
	MaxLoopTime time.Duration
	// Think asks for a JSON answer without tools: one agent call whose ResponseSchema
	// defaults to any JSON object. Think with Tools is an error.
	Think bool
	// AnswerOnLimit makes reaching a limit end with one last turn, without tool calls,
	// asking for the final answer (at the cost limit as long as the money left pays for,
	// with the model's price known); without it the step fails with an *AgentLimitError.
	AnswerOnLimit bool
}

// AgentLoopResult is what an agent loop produced: the final answer (Text, JSON), the
// sums of the turns (Usage, CostUSD), the number of turns and tool calls, and the whole
// conversation.
type AgentLoopResult struct {
	activities.AgentResult
	Turns     int           `json:"turns"`
	ToolCalls int           `json:"tool_calls"`
	Messages  []llm.Message `json:"messages,omitempty"`
	// LimitReached is the limit that ended the loop with an AnswerOnLimit answer.
	LimitReached AgentLimit `json:"limit_reached,omitempty"`
}

// AgentLimit names a limit of an agent loop.
type AgentLimit string

// Agent loop limits.
const (
	AgentLimitTurns  AgentLimit = "turns"
	AgentLimitTokens AgentLimit = "tokens"
	AgentLimitCost   AgentLimit = "cost"
	AgentLimitTime   AgentLimit = "time"
)

// AgentLimitError is an agent loop that reached a limit: which one, and what the loop
// had spent.
type AgentLimitError struct {
	Limit    AgentLimit
	Turns    int
	Tokens   runs.Tokens
	SpentUSD decimal.Decimal
}

// Error implements error.
func (e *AgentLimitError) Error() string {
	return fmt.Sprintf("agent: %s limit reached after %d turns (%d tokens, $%s spent)",
		e.Limit, e.Turns, e.Tokens.Total(), e.SpentUSD)
}

// AgentLoop runs an agent that may call tools as the step name: the model is asked in
// turns, each one a gateflow.agent.turn activity recorded as the step turn-<n> nested
// under name, paid for like an agent step (its worst case, at the model's price, reserved
// against the step's, the run's and the monthly limits first);
// each tool call it makes runs as a step named
// after the tool, nested under name, at most agentToolParallelism at once, and the
// results go back to the model in the order of its calls. A tool that fails, an unknown
// tool and arguments that do not fit go back to the model as tool errors; a fatal tool's
// failure fails the step. The step's record sums the turns' cost and tokens and holds the
// final answer. Reaching MaxTurns, MaxLoopTokens, MaxBudgetUSD or MaxLoopTime fails the
// step with an *AgentLimitError, or with AnswerOnLimit asks once more, without tools, for
// the answer. The model's price comes from the worker's price table, pinned at the loop's
// start, so the first turn's worst case is reserved too (not for a model it has no price for).
func (c *Context) AgentLoop(name string, a AgentLoop, opts ...StepOption) (AgentLoopResult, error) {
	if a.Think && len(a.ResponseSchema) == 0 {
		a.ResponseSchema = json.RawMessage(`{"type":"object"}`)
	}
	if len(a.Tools) == 0 && len(a.Messages) == 0 && len(a.Reads) == 0 {
		res, err := c.Agent(name, a.Agent, opts...) // one gateflow.agent activity, as ever
		return AgentLoopResult{AgentResult: res, Turns: 1}, err
	}
	s := c.begin(name, runs.KindAgent)
	l, err := newAgentRun(c, s, name, a, opts)
	if err == nil {
		err = s.checkWallTime()
	}
	if err == nil {
		err = c.countStep(name)
	}
	if err != nil {
		return AgentLoopResult{}, s.refuse(err)
	}
	if s.planned(fmt.Sprintf("agent loop, model %s, %d tools, at most %d turns", a.Model, len(a.Tools), l.maxTurns)) {
		return AgentLoopResult{}, nil
	}
	c.run.publish()
	res, err := l.run()
	return res, l.finish(res, err)
}

// agentRun is one agent loop while it runs.
type agentRun struct {
	c, sub   *Context
	s        *step
	a        AgentLoop
	opts     []StepOption
	tools    []llm.Tool
	byName   map[string]Tool
	maxTurns int
	msgs     []llm.Message
	spent    decimal.Decimal
	tokens   runs.Tokens
	turns    int
	calls    int
	// price is the model's price, pinned at the start (agent_money.go) and then the one
	// the last turn reported (nil while unpriced): the worst case of the next turn is then
	// known in the workflow.
	price *llm.Price
	// gateUses counts the calls of each tool that waited at a gate (agent_approve.go).
	gateUses map[string]int
}

func newAgentRun(c *Context, s *step, name string, a AgentLoop, opts []StepOption) (*agentRun, error) {
	if a.Think && len(a.Tools) > 0 {
		return nil, errors.New("agent: think mode takes no tools")
	}
	tools, err := llmTools(a.Tools)
	if err != nil {
		return nil, err
	}
	l := &agentRun{c: c, sub: c.branch(c.wctx, name), s: s, a: a, opts: opts, tools: tools,
		byName: make(map[string]Tool, len(a.Tools)), maxTurns: a.MaxTurns}
	if l.maxTurns <= 0 {
		l.maxTurns = defaultAgentMaxTurns
	}
	for _, t := range a.Tools {
		l.byName[t.Name] = t
	}
	if strings.TrimSpace(a.Prompt) != "" {
		l.msgs = append(l.msgs, llm.UserMessage(a.Prompt))
	}
	l.msgs = append(l.msgs, a.Messages...)
	if err := l.turn(nil).Validate(); err != nil {
		return nil, err
	}
	return l, nil
}

// turn is the next turn's input; answer asks for the final answer without tools.
func (l *agentRun) turn(answer []llm.Message) activities.AgentTurn {
	t := activities.AgentTurn{Model: l.a.Model, Provider: l.a.Provider, System: l.a.System,
		Messages: append(append([]llm.Message(nil), l.msgs...), answer...), Tools: l.tools,
		MaxTokens: l.a.MaxTokens, ResponseSchema: l.a.ResponseSchema}
	if answer != nil {
		t.ToolChoice = llm.ToolNone
	}
	if l.a.MaxBudgetUSD.IsPositive() {
		t.MaxBudgetUSD = l.a.MaxBudgetUSD.Sub(l.spent)
	}
	return t
}

// limit is the limit the loop has reached before its next turn, if any.
func (l *agentRun) limit() AgentLimit {
	switch {
	case l.turns >= l.maxTurns:
		return AgentLimitTurns
	case l.a.MaxLoopTokens > 0 && l.tokens.Total() >= l.a.MaxLoopTokens:
		return AgentLimitTokens
	case l.timeUp(): // agent_money.go
		return AgentLimitTime
	case l.a.MaxBudgetUSD.IsPositive() && l.spent.GreaterThanOrEqual(l.a.MaxBudgetUSD):
		return AgentLimitCost
	}
	if worst, ok := l.worstCase(l.turn(nil)); ok && l.a.MaxBudgetUSD.IsPositive() && worst.GreaterThan(l.left()) {
		return AgentLimitCost // the next turn's worst case does not fit what is left
	}
	return ""
}

// left is what the loop's cost cap leaves.
func (l *agentRun) left() decimal.Decimal { return l.a.MaxBudgetUSD.Sub(l.spent) }

// worstCase is the most the turn t can cost, when the model's price is known.
func (l *agentRun) worstCase(t activities.AgentTurn) (decimal.Decimal, bool) {
	if l.price == nil {
		return decimal.Zero, false
	}
	return l.price.Cost(t.WorstCaseUsage()), true
}

// answerTokens is the most output tokens an answer turn t can have within what the cost
// cap leaves (at most its own limit), when the price is known; zero when none fit.
func (l *agentRun) answerTokens(t activities.AgentTurn) int {
	u := t.WorstCaseUsage()
	if l.price == nil || !l.price.OutputPerMTok.IsPositive() {
		return 0
	}
	left := l.left().Sub(l.price.Cost(llm.Usage{InputTokens: u.InputTokens}))
	n := left.Shift(6).Div(l.price.OutputPerMTok).IntPart()
	return int(max(0, min(n, u.OutputTokens)))
}

// run asks the model turn after turn until it answers without tools or a limit ends it.
func (l *agentRun) run() (AgentLoopResult, error) {
	if err := l.pinPrice(); err != nil { // agent_money.go: turn 1 reserves its worst case too
		return AgentLoopResult{}, err
	}
	if err := l.prepare(); err != nil { // agent_mcp.go: MCP catalogs and reads, before turn 1
		return AgentLoopResult{}, err
	}
	for {
		if lim := l.limit(); lim != "" {
			return l.onLimit(lim)
		}
		res, err := l.ask(nil, 0)
		if err != nil {
			return AgentLoopResult{}, err
		}
		if len(res.ToolCalls) == 0 {
			return l.result(res, ""), nil
		}
		if err := l.callTools(res.ToolCalls); errors.Is(err, errAgentTimeUp) {
			return l.onLimit(AgentLimitTime)
		} else if err != nil {
			return AgentLoopResult{}, err
		}
	}
}

// onLimit ends the loop at the limit lim: an *AgentLimitError, or one last turn asking
// for the answer.
func (l *agentRun) onLimit(lim AgentLimit) (AgentLoopResult, error) {
	if !l.a.AnswerOnLimit {
		return AgentLoopResult{}, l.limitError(lim)
	}
	answer := []llm.Message{llm.UserMessage(fmt.Sprintf(
		"The %s limit of this task is reached: do not call tools; give your final answer now.", lim))}
	maxTokens := 0
	if l.a.MaxBudgetUSD.IsPositive() {
		// The answer's length is what the money left can pay for.
		if maxTokens = l.answerTokens(l.turn(answer)); maxTokens == 0 {
			return AgentLoopResult{}, l.limitError(lim)
		}
	}
	res, err := l.ask(answer, maxTokens)
	if err != nil {
		return AgentLoopResult{}, err
	}
	return l.result(res, lim), nil
}

func (l *agentRun) limitError(lim AgentLimit) error {
	return &AgentLimitError{Limit: lim, Turns: l.turns, Tokens: l.tokens, SpentUSD: l.spent}
}

// ask runs the next turn as the step turn-<n> and adds its answer to the conversation;
// maxTokens, when positive, bounds the answer. The turn reserves its worst case when the
// price is known (else what the cap leaves, as an agent step its budget).
func (l *agentRun) ask(answer []llm.Message, maxTokens int) (activities.AgentTurnResult, error) {
	var res activities.AgentTurnResult
	l.turns++
	spec := l.turn(answer)
	if maxTokens > 0 {
		spec.MaxTokens = maxTokens
	}
	cl := l.sub.builtinCall(fmt.Sprintf("turn-%d", l.turns), spec, l.opts)
	if worst, ok := l.worstCase(spec); ok && cl.opts.costLimit == nil {
		cl.costLimit = &worst
	}
	p := l.sub.dispatch(cl)
	err := l.sub.settle(p, &res, describeAgentTurn(&res))
	l.spent = l.spent.Add(l.c.run.state.Steps[p.idx].CostUSD)
	if t := l.c.run.state.Steps[p.idx].Tokens; t != nil {
		l.tokens = addTokens(l.tokens, *t)
	}
	if err != nil {
		var app *temporal.ApplicationError
		if l.a.MaxBudgetUSD.IsPositive() && errors.As(err, &app) && app.Type() == activities.AgentBudgetErrorType {
			return res, l.limitError(AgentLimitCost) // the next turn's worst case does not fit
		}
		return res, err
	}
	if res.Price != nil {
		l.price = res.Price
	}
	l.msgs = append(l.msgs, answer...)
	l.msgs = append(l.msgs, llm.Message{Role: llm.RoleAssistant, Text: res.Text, ToolCalls: res.ToolCalls})
	return res, nil
}

func describeAgentTurn(res *activities.AgentTurnResult) func() outcome {
	return func() outcome {
		out := res.Text
		if len(res.ToolCalls) > 0 {
			names := make([]string, len(res.ToolCalls))
			for i, tc := range res.ToolCalls {
				names[i] = tc.Name
			}
			out = "calls " + strings.Join(names, ", ")
		}
		return outcome{output: display.Preview(out, 200), attempt: res.Attempt, cost: res.CostUSD,
			tokens: runs.Tokens{Input: res.Usage.InputTokens, Output: res.Usage.OutputTokens}}
	}
}

// result is the loop's result from its final answer.
func (l *agentRun) result(final activities.AgentTurnResult, lim AgentLimit) AgentLoopResult {
	res := final.AgentResult
	res.Usage = llm.Usage{InputTokens: l.tokens.Input, OutputTokens: l.tokens.Output}
	res.CostUSD, res.Overshoot, res.Duration = l.spent, false, 0
	return AgentLoopResult{AgentResult: res, Turns: l.turns, ToolCalls: l.calls, Messages: l.msgs, LimitReached: lim}
}

// finish ends the agent step: its record holds the sums of the turns (the run's totals
// were charged by the turns themselves) and the final answer, or the error.
func (l *agentRun) finish(res AgentLoopResult, err error) error {
	rec := l.s.rec()
	rec.CostUSD = l.spent
	if l.tokens.Total() > 0 {
		t := l.tokens
		rec.Tokens = &t
	}
	if err != nil {
		serr := l.s.fail(l.s.now(), runs.StepFailed, err)
		l.s.failed()
		return serr
	}
	l.s.end(l.s.now(), runs.StepCompleted, "", display.Preview(res.Text, 200))
	return nil
}

// callTools runs the tool calls of one turn, at most agentToolParallelism at once, and
// adds their results to the conversation in the model's order.
func (l *agentRun) callTools(calls []llm.ToolCall) error {
	results := make([]llm.Message, len(calls))
	fatal := make([]error, len(calls))
	before := len(l.c.run.state.Steps)
	for start := 0; start < len(calls); start += agentToolParallelism {
		if l.timeUp() {
			return l.stopTools(calls, results, start, before) // agent_money.go
		}
		end := min(start+agentToolParallelism, len(calls))
		wg := workflow.NewWaitGroup(l.c.wctx)
		for i := start; i < end; i++ {
			wg.Add(1)
			workflow.Go(l.c.wctx, func(gctx workflow.Context) {
				defer wg.Done()
				results[i], fatal[i] = l.callTool(l.sub.withWorkflow(gctx), calls[i])
			})
		}
		wg.Wait(l.c.wctx)
		if err := firstError(fatal[start:end]); err != nil {
			l.calls += end
			l.chargeTools(before)
			return err // a fatal tool failed: the next calls are not made
		}
	}
	l.calls += len(calls)
	l.chargeTools(before)
	l.msgs = append(l.msgs, results...)
	return nil
}

// chargeTools adds what the tool steps recorded from index from on cost (a paid activity,
// a child) to what the loop spent: they draw on its cost cap.
func (l *agentRun) chargeTools(from int) {
	for _, r := range l.c.run.state.Steps[from:] {
		if r.Branch != l.sub.scope {
			continue
		}
		l.spent = l.spent.Add(r.CostUSD)
		if r.Tokens != nil {
			l.tokens = addTokens(l.tokens, *r.Tokens)
		}
	}
}

// callTool runs one tool call: its result for the model, or the error of a fatal tool.
func (l *agentRun) callTool(ctx *Context, tc llm.ToolCall) (llm.Message, error) {
	t, ok := l.byName[tc.Name]
	if !ok {
		names := make([]string, len(l.tools))
		for i, lt := range l.tools {
			names[i] = lt.Name
		}
		return llm.ToolResult(tc.ID, fmt.Sprintf("unknown tool %q: the tools are %s", tc.Name, strings.Join(names, ", ")), true), nil
	}
	gate := l.approveCall(ctx, t, tc) // agent_approve.go: people decide first, if the tool asks
	if gate.result != nil || gate.err != nil {
		return gate.resultOr(), gate.err
	}
	if !t.Fatal {
		ctx = ctx.With(AllowFailure())
	}
	ctx = l.toolContext(ctx, t) // agent_flowtool.go: a child's cap within the loop's
	out, err := t.Run(ctx, t.Name, gate.args)
	var argErr *toolArgumentsError
	switch {
	case err == nil:
		return llm.ToolResult(tc.ID, out+gate.note, false), nil
	case errors.As(err, &argErr) || !t.Fatal:
		return llm.ToolResult(tc.ID, err.Error(), true), nil
	}
	return llm.Message{}, err
}

func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
