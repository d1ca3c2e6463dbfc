package flow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/runs"
)

// dollarATokenPrices price the model "m" at $1 an output token, input free, so a turn's
// worst case is its MaxTokens in dollars.
func dollarATokenPrices() llm.PriceTable {
	return llm.PriceTable{"m": {InputPerMTok: dec("0"), OutputPerMTok: dec("1000000")}}
}

// loopErrFlow runs one agent loop and keeps the loop's error in *got.
func loopErrFlow(a AgentLoop, got *error) *Flow[none, string] {
	return Define("unit/agent-loop-money", func(ctx *Context, _ none) (string, error) {
		res, err := ctx.AgentLoop("triage", a)
		*got = err
		return res.Text, err
	})
}

// runMoneyLoop runs a in a unit env with the worker configuration cfg; every turn takes
// turnTime of workflow time and every uptime tool call toolTime.
func runMoneyLoop(t *testing.T, cfg runConfig, a AgentLoop, turnTime, toolTime time.Duration,
	script func(int, activities.AgentTurn) (activities.AgentTurnResult, error)) (*testsuite.TestWorkflowEnvironment, *callLog[activities.AgentTurn], error) {
	t.Helper()
	var loopErr error
	f := loopErrFlow(a, &loopErr)
	env := newUnitEnv(t, cfg, f)
	env.RegisterActivity(uptime)
	env.RegisterActivity(lookupHost)
	env.OnActivity(uptime, mock.Anything).Return(42, nil).After(toolTime).Maybe()
	turns := &callLog[activities.AgentTurn]{}
	env.OnActivity(activities.AgentTurnActivity, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.AgentTurn) (activities.AgentTurnResult, error) {
			turns.add(in)
			n := 1
			for _, m := range in.Messages {
				if m.Role == llm.RoleAssistant {
					n++
				}
			}
			return script(n, in)
		}).After(turnTime).Maybe()
	env.ExecuteWorkflow(f.Name(), none{})
	require.True(t, env.IsWorkflowCompleted())
	return env, turns, loopErr
}

// TestAgentLoopFirstTurnReservesItsWorstCase: with the model priced by the worker, the
// first turn reserves its worst case against the run's cap like every later turn, over
// many caps and turn sizes: a cap below the worst case never dispatches the turn (the
// provider is asked 0 times, the error is a typed budget refusal), one at or above it
// always does, with the worst case as the turn's reservation.
func TestAgentLoopFirstTurnReservesItsWorstCase(t *testing.T) {
	for i := range 24 {
		maxTokens := 1 + (i*7)%13          // 1..13 output tokens: a worst case of $1..$13
		capUSD := 1 + (i*5)%15             // a run cap of $1..$15
		spent := fmt.Sprint(maxTokens / 2) // what the turn really costs
		t.Run(fmt.Sprintf("tokens %d cap %d", maxTokens, capUSD), func(t *testing.T) {
			a := AgentLoop{Agent: activities.Agent{Prompt: "p", Model: "m", MaxTokens: maxTokens}, Tools: hostTools()}
			cfg := runConfig{prices: dollarATokenPrices(), maxCost: decp(fmt.Sprint(capUSD))}
			env, turns, err := runMoneyLoop(t, cfg, a, 0, 0, func(int, activities.AgentTurn) (activities.AgentTurnResult, error) {
				res := turnAnswer("done")
				res.CostUSD = dec(spent)
				return res, nil
			})
			st := queryState(t, env)
			turn1 := stepByName(t, st, "turn-1")
			if maxTokens > capUSD {
				assert.Empty(t, turns.all(), "the first turn's worst case does not fit the cap: the provider is not asked")
				require.Error(t, err)
				assert.ErrorIs(t, err, budget.ErrExceeded)
				var ee *budget.ExceededError
				assert.True(t, errors.As(err, &ee), "typed: %T %v", err, err)
				assert.Equal(t, runs.StepRefused, turn1.Status)
				assert.Equal(t, runs.StatusBudgetExceeded, st.Status)
				assert.True(t, st.CostUSD.IsZero())
				return
			}
			require.NoError(t, err)
			require.Len(t, turns.all(), 1)
			assert.Equal(t, runs.StepCompleted, turn1.Status)
			require.NotNil(t, turn1.CostLimitUSD)
			assertUSD(t, fmt.Sprint(maxTokens), *turn1.CostLimitUSD, "turn 1 reserved its worst case")
			assertUSD(t, spent, st.CostUSD)
			assert.True(t, st.Budget.Reserved.IsZero(), "nothing stays reserved")
		})
	}
}

// TestAgentLoopFirstTurnOverTheLoopCapIsNotMade: the loop's own cap below the first
// turn's worst case ends the loop with the cost *AgentLimitError before any turn.
func TestAgentLoopFirstTurnOverTheLoopCapIsNotMade(t *testing.T) {
	a := AgentLoop{Agent: activities.Agent{Prompt: "p", Model: "m", MaxTokens: 10, MaxBudgetUSD: dec("9.99")}, Tools: hostTools()}
	env, turns, err := runMoneyLoop(t, runConfig{prices: dollarATokenPrices()}, a, 0, 0, pricedTurns)
	assert.Empty(t, turns.all())
	var le *AgentLimitError
	require.True(t, errors.As(err, &le), "%T %v", err, err)
	assert.Equal(t, AgentLimitCost, le.Limit)
	assert.Equal(t, 0, le.Turns)
	assert.True(t, le.SpentUSD.IsZero())
	for _, s := range queryState(t, env).Steps {
		assert.NotEqual(t, "turn-1", s.Name, "no turn is recorded")
	}
}

// TestAgentLoopUnpricedModelKeepsTheFirstTurnUnreserved: a model the worker's table has
// no price for leaves the first turn as it was (no worst case known, no reservation
// without a cap).
func TestAgentLoopUnpricedModelKeepsTheFirstTurnUnreserved(t *testing.T) {
	a := AgentLoop{Agent: activities.Agent{Prompt: "p", Model: "unpriced", MaxTokens: 10}, Tools: hostTools()}
	env, turns, err := runMoneyLoop(t, runConfig{prices: dollarATokenPrices(), maxCost: decp("5")}, a, 0, 0,
		func(int, activities.AgentTurn) (activities.AgentTurnResult, error) { return turnAnswer("done"), nil })
	require.NoError(t, err)
	require.Len(t, turns.all(), 1)
	turn1 := stepByName(t, queryState(t, env), "turn-1")
	assert.Nil(t, turn1.CostLimitUSD, "nothing known to reserve")
}

// toolEveryTurn calls uptime every turn, and answers the answer turn.
func toolEveryTurn(n int, in activities.AgentTurn) (activities.AgentTurnResult, error) {
	if in.ToolChoice == llm.ToolNone {
		return turnAnswer("out of time"), nil
	}
	return turnAnswer("", toolCall(fmt.Sprint("c", n), "uptime", `{}`)), nil
}

func TestAgentLoopTimeLimit(t *testing.T) {
	tests := []struct {
		name               string
		turnTime, toolTime time.Duration
		answer             bool
		wantTurns, calls   int
		// notRun: the last turn's tool call was stopped at the tool wave, not made.
		notRun bool
	}{
		// Turns end at 4, 8, 12 minutes: the third turn's tool wave is past 10 minutes.
		{"stops before a tool wave", 4 * time.Minute, 0, false, 3, 2, true},
		// Turn 1 0-1, tool 1-7, turn 2 7-8, tool 8-14: the third turn is past 10 minutes.
		{"stops before a turn", time.Minute, 6 * time.Minute, false, 2, 2, false},
		{"answers at a tool wave", 4 * time.Minute, 0, true, 4, 2, true},
		{"answers before a turn", time.Minute, 6 * time.Minute, true, 3, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := AgentLoop{Agent: activities.Agent{Prompt: "p", Model: "m"}, Tools: hostTools(),
				MaxLoopTime: 10 * time.Minute, AnswerOnLimit: tt.answer}
			env, turns, err := runMoneyLoop(t, runConfig{}, a, tt.turnTime, tt.toolTime, toolEveryTurn)
			all := turns.all()
			require.Len(t, all, tt.wantTurns)
			st := queryState(t, env)
			uptimes := 0
			for _, s := range st.Steps {
				if s.Name == "uptime" {
					uptimes++
				}
			}
			assert.Equal(t, tt.calls, uptimes)
			if !tt.answer {
				var le *AgentLimitError
				require.True(t, errors.As(err, &le), "%T %v", err, err)
				assert.Equal(t, AgentLimitTime, le.Limit)
				assert.Equal(t, tt.wantTurns, le.Turns)
				assert.Contains(t, stepByName(t, st, "triage").Error, "time limit reached")
				return
			}
			require.NoError(t, err)
			last := all[len(all)-1]
			assert.Equal(t, llm.ToolNone, last.ToolChoice)
			assert.Contains(t, last.Messages[len(last.Messages)-1].Text, "time limit")
			if tt.notRun {
				stopped := last.Messages[len(last.Messages)-2]
				assert.True(t, stopped.IsError)
				assert.Equal(t, llm.RoleTool, stopped.Role)
				assert.True(t, strings.HasPrefix(stopped.Text, "not run: the time limit (10m0s)"), stopped.Text)
			}
		})
	}
}

// TestAgentLoopTimeLimitZeroIsNone: without MaxLoopTime a long loop runs to its answer.
func TestAgentLoopTimeLimitZeroIsNone(t *testing.T) {
	a := AgentLoop{Agent: activities.Agent{Prompt: "p", Model: "m"}, Tools: hostTools()}
	_, turns, err := runMoneyLoop(t, runConfig{}, a, time.Hour, time.Hour, func(n int, in activities.AgentTurn) (activities.AgentTurnResult, error) {
		if n == 4 {
			return turnAnswer("done"), nil
		}
		return toolEveryTurn(n, in)
	})
	require.NoError(t, err)
	assert.Len(t, turns.all(), 4)
}

// TestAgentLoopTimeLimitBetweenWaves: a turn's tool calls past the first wave are not made
// once the time limit is reached; each call still gets a result, in the model's order, so
// the answer turn sees a well-formed conversation.
func TestAgentLoopTimeLimitBetweenWaves(t *testing.T) {
	a := AgentLoop{Agent: activities.Agent{Prompt: "p", Model: "m"}, Tools: hostTools(),
		MaxLoopTime: 5 * time.Minute, AnswerOnLimit: true}
	n := agentToolParallelism + 2
	env, turns, err := runMoneyLoop(t, runConfig{}, a, 0, 6*time.Minute, func(_ int, in activities.AgentTurn) (activities.AgentTurnResult, error) {
		if in.ToolChoice == llm.ToolNone {
			return turnAnswer("partial"), nil
		}
		var calls []llm.ToolCall
		for i := range n {
			calls = append(calls, toolCall(fmt.Sprint("c", i), "uptime", `{}`))
		}
		return turnAnswer("", calls...), nil
	})
	require.NoError(t, err)
	all := turns.all()
	require.Len(t, all, 2)
	msgs := all[1].Messages
	results := msgs[2 : 2+n] // after the prompt and the calls
	for i, m := range results {
		assert.Equal(t, fmt.Sprint("c", i), m.ToolCallID, "in the model's order")
		if i < agentToolParallelism {
			assert.Equal(t, llm.ToolResult(m.ToolCallID, "42", false), m)
		} else {
			assert.True(t, m.IsError)
			assert.Contains(t, m.Text, "not run: the time limit (5m0s)")
		}
	}
	uptimes := 0
	for _, s := range queryState(t, env).Steps {
		if s.Name == "uptime" {
			uptimes++
		}
	}
	assert.Equal(t, agentToolParallelism, uptimes, "the second wave is not made")
	var out string
	require.NoError(t, env.GetWorkflowResult(&out))
	assert.Equal(t, "partial", out)
}
