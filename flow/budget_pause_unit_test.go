package flow

import (
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/protocol"
)

// The pause policy: a run waits in budget_paused for the Update gateflow.budget.

// pauseOptions caps the run at cap with the pause policy and an hour's wait.
func pauseOptions(cap string) protocol.RunOptions {
	return protocol.RunOptions{MaxCostUSD: cap, BudgetPolicy: budget.Pause, BudgetPause: time.Hour}
}

// raiseResult asserts the raise was accepted and returns the new cap.
func raiseResult(t *testing.T, o *updateOutcome) budget.Cap {
	t.Helper()
	c, ok := o.value(t).(budget.Cap)
	require.True(t, ok, "the Update returns the new cap, got %T", o.value(t))
	return c
}

func TestBudgetPauseWaitsForARaiseBeforeAStep(t *testing.T) {
	// a spends $0.25; b reserves $0.30, which the $0.50 cap does not allow: the run pauses.
	spends := []spend{{"a", "0.25", "0.25"}, {"b", "0.30", "0.20"}}
	var got spendRun
	f := spendsFlow("unit/budget-pause", &got, false, spends)
	env := newUnitEnv(t, runConfig{}, f)
	startWith(t, env, pauseOptions("0.50"))
	agents := mockSpends(env, spends...)
	upserts := maxCostUpserts(env)
	paused := stateAt(t, env, 10*time.Minute)
	low := updateAt(env, 20*time.Minute, protocol.UpdateBudget, protocol.BudgetRaise{To: "0.20", By: "alice"})
	junk := updateAt(env, 25*time.Minute, protocol.UpdateBudget, protocol.BudgetRaise{To: "lots", By: "alice"})
	raise := updateAt(env, 30*time.Minute, protocol.UpdateBudget, protocol.BudgetRaise{To: "0.60", By: "alice"})
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())

	assert.Equal(t, runs.StatusBudgetPaused, paused.Status, "waiting for a higher cap")
	assert.Equal(t, []string{"budget"}, paused.Waiting)
	assert.Len(t, paused.Steps, 2, "b is recorded as running while the run waits")
	assert.Equal(t, runs.StepRunning, paused.Steps[1].Status)

	err := low.refusal(t)
	assert.ErrorContains(t, err, "$0.20", "a cap below what is spent is refused by the Validator")
	assert.ErrorContains(t, junk.refusal(t), "lots")
	c := raiseResult(t, raise)
	assertUSD(t, "0.60", c.Amount)
	assert.Equal(t, budget.SourceRaise, c.Source)

	require.Len(t, agents.all(), 2)
	assert.Equal(t, "b", agents.all()[1].Prompt)
	st := queryState(t, env)
	assert.Equal(t, runs.StatusCompleted, st.Status)
	assert.Empty(t, st.Waiting)
	assertUSD(t, "0.60", st.Budget.Cap.Amount)
	assert.Equal(t, budget.SourceRaise, st.Budget.Cap.Source)
	assertUSD(t, "0.45", st.Budget.Spent)
	b := stepByName(t, st, "b")
	assert.Equal(t, 30*time.Minute, b.EndedAt.Sub(st.StartedAt), "b was dispatched when the raise came")
	assert.Equal(t, []float64{0.5, 0.6}, upserts.all(), "FlowMaxCostUSD follows the raise")
}

func TestBudgetPauseEndsExceededWithoutARaise(t *testing.T) {
	spends := []spend{{"a", "0.25", "0.25"}, {"b", "0.30", "0.20"}}
	var got spendRun
	f := spendsFlow("unit/budget-pause-timeout", &got, false, spends)
	env := newUnitEnv(t, runConfig{}, f)
	startWith(t, env, pauseOptions("0.50"))
	agents := mockSpends(env, spends...)
	shells := mockShell(env, deployShell)
	paused := stateAt(t, env, 59*time.Minute)
	env.ExecuteWorkflow(f.Name(), none{})

	assert.Equal(t, runs.StatusBudgetPaused, paused.Status)
	assert.Equal(t, "step b: budget: step b needs $0.30 but only $0.25 of the $0.50 cap is left (spent $0.25)", budgetError(t, env))
	assert.Len(t, agents.all(), 1, "b never ran")
	assert.Len(t, shells.all(), 1, "the on-error step ran")
	st := queryState(t, env)
	assert.Equal(t, runs.StatusBudgetExceeded, st.Status)
	require.NotNil(t, st.EndedAt)
	assert.Equal(t, time.Hour, st.EndedAt.Sub(st.StartedAt), "the run waited BudgetPause")
	assert.Equal(t, budget.SourceStart, st.Budget.Cap.Source, "never raised")
}

func TestBudgetPauseAfterACrossingCharge(t *testing.T) {
	// a costs $0.35 against its $0.25 limit and a $0.30 cap: the spend is over the cap.
	spends := []spend{{"a", "0.25", "0.35"}, {"b", "0.05", "0.05"}}
	var got spendRun
	f := spendsFlow("unit/budget-pause-over", &got, false, spends)
	env := newUnitEnv(t, runConfig{}, f)
	startWith(t, env, pauseOptions("0.30"))
	agents := mockSpends(env, spends...)
	paused := stateAt(t, env, 5*time.Minute)
	below := updateAt(env, 10*time.Minute, protocol.UpdateBudget, protocol.BudgetRaise{To: "0.32"})
	raise := updateAt(env, 20*time.Minute, protocol.UpdateBudget, protocol.BudgetRaise{To: "0.40"})
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())

	assert.Equal(t, runs.StatusBudgetPaused, paused.Status)
	assert.True(t, paused.Budget.Over())
	assert.EqualError(t, below.refusal(t), "budget: the new cap $0.32 is below the $0.35 already spent and reserved")
	assertUSD(t, "0.40", raiseResult(t, raise).Amount)
	assert.Len(t, agents.all(), 2, "b fits the raised cap exactly")
	st := queryState(t, env)
	assert.Equal(t, runs.StatusCompleted, st.Status)
	assertUSD(t, "0.40", st.Budget.Spent)
	assert.Empty(t, got.errs.all(), "the handler never saw a budget error")
}

func TestBudgetRaiseRefusedWithoutACap(t *testing.T) {
	f := Define("unit/budget-nocap", func(ctx *Context, _ none) (none, error) {
		return none{}, ctx.Sleep("wait", time.Hour)
	})
	env := newUnitEnv(t, runConfig{}, f)
	o := updateAt(env, time.Minute, protocol.UpdateBudget, protocol.BudgetRaise{To: "1.00"})
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	assert.EqualError(t, o.refusal(t), "budget: the run has no cap to raise")
	assert.False(t, queryState(t, env).Budget.Cap.Set)
}

func TestBudgetPolicyResolution(t *testing.T) {
	tests := []struct {
		name     string
		flowOpts []Option
		start    protocol.RunOptions
		wantWait time.Duration // how long the run waited before ending budget_exceeded
	}{
		{"stop by default", nil, protocol.RunOptions{}, 0},
		{"the flow's pause, default wait", []Option{OnBudgetExceeded(budget.Pause, 0)}, protocol.RunOptions{}, DefaultBudgetPause},
		{"the flow's pause and wait", []Option{OnBudgetExceeded(budget.Pause, 30*time.Minute)}, protocol.RunOptions{}, 30 * time.Minute},
		{"the start option's wait wins", []Option{OnBudgetExceeded(budget.Pause, 30*time.Minute)},
			protocol.RunOptions{BudgetPause: 2 * time.Hour}, 2 * time.Hour},
		{"the start option's stop wins", []Option{OnBudgetExceeded(budget.Pause, 30*time.Minute)},
			protocol.RunOptions{BudgetPolicy: budget.Stop}, 0},
		{"the start option's pause, default wait", nil, protocol.RunOptions{BudgetPolicy: budget.Pause}, DefaultBudgetPause},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spends := []spend{{"a", "0.25", "0.25"}, {"b", "0.30", "0.20"}}
			var got spendRun
			f := spendsFlow("unit/budget-policy", &got, false, spends, tt.flowOpts...)
			env := newUnitEnv(t, runConfig{}, f)
			tt.start.MaxCostUSD = "0.50"
			startWith(t, env, tt.start)
			agents := mockSpends(env, spends...)
			mockShell(env, deployShell)
			env.ExecuteWorkflow(f.Name(), none{})
			assert.Contains(t, budgetError(t, env), "step b needs $0.30")
			assert.Len(t, agents.all(), 1)
			st := queryState(t, env)
			assert.Equal(t, runs.StatusBudgetExceeded, st.Status)
			require.NotNil(t, st.EndedAt)
			assert.Equal(t, tt.wantWait, st.EndedAt.Sub(st.StartedAt))
		})
	}
}
