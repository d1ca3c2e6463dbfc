package flow

import (
	"errors"
	"testing"

	"github.com/gateflow/gateflow/runs"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/searchattr"
)

// Budgets in a run: the cap's resolution, reservations to the cent, overshoot, warnings.

// spend is one agent step of a budget test flow: its MaxBudgetUSD and what it costs.
type spend struct {
	name, limit, cost string
}

// agentSpec is the agent step of s; its prompt names the step, so the mock knows the cost.
func (s spend) agentSpec() activities.Agent {
	a := activities.Agent{Prompt: s.name, Model: "m"}
	if s.limit != "" {
		a.MaxBudgetUSD = dec(s.limit)
	}
	return a
}

// mockSpends answers every agent step with the cost of the spend its prompt names (zero
// for an unknown prompt) and logs the calls.
func mockSpends(env *testsuite.TestWorkflowEnvironment, spends ...spend) *callLog[activities.Agent] {
	costs := map[string]string{}
	for _, s := range spends {
		costs[s.name] = s.cost
	}
	return mockAgent(env, func(a activities.Agent) (activities.AgentResult, error) {
		cost := decimal.Zero
		if c, ok := costs[a.Prompt]; ok && c != "" {
			cost = dec(c)
		}
		return activities.AgentResult{Text: "ok " + a.Prompt, CostUSD: cost, CostKnown: true,
			Usage: llm.Usage{InputTokens: 1, OutputTokens: 1}, Attempt: 1}, nil
	})
}

// spendRun is what a spends flow's handler saw.
type spendRun struct {
	errs    callLog[error]
	attempt int
}

// spendsFlow runs spends as agent steps in order, after registering an OnError shell step
// "notify". With swallow, a step's error is kept and the handler goes on (and returns
// nil); otherwise the handler returns the first error.
func spendsFlow(name string, got *spendRun, swallow bool, spends []spend, opts ...Option) *Flow[none, none] {
	return Define(name, func(ctx *Context, _ none) (none, error) {
		got.attempt = ctx.Attempt()
		ctx.OnError("notify", activities.Shell{Command: "notify"})
		for _, s := range spends {
			_, err := ctx.Agent(s.name, s.agentSpec())
			if err != nil {
				got.errs.add(err)
				if !swallow {
					return none{}, err
				}
			}
		}
		return none{}, nil
	}, opts...)
}

// startWith gives the run its start options, as flowclient.Client.Start does through the Memo.
func startWith(t *testing.T, env *testsuite.TestWorkflowEnvironment, o protocol.RunOptions) {
	t.Helper()
	require.NoError(t, env.SetMemoOnStart(map[string]any{protocol.MemoOptions: o}))
}

// maxCostUpserts records every FlowMaxCostUSD value upserted, in order.
func maxCostUpserts(env *testsuite.TestWorkflowEnvironment) *callLog[float64] {
	l := &callLog[float64]{}
	env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		if v, ok := args.Get(0).(temporal.SearchAttributes).GetFloat64(searchattr.MaxCostKey); ok {
			l.add(v)
		}
	}).Return(nil)
	return l
}

// budgetError asserts that the run failed with the application error a budget stop ends
// with and returns its message.
func budgetError(t *testing.T, env *testsuite.TestWorkflowEnvironment) string {
	t.Helper()
	require.True(t, env.IsWorkflowCompleted())
	var app *temporal.ApplicationError
	require.True(t, errors.As(env.GetWorkflowError(), &app), "want an application error, got %v", env.GetWorkflowError())
	assert.Equal(t, "gateflow.BudgetExceeded", app.Type())
	assert.True(t, app.NonRetryable())
	return app.Message()
}

func decp(s string) *decimal.Decimal { d := dec(s); return &d }

// assertUSD compares amounts as numbers ("1.0" equals "1.00").
func assertUSD(t *testing.T, want string, got decimal.Decimal, msgAndArgs ...any) {
	t.Helper()
	assert.True(t, dec(want).Equal(got), append([]any{"want $%s, got $%s", want, got.String()}, msgAndArgs...)...)
}

func TestBudgetCapResolution(t *testing.T) {
	tests := []struct {
		name       string
		start      string // protocol.RunOptions.MaxCostUSD
		flowCap    string // MaxCostUSD option
		workerCap  string // runConfig.maxCost
		wantSet    bool
		wantAmount string
		wantSource budget.Source
	}{
		{"start option wins", "2.50", "1.50", "1.00", true, "2.50", budget.SourceStart},
		{"start option of zero is a cap", "0", "1.50", "1.00", true, "0", budget.SourceStart},
		{"flow default", "", "1.50", "1.00", true, "1.50", budget.SourceFlow},
		{"worker default", "", "", "1.00", true, "1.00", budget.SourceWorker},
		{"an unreadable start option is ignored", "lots", "", "1.00", true, "1.00", budget.SourceWorker},
		{"none", "", "", "", false, "0", budget.SourceNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []Option
			if tt.flowCap != "" {
				opts = append(opts, MaxCostUSD(dec(tt.flowCap)))
			}
			f := Define("unit/cap", func(ctx *Context, _ none) (none, error) { return none{}, nil }, opts...)
			cfg := runConfig{}
			if tt.workerCap != "" {
				cfg.maxCost = decp(tt.workerCap)
			}
			env := newUnitEnv(t, cfg, f)
			if tt.start != "" {
				startWith(t, env, protocol.RunOptions{MaxCostUSD: tt.start})
			}
			upserts := maxCostUpserts(env)
			env.ExecuteWorkflow(f.Name(), none{})
			require.NoError(t, env.GetWorkflowError())

			st := queryState(t, env)
			require.NotNil(t, st.Budget, "the query shows the run's budget")
			assert.Equal(t, tt.wantSet, st.Budget.Cap.Set)
			assertUSD(t, tt.wantAmount, st.Budget.Cap.Amount)
			assert.Equal(t, tt.wantSource, st.Budget.Cap.Source)
			if tt.wantSet {
				want, _ := dec(tt.wantAmount).Float64()
				assert.Equal(t, []float64{want}, upserts.all(), "FlowMaxCostUSD is upserted once, with the cap")
			} else {
				assert.Empty(t, upserts.all(), "no FlowMaxCostUSD without a cap")
			}
		})
	}
}

// quarters are four steps of $0.25 each, reserving $0.25 each: $1.00 in all.
var quarters = []spend{{"a", "0.25", "0.25"}, {"b", "0.25", "0.25"}, {"c", "0.25", "0.25"}, {"d", "0.25", "0.25"}}

const refusedE = "budget: step e needs $0.01 but only $0.00 of the $1.00 cap is left (spent $1.00)"

func TestBudgetReservationsToTheCent(t *testing.T) {
	for _, swallow := range []bool{false, true} {
		name := "handler returns the step error"
		if swallow {
			name = "handler swallows the step error"
		}
		t.Run(name, func(t *testing.T) {
			var got spendRun
			f := spendsFlow("unit/cents", &got, swallow, append(quarters, spend{"e", "0.01", "0.01"}), MaxAttempts(3))
			env := newUnitEnv(t, runConfig{}, f)
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "cents-1"})
			startWith(t, env, protocol.RunOptions{MaxCostUSD: "1.00"})
			agents := mockSpends(env, quarters...)
			shells := mockShell(env, deployShell)
			env.ExecuteWorkflow(f.Name(), none{})

			// A returned step error keeps its step; a swallowed one leaves the ledger's refusal,
			// which names the step too.
			wantMsg := "step e: " + refusedE
			if swallow {
				wantMsg = refusedE
			}
			assert.Equal(t, wantMsg, budgetError(t, env))
			var prompts []string
			for _, a := range agents.all() {
				prompts = append(prompts, a.Prompt)
			}
			assert.Equal(t, []string{"a", "b", "c", "d"}, prompts, "four steps reach the cap exactly; the fifth is never dispatched")

			require.Len(t, got.errs.all(), 1)
			stepErr := got.errs.all()[0]
			assert.ErrorIs(t, stepErr, budget.ErrExceeded, "the handler can tell a budget refusal")
			assert.EqualError(t, stepErr, "step e: "+refusedE)
			assert.Equal(t, 1, got.attempt, "a budget stop is not attempted again (MaxAttempts 3)")

			st := queryState(t, env)
			assert.Equal(t, runs.StatusBudgetExceeded, st.Status)
			assert.Equal(t, wantMsg, st.Error)
			assert.Equal(t, 1, st.Attempt)
			e := stepByName(t, st, "e")
			assert.Equal(t, runs.StepRefused, e.Status, "its money did not fit: not dispatched")
			assert.Equal(t, refusedE, e.Error)
			assert.True(t, e.CostUSD.IsZero())
			for _, n := range []string{"a", "b", "c", "d"} {
				s := stepByName(t, st, n)
				assert.Equal(t, runs.StepCompleted, s.Status, n)
				assertUSD(t, "0.25", s.CostUSD, n)
			}
			assertUSD(t, "1.00", st.CostUSD)
			assertUSD(t, "1.00", st.Budget.Spent)
			assert.True(t, st.Budget.Reserved.IsZero(), "nothing stays reserved")
			assert.Empty(t, st.Budget.Reservations)
			require.Len(t, st.Budget.Charges, 4)
			for _, c := range st.Budget.Charges {
				assertUSD(t, "0.25", c.Limit, c.Key)
				assert.True(t, c.Overshoot.IsZero(), c.Key)
			}

			// The OnError step ran after the stop, told which step failed.
			require.Len(t, shells.all(), 1, "the on-error step ran once")
			sh := shells.all()[0]
			assert.Equal(t, "notify", sh.Command)
			assert.Equal(t, refusedE, sh.Env["GATEFLOW_ERROR_MESSAGE"])
			if !swallow {
				assert.Equal(t, "e", sh.Env["GATEFLOW_ERROR_STEP"])
			}
			n := stepByName(t, st, "notify")
			assert.True(t, n.OnError)
			assert.Equal(t, runs.StepCompleted, n.Status)
		})
	}
}

func TestBudgetStepUnderTheCapIsNotRefused(t *testing.T) {
	// The same steps with a cent more of cap: every step runs.
	var got spendRun
	f := spendsFlow("unit/cents-ok", &got, false, append(quarters, spend{"e", "0.01", "0.01"}))
	env := newUnitEnv(t, runConfig{}, f)
	startWith(t, env, protocol.RunOptions{MaxCostUSD: "1.01"})
	agents := mockSpends(env, append(quarters, spend{"e", "0.01", "0.01"})...)
	shells := mockShell(env, deployShell)
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	assert.Len(t, agents.all(), 5)
	assert.Empty(t, shells.all(), "no on-error step for a completed run")
	st := queryState(t, env)
	assert.Equal(t, runs.StatusCompleted, st.Status)
	assertUSD(t, "1.01", st.Budget.Spent)
}

func TestBudgetOvershootIsChargedAndCrossingTheCapStops(t *testing.T) {
	spends := []spend{{"a", "0.10", "0.13"}, {"b", "0.05", "0.09"}, {"c", "0.01", "0.01"}}
	var got spendRun
	f := spendsFlow("unit/overshoot", &got, false, spends)
	env := newUnitEnv(t, runConfig{}, f)
	startWith(t, env, protocol.RunOptions{MaxCostUSD: "0.20"})
	agents := mockSpends(env, spends...)
	mockShell(env, deployShell)
	env.ExecuteWorkflow(f.Name(), none{})

	const crossed = "budget: spent $0.22 of the $0.20 cap after step b"
	assert.Equal(t, "step b: "+crossed, budgetError(t, env))
	assert.Len(t, agents.all(), 2, "b went over the cap after it ran; c was never dispatched")

	st := queryState(t, env)
	assert.Equal(t, runs.StatusBudgetExceeded, st.Status)
	a := stepByName(t, st, "a")
	assert.Equal(t, runs.StepCompleted, a.Status)
	assertUSD(t, "0.13", a.CostUSD, "the step is charged what it cost, not its limit")
	b := stepByName(t, st, "b")
	assert.Equal(t, runs.StepCompleted, b.Status, "b itself ran")
	assertUSD(t, "0.09", b.CostUSD)
	for _, s := range st.Steps {
		assert.NotEqual(t, "c", s.Name, "c has no record: the run stopped after b")
	}
	assertUSD(t, "0.22", st.CostUSD)

	l := st.Budget
	assertUSD(t, "0.22", l.Spent)
	assert.True(t, l.Over())
	require.Len(t, l.Charges, 2)
	assert.Equal(t, "a", l.Charges[0].Key)
	assertUSD(t, "0.13", l.Charges[0].Amount)
	assertUSD(t, "0.10", l.Charges[0].Limit)
	assertUSD(t, "0.03", l.Charges[0].Overshoot)
	assertUSD(t, "0.09", l.Charges[1].Amount)
	assertUSD(t, "0.04", l.Charges[1].Overshoot)
	require.Len(t, got.errs.all(), 1)
	var ee *budget.ExceededError
	require.True(t, errors.As(got.errs.all()[0], &ee))
	assert.True(t, ee.AfterCharge)
}

func TestBudgetWarningRecordedOnce(t *testing.T) {
	spends := []spend{{"a", "0.50", "0.50"}, {"b", "0.35", "0.35"}, {"c", "0.05", "0.05"}, {"d", "0.05", "0.05"}}
	var got spendRun
	f := spendsFlow("unit/warn", &got, false, spends)
	env := newUnitEnv(t, runConfig{maxCost: decp("1.00")}, f)
	mockSpends(env, spends...)
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())

	st := queryState(t, env)
	assert.Equal(t, runs.StatusCompleted, st.Status)
	require.Len(t, st.Budget.Warnings, 1, "80% is crossed once, by b; c and d stay above it")
	w := st.Budget.Warnings[0]
	assertUSD(t, "0.8", w.Threshold)
	assertUSD(t, "0.85", w.Spent, "the spend right after the crossing charge")
	assertUSD(t, "1.00", w.Cap)
	assert.Equal(t, "budget: 80% of the $1.00 cap reached (spent $0.85)", w.String())
	assertUSD(t, "0.95", st.Budget.Spent)
}

func TestBudgetNoWarningBelowTheThreshold(t *testing.T) {
	spends := []spend{{"a", "0.50", "0.50"}, {"b", "0.29", "0.29"}}
	var got spendRun
	f := spendsFlow("unit/nowarn", &got, false, spends)
	env := newUnitEnv(t, runConfig{maxCost: decp("1.00")}, f)
	mockSpends(env, spends...)
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	st := queryState(t, env)
	assertUSD(t, "0.79", st.Budget.Spent)
	assert.Empty(t, st.Budget.Warnings, "79% of the cap raises no warning")
}
