package flow

import (
	"testing"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/internal/entity"
)

var runnerFlow = Define("unit/fan-runner", func(ctx *Context, in []int) ([]int, error) {
	return ForEachChild(ctx, "double", countFlow, in, ForEachOptions{MaxParallel: 2})
})

// TestForEachChildPastTheThresholdUsesTheRunner: a large fan-out goes through the runner,
// which continues as new every few items, and the results come back in input order.
func TestForEachChildPastTheThresholdUsesTheRunner(t *testing.T) {
	over, per := fanoutRunnerOver, fanoutPerRun
	fanoutRunnerOver, fanoutPerRun = 3, 2
	t.Cleanup(func() { fanoutRunnerOver, fanoutPerRun = over, per })
	env := newUnitEnv(t, runConfig{}, runnerFlow, countFlow)
	entity.RegisterWorkflows(env)
	env.ExecuteWorkflow(runnerFlow.Name(), []int{1, 2, 3, 4, 5})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var out []int
	require.NoError(t, env.GetWorkflowResult(&out))
	assert.Equal(t, []int{2, 4, 6, 8, 10}, out)
	st := queryState(t, env)
	require.Len(t, st.Steps, 1, "the parent records the fan-out as one step")
	assert.Equal(t, runs.KindChild, st.Steps[0].Kind)
	assert.Equal(t, "5 of 5 items completed", st.Steps[0].Output)
	assert.Equal(t, "default-test-workflow-id/double", st.Steps[0].Child.ID)
}

var runnerFailFlow = Define("unit/fan-runner-fail", func(ctx *Context, in []int) ([]int, error) {
	return ForEachChild(ctx, "half", halfFlow, in, ForEachOptions{MaxParallel: 1, OnItemFail: Continue})
})

var halfFlow = Define("unit/half", func(ctx *Context, n int) (int, error) {
	if n%2 == 1 {
		return 0, Permanent(assertErr("odd"))
	}
	return n / 2, nil
})

type assertErr string

func (e assertErr) Error() string { return string(e) }

func TestForEachChildRunnerReportsEachFailedItem(t *testing.T) {
	over, per := fanoutRunnerOver, fanoutPerRun
	fanoutRunnerOver, fanoutPerRun = 2, 2
	t.Cleanup(func() { fanoutRunnerOver, fanoutPerRun = over, per })
	env := newUnitEnv(t, runConfig{}, runnerFailFlow, halfFlow)
	entity.RegisterWorkflows(env)
	env.ExecuteWorkflow(runnerFailFlow.Name(), []int{2, 3, 4, 5})
	require.True(t, env.IsWorkflowCompleted())
	err := env.GetWorkflowError()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "foreach half: item 2: odd")
	assert.Contains(t, err.Error(), "(also failed: 4)")
}
