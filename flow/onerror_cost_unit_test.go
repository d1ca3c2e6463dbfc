// Cleanup steps after the wall time is used up, and the cost of activity steps run in
// parallel.

package flow

import (
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities"
)

// TestOnErrorRunsAfterWallTimeIsUsedUp: cleanup steps are exempt from the wall-time check
// and their timeouts are not clamped to the time left (zero or negative once the wall time
// is used up, which Temporal refuses: "A valid timeout may not be negative."), so the
// cleanup runs for a run stopped by its wall-time guard.
func TestOnErrorRunsAfterWallTimeIsUsedUp(t *testing.T) {
	f := Define("unit/wall-cleanup", func(ctx *Context, _ none) (none, error) {
		ctx.OnError("cleanup", activities.Shell{Command: "cleanup"})
		if err := ctx.Sleep("nap", 2*time.Minute); err != nil {
			return none{}, err
		}
		_, err := ctx.Shell("late", activities.Shell{Command: "late"})
		return none{}, err
	}, WithGuards(Guards{MaxWallTime: time.Minute}))
	env := newUnitEnv(t, runConfig{}, f)
	calls := mockShell(env, deployShell)
	env.ExecuteWorkflow(f.Name(), none{})
	require.ErrorContains(t, env.GetWorkflowError(), "guard: wall time 2m0s exceeds the limit of 1m0s at step late")
	assert.Equal(t, []string{"cleanup"}, commands(calls.all()), "the cleanup step ran")
	c := stepByName(t, queryState(t, env), "cleanup")
	assert.Equal(t, runs.StepCompleted, c.Status, "cleanup record: %s", c.Error)
}

// TestParallelActivityStepCostIsCharged: an ActivityStep run in Parallel is charged what
// its result reports (CostReporter/TokenReporter), as the same activity run by Step is.
// DESIGN.md: costs come "from any step that reports one".
func TestParallelActivityStepCostIsCharged(t *testing.T) {
	var got parallelRun
	f := parallelFlow(&got, WaitAll, []ParallelStep{ActivityStep("count", countChars, "abc")})
	env := newUnitEnv(t, runConfig{}, f)
	env.RegisterActivity(countChars)
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	st := queryState(t, env)
	s := stepByName(t, st, "count")
	assert.Equal(t, "0.015", s.CostUSD.String(), "step cost")
	assert.Equal(t, &runs.Tokens{Input: 7, Output: 3}, s.Tokens)
	assert.Equal(t, "0.015", st.CostUSD.String(), "run cost")
}
