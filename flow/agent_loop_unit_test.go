package flow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/runs"
)

type hostArgs struct {
	Host string `json:"host"`
}

func lookupHost(_ context.Context, in hostArgs) (string, error) {
	if in.Host == "bad" {
		return "", temporal.NewNonRetryableApplicationError("no such host bad", "NoHost", nil)
	}
	return "ip-" + in.Host, nil
}

func uptime(_ context.Context) (int, error) { return 42, nil }

func explode(_ context.Context, _ hostArgs) (string, error) {
	return "", temporal.NewNonRetryableApplicationError("boom", "Boom", nil)
}

// mockTurns answers the n-th turn (from 1: the assistant messages so far + 1) with
// script(n, turn) and logs the turns.
func mockTurns(env *testsuite.TestWorkflowEnvironment, script func(n int, in activities.AgentTurn) (activities.AgentTurnResult, error)) *callLog[activities.AgentTurn] {
	l := &callLog[activities.AgentTurn]{}
	env.OnActivity(activities.AgentTurnActivity, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.AgentTurn) (activities.AgentTurnResult, error) {
			l.add(in)
			n := 1
			for _, m := range in.Messages {
				if m.Role == llm.RoleAssistant {
					n++
				}
			}
			return script(n, in)
		}).Maybe()
	return l
}

func toolCall(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

func turnAnswer(text string, calls ...llm.ToolCall) activities.AgentTurnResult {
	return activities.AgentTurnResult{AgentResult: activities.AgentResult{Text: text, Usage: llm.Usage{InputTokens: 100, OutputTokens: 10},
		CostUSD: dec("0.25"), CostKnown: true, Model: "m", Attempt: 1}, ToolCalls: calls}
}

func hostTools(extra ...Tool) []Tool {
	return append([]Tool{
		ActivityTool("lookup", lookupHost, ToolDescription("looks a host up")),
		ActivityTool("uptime", uptime, ToolDescription("the uptime in days")),
	}, extra...)
}

// loopFlow runs one agent loop and returns its answer, or the limit it reached.
func loopFlow(a AgentLoop) *Flow[none, string] {
	return Define("unit/agent-loop", func(ctx *Context, _ none) (string, error) {
		res, err := ctx.AgentLoop("triage", a)
		var le *AgentLimitError
		if errors.As(err, &le) {
			return fmt.Sprintf("limit %s after %d turns, $%s, %d tokens", le.Limit, le.Turns, le.SpentUSD, le.Tokens.Total()), nil
		}
		return fmt.Sprintf("%s (%d turns, %d calls, $%s, limit %q)", res.Text, res.Turns, res.ToolCalls, res.CostUSD, res.LimitReached), err
	})
}

func runLoop(t *testing.T, a AgentLoop, script func(int, activities.AgentTurn) (activities.AgentTurnResult, error)) (*testsuite.TestWorkflowEnvironment, *callLog[activities.AgentTurn], string) {
	t.Helper()
	f := loopFlow(a)
	env := newUnitEnv(t, runConfig{}, f)
	env.RegisterActivity(lookupHost)
	env.RegisterActivity(uptime)
	env.RegisterActivity(explode)
	turns := mockTurns(env, script)
	env.ExecuteWorkflow(f.Name(), none{})
	var out string
	if env.GetWorkflowError() == nil {
		require.NoError(t, env.GetWorkflowResult(&out))
	}
	return env, turns, out
}

func TestAgentLoopThreeTurnsTwoToolsParallelResultsInOrder(t *testing.T) {
	a := AgentLoop{Agent: activities.Agent{Prompt: "triage hosts a and b", Model: "m"}, Tools: hostTools()}
	env, turns, out := runLoop(t, a, func(n int, _ activities.AgentTurn) (activities.AgentTurnResult, error) {
		switch n {
		case 1:
			return turnAnswer("", toolCall("c1", "lookup", `{"host":"a"}`), toolCall("c2", "lookup", `{"host":"b"}`)), nil
		case 2:
			return turnAnswer("", toolCall("c3", "uptime", `{}`)), nil
		}
		return turnAnswer("all fine"), nil
	})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, `all fine (3 turns, 3 calls, $0.75, limit "")`, out)
	all := turns.all()
	require.Len(t, all, 3)
	assert.Len(t, all[0].Tools, 2)
	msgs := all[1].Messages
	require.Len(t, msgs, 4) // prompt, calls, two results in the model's order
	assert.Equal(t, llm.ToolResult("c1", `"ip-a"`, false), msgs[2])
	assert.Equal(t, llm.ToolResult("c2", `"ip-b"`, false), msgs[3])
	assert.Equal(t, llm.ToolResult("c3", `42`, false), all[2].Messages[5])

	st := queryState(t, env)
	var ids []string
	for _, s := range st.Steps {
		ids = append(ids, s.ActivityID+" "+string(s.Status))
	}
	assert.Equal(t, []string{"triage completed", "triage/turn-1 completed", "triage/lookup completed",
		"triage/lookup#2 completed", "triage/turn-2 completed", "triage/uptime completed", "triage/turn-3 completed"}, ids)
	agent := stepByName(t, st, "triage")
	assert.Equal(t, runs.KindAgent, agent.Kind)
	assert.True(t, dec("0.75").Equal(agent.CostUSD), "%s", agent.CostUSD)
	assert.Equal(t, &runs.Tokens{Input: 300, Output: 30}, agent.Tokens)
	assert.Equal(t, "all fine", agent.Output)
	assert.True(t, dec("0.75").Equal(st.CostUSD), "the run is charged once per turn: %s", st.CostUSD)
	assert.Equal(t, runs.Tokens{Input: 300, Output: 30}, st.Tokens)
}

func TestAgentLoopToolErrorsGoBackToTheModel(t *testing.T) {
	a := AgentLoop{Agent: activities.Agent{Prompt: "p", Model: "m"}, Tools: hostTools()}
	env, turns, out := runLoop(t, a, func(n int, _ activities.AgentTurn) (activities.AgentTurnResult, error) {
		if n == 1 {
			return turnAnswer("", toolCall("c1", "lookup", `{"host":"bad"}`), toolCall("c2", "nope", `{}`),
				toolCall("c3", "lookup", `{"hots":"x"}`), toolCall("c4", "uptime", `{"x":1}`)), nil
		}
		return turnAnswer("done"), nil
	})
	require.NoError(t, env.GetWorkflowError())
	assert.Contains(t, out, "done (2 turns, 4 calls")
	res := turns.all()[1].Messages[2:]
	require.Len(t, res, 4)
	for _, m := range res {
		assert.True(t, m.IsError, "%+v", m)
	}
	assert.Contains(t, res[0].Text, "no such host bad")
	assert.Contains(t, res[1].Text, `unknown tool "nope": the tools are lookup, uptime`)
	assert.Contains(t, res[2].Text, `unknown field "hots"`)
	assert.Contains(t, res[3].Text, "takes no arguments")
	lookup := stepByName(t, queryState(t, env), "lookup")
	assert.Equal(t, runs.StepFailed, lookup.Status)
	assert.True(t, lookup.AllowedFailure)
}

func TestAgentLoopFatalToolFailsTheStep(t *testing.T) {
	a := AgentLoop{Agent: activities.Agent{Prompt: "p", Model: "m"},
		Tools: hostTools(ActivityTool("explode", explode, ToolFatal()))}
	env, turns, _ := runLoop(t, a, func(int, activities.AgentTurn) (activities.AgentTurnResult, error) {
		calls := []llm.ToolCall{toolCall("c1", "explode", `{"host":"a"}`)}
		for i := range agentToolParallelism {
			calls = append(calls, toolCall(fmt.Sprint("u", i), "uptime", `{}`))
		}
		return turnAnswer("", calls...), nil
	})
	require.Error(t, env.GetWorkflowError())
	assert.Contains(t, env.GetWorkflowError().Error(), "boom")
	assert.Len(t, turns.all(), 1)
	st := queryState(t, env)
	assert.Equal(t, runs.StepFailed, stepByName(t, st, "triage").Status)
	uptimes := 0
	for _, s := range st.Steps {
		if s.Name == "uptime" {
			uptimes++
		}
	}
	assert.Equal(t, agentToolParallelism-1, uptimes, "the calls after the fatal failure's batch are not made")
}

func TestAgentLoopRefusesBadToolsBeforeAnyModelCall(t *testing.T) {
	for name, tools := range map[string][]Tool{
		"duplicate": hostTools(ActivityTool("lookup", uptime)),
		"bad name":  {ActivityTool("look up", uptime)},
		"two args":  {ActivityTool("two", func(context.Context, int, int) error { return nil })},
		"bad param": {ShellTool("sh", activities.Shell{Command: "true"}, []ToolParam{{Name: "1x"}})},
	} {
		t.Run(name, func(t *testing.T) {
			a := AgentLoop{Agent: activities.Agent{Prompt: "p", Model: "m"}, Tools: tools}
			env, turns, _ := runLoop(t, a, func(int, activities.AgentTurn) (activities.AgentTurnResult, error) {
				return turnAnswer("x"), nil
			})
			require.Error(t, env.GetWorkflowError())
			assert.Empty(t, turns.all())
			assert.Equal(t, runs.StepFailed, stepByName(t, queryState(t, env), "triage").Status)
		})
	}
}

func alwaysCalls(int, activities.AgentTurn) (activities.AgentTurnResult, error) {
	return turnAnswer("", toolCall("c", "uptime", `{}`)), nil
}

func TestAgentLoopTurnLimit(t *testing.T) {
	a := AgentLoop{Agent: activities.Agent{Prompt: "p", Model: "m"}, Tools: hostTools(), MaxTurns: 2}
	env, turns, out := runLoop(t, a, func(n int, in activities.AgentTurn) (activities.AgentTurnResult, error) {
		return turnAnswer("", toolCall(fmt.Sprint("c", n), "uptime", `{}`)), nil
	})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, "limit turns after 2 turns, $0.5, 220 tokens", out)
	assert.Len(t, turns.all(), 2)
	agent := stepByName(t, queryState(t, env), "triage")
	assert.Equal(t, runs.StepFailed, agent.Status)
	assert.Contains(t, agent.Error, "turns limit reached after 2 turns")
}

func TestAgentLoopTokenLimit(t *testing.T) {
	a := AgentLoop{Agent: activities.Agent{Prompt: "p", Model: "m"}, Tools: hostTools(), MaxLoopTokens: 200}
	env, _, out := runLoop(t, a, func(n int, _ activities.AgentTurn) (activities.AgentTurnResult, error) {
		return turnAnswer("", toolCall(fmt.Sprint("c", n), "uptime", `{}`)), nil
	})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, "limit tokens after 2 turns, $0.5, 220 tokens", out)
}

func TestAgentLoopCostLimitIsTyped(t *testing.T) {
	// Each turn costs 0.25 and needs 0.25 of budget: a cap of 0.6 fits 2.4 turns.
	a := AgentLoop{Agent: activities.Agent{Prompt: "p", Model: "m", MaxBudgetUSD: dec("0.6")}, Tools: hostTools()}
	env, turns, out := runLoop(t, a, func(n int, in activities.AgentTurn) (activities.AgentTurnResult, error) {
		if in.MaxBudgetUSD.LessThan(dec("0.25")) {
			return activities.AgentTurnResult{}, temporal.NewNonRetryableApplicationError("worst case exceeds the budget", activities.AgentBudgetErrorType, nil)
		}
		return turnAnswer("", toolCall(fmt.Sprint("c", n), "uptime", `{}`)), nil
	})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, "limit cost after 3 turns, $0.5, 220 tokens", out)
	all := turns.all()
	require.Len(t, all, 3)
	assert.True(t, dec("0.6").Equal(all[0].MaxBudgetUSD))
	assert.True(t, dec("0.1").Equal(all[2].MaxBudgetUSD), "the third turn may spend what is left: %s", all[2].MaxBudgetUSD)
	st := queryState(t, env)
	assert.True(t, dec("0.5").Equal(st.CostUSD), "%s", st.CostUSD)
}

func TestAgentLoopAnswerOnLimit(t *testing.T) {
	a := AgentLoop{Agent: activities.Agent{Prompt: "p", Model: "m"}, Tools: hostTools(), MaxTurns: 2, AnswerOnLimit: true}
	env, turns, out := runLoop(t, a, func(n int, in activities.AgentTurn) (activities.AgentTurnResult, error) {
		if in.ToolChoice == llm.ToolNone {
			return turnAnswer("best effort"), nil
		}
		return turnAnswer("", toolCall(fmt.Sprint("c", n), "uptime", `{}`)), nil
	})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, `best effort (3 turns, 2 calls, $0.75, limit "turns")`, out)
	last := turns.all()[2]
	assert.Equal(t, llm.ToolNone, last.ToolChoice)
	assert.True(t, strings.Contains(last.Messages[len(last.Messages)-1].Text, "turns limit"), "%+v", last.Messages)
}

func TestAgentLoopThinkAndNoToolsAreOneAgentCall(t *testing.T) {
	for name, a := range map[string]AgentLoop{
		"no tools": {Agent: activities.Agent{Prompt: "p", Model: "m"}},
		"think":    {Agent: activities.Agent{Prompt: "p", Model: "m"}, Think: true},
	} {
		t.Run(name, func(t *testing.T) {
			f := loopFlow(a)
			env := newUnitEnv(t, runConfig{}, f)
			agents := mockAgent(env, func(activities.Agent) (activities.AgentResult, error) {
				return activities.AgentResult{Text: `{"ok":true}`, CostUSD: dec("0.1"), Attempt: 1}, nil
			})
			turns := mockTurns(env, alwaysCalls)
			env.ExecuteWorkflow(f.Name(), none{})
			require.NoError(t, env.GetWorkflowError())
			require.Len(t, agents.all(), 1)
			assert.Empty(t, turns.all())
			want := ""
			if a.Think {
				want = `{"type":"object"}`
			}
			assert.Equal(t, want, string(agents.all()[0].ResponseSchema))
			st := queryState(t, env)
			require.Len(t, st.Steps, 1)
			assert.Equal(t, "triage", st.Steps[0].ActivityID)
		})
	}
}

func TestAgentLoopThinkRefusesTools(t *testing.T) {
	a := AgentLoop{Agent: activities.Agent{Prompt: "p", Model: "m"}, Tools: hostTools(), Think: true}
	env, turns, _ := runLoop(t, a, alwaysCalls)
	require.Error(t, env.GetWorkflowError())
	assert.Contains(t, env.GetWorkflowError().Error(), "think mode takes no tools")
	assert.Empty(t, turns.all())
}

func TestAgentLoopShellToolTakesDeclaredParametersOnly(t *testing.T) {
	tmpl := activities.Shell{Command: `df -h "$MOUNT"`, Env: map[string]string{"LC_ALL": "C"}}
	disk := ShellTool("disk", tmpl, []ToolParam{{Name: "MOUNT", Description: "a mount point", Required: true}})
	assert.JSONEq(t, `{"type":"object","properties":{"MOUNT":{"type":"string","description":"a mount point"}},
		"required":["MOUNT"],"additionalProperties":false}`, string(disk.Parameters))
	f := loopFlow(AgentLoop{Agent: activities.Agent{Prompt: "p", Model: "m"}, Tools: []Tool{disk}})
	env := newUnitEnv(t, runConfig{}, f)
	shells := mockShell(env, func(activities.Shell) (activities.ShellResult, error) {
		return activities.ShellResult{Stdout: "97% used", Attempt: 1}, nil
	})
	turns := mockTurns(env, func(n int, _ activities.AgentTurn) (activities.AgentTurnResult, error) {
		if n == 1 {
			return turnAnswer("", toolCall("c1", "disk", `{"MOUNT":"/"}`), toolCall("c2", "disk", `{"MOUNT":"/","CMD":"rm"}`),
				toolCall("c3", "disk", `{}`), toolCall("c4", "disk", `{"MOUNT":1}`)), nil
		}
		return turnAnswer("full"), nil
	})
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, shells.all(), 1, "only the well-formed call runs")
	assert.Equal(t, map[string]string{"LC_ALL": "C", "MOUNT": "/"}, shells.all()[0].Env)
	assert.Equal(t, map[string]string{"LC_ALL": "C"}, tmpl.Env, "the template is not changed")
	res := turns.all()[1].Messages[2:]
	assert.Equal(t, llm.ToolResult("c1", "97% used", false), res[0])
	assert.Contains(t, res[1].Text, `unknown parameter "CMD"`)
	assert.Contains(t, res[2].Text, "missing parameter MOUNT")
	assert.Contains(t, res[3].Text, `parameter "MOUNT" is not a string`)
}

// paidLookup is a tool activity that reports its cost.
type paidLookup struct {
	IP   string          `json:"ip"`
	Cost decimal.Decimal `json:"cost"`
}

func (p paidLookup) StepCostUSD() decimal.Decimal { return p.Cost }

func lookupPaid(_ context.Context, in hostArgs) (paidLookup, error) {
	return paidLookup{IP: "ip-" + in.Host, Cost: decimal.RequireFromString("0.1")}, nil
}

func TestAgentLoopPaidToolsDrawOnTheLoopBudget(t *testing.T) {
	a := AgentLoop{Agent: activities.Agent{Prompt: "p", Model: "m", MaxBudgetUSD: dec("0.7")},
		Tools: []Tool{ActivityTool("lookup", lookupPaid)}}
	f := loopFlow(a)
	env := newUnitEnv(t, runConfig{}, f)
	env.RegisterActivity(lookupPaid)
	turns := mockTurns(env, func(n int, in activities.AgentTurn) (activities.AgentTurnResult, error) {
		if n == 1 {
			return turnAnswer("", toolCall("c1", "lookup", `{"host":"a"}`), toolCall("c2", "lookup", `{"host":"b"}`)), nil
		}
		return turnAnswer("ok"), nil
	})
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	var out string
	require.NoError(t, env.GetWorkflowResult(&out))
	assert.Equal(t, `ok (2 turns, 2 calls, $0.7, limit "")`, out)
	all := turns.all()
	assert.True(t, dec("0.25").Equal(all[1].MaxBudgetUSD), "0.7 - 0.25 - 2 × 0.1: %s", all[1].MaxBudgetUSD)
	assert.JSONEq(t, `{"ip":"ip-a","cost":"0.1"}`, all[1].Messages[2].Text)
	st := queryState(t, env)
	assert.True(t, dec("0.7").Equal(st.CostUSD), "%s", st.CostUSD)
}

// pricedTurns answer with tool calls until the answer turn (ToolChoice none), each turn
// costing its MaxTokens in dollars (output at $1 a token, input free) and reporting that price.
func pricedTurns(n int, in activities.AgentTurn) (activities.AgentTurnResult, error) {
	res := turnAnswer("", toolCall(fmt.Sprint("c", n), "uptime", `{}`))
	if in.ToolChoice == llm.ToolNone {
		res = turnAnswer("short answer")
	}
	res.CostUSD = dec(fmt.Sprint(in.MaxTokens))
	res.Price = &llm.Price{InputPerMTok: dec("0"), OutputPerMTok: dec("1000000")}
	return res, nil
}

func TestAgentLoopCostLimitStopsBeforeATurnThatDoesNotFit(t *testing.T) {
	a := AgentLoop{Agent: activities.Agent{Prompt: "p", Model: "m", MaxTokens: 10, MaxBudgetUSD: dec("25")}, Tools: hostTools()}
	env, turns, out := runLoop(t, a, pricedTurns)
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, "limit cost after 2 turns, $20, 220 tokens", out)
	assert.Len(t, turns.all(), 2, "the third turn's worst case ($10) does not fit the $5 left: not dispatched")
	st := queryState(t, env)
	assert.True(t, dec("20").Equal(st.CostUSD), "%s", st.CostUSD)
	turn2 := stepByName(t, st, "turn-2")
	require.NotNil(t, turn2.CostLimitUSD)
	assert.True(t, dec("10").Equal(*turn2.CostLimitUSD), "the second turn reserved its worst case: %s", turn2.CostLimitUSD)
}

func TestAgentLoopCostLimitAnswersWithWhatIsLeft(t *testing.T) {
	a := AgentLoop{Agent: activities.Agent{Prompt: "p", Model: "m", MaxTokens: 10, MaxBudgetUSD: dec("25")},
		Tools: hostTools(), AnswerOnLimit: true}
	env, turns, out := runLoop(t, a, pricedTurns)
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, `short answer (3 turns, 2 calls, $25, limit "cost")`, out)
	all := turns.all()
	require.Len(t, all, 3)
	assert.Equal(t, 5, all[2].MaxTokens, "the answer is as long as the $5 left pays for")
	assert.True(t, dec("25").Equal(queryState(t, env).CostUSD))
}

func TestAgentLoopHTTPToolSendsDeclaredParameters(t *testing.T) {
	get := HTTPTool("status", activities.HTTP{URL: "https://status.example/api?v=1"}, []ToolParam{{Name: "host", Required: true}})
	post := HTTPTool("page", activities.HTTP{Method: "POST", URL: "https://pager.example/page"}, []ToolParam{{Name: "text"}}, ToolFatal())
	f := loopFlow(AgentLoop{Agent: activities.Agent{Prompt: "p", Model: "m"}, Tools: []Tool{get, post}})
	env := newUnitEnv(t, runConfig{}, f)
	var reqs callLog[activities.HTTP]
	env.OnActivity(activities.HTTPActivity, mock.Anything, mock.Anything).Return(
		func(_ context.Context, h activities.HTTP) (activities.HTTPResult, error) {
			reqs.add(h)
			return activities.HTTPResult{Status: 200, Body: "ok " + h.URL, Attempt: 1}, nil
		}).Maybe()
	turns := mockTurns(env, func(n int, _ activities.AgentTurn) (activities.AgentTurnResult, error) {
		if n == 1 {
			return turnAnswer("", toolCall("c1", "status", `{"host":"a b"}`), toolCall("c2", "page", `{"text":"down"}`)), nil
		}
		return turnAnswer("paged"), nil
	})
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	all := reqs.all()
	require.Len(t, all, 2)
	// The two calls run at once: the test environment completes them in either order.
	if all[0].Method == "POST" {
		all[0], all[1] = all[1], all[0]
	}
	assert.Equal(t, "https://status.example/api?host=a+b&v=1", all[0].URL)
	assert.JSONEq(t, `{"text":"down"}`, string(all[1].JSON))
	assert.Equal(t, llm.ToolResult("c1", "ok https://status.example/api?host=a+b&v=1", false), turns.all()[1].Messages[2])

	bad := HTTPTool("bad", activities.HTTP{Method: "POST", URL: "https://x.example", Body: "fixed"}, []ToolParam{{Name: "a"}})
	_, err := llmTools([]Tool{bad})
	assert.ErrorContains(t, err, "has no body of its own")
}
