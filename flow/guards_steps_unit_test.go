package flow

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/protocol"
)

func TestMaxStepsCheckAndResolve(t *testing.T) {
	g := Guards{MaxSteps: 3}
	assert.NoError(t, g.checkSteps("s", 3), "equal to the limit is allowed")
	err := g.checkSteps("s", 4)
	assert.EqualError(t, err, "guard: steps 4 exceeds the limit of 3 at step s")
	assert.ErrorIs(t, err, errGuard)
	assert.NoError(t, Guards{MaxSteps: -1}.checkSteps("s", 1_000_000))

	assert.Equal(t, 10_000, Guards{}.resolve(Guards{}).MaxSteps, "the default")
	assert.Equal(t, 7, Guards{}.resolve(Guards{MaxSteps: 7}).MaxSteps, "the worker's default")
	assert.Equal(t, 2, Guards{MaxSteps: 2}.resolve(Guards{MaxSteps: 7}).MaxSteps, "the flow's wins")
	assert.Equal(t, -1, Guards{MaxSteps: -1}.resolve(Guards{MaxSteps: 7}).MaxSteps, "-1: no limit")

	assert.Error(t, Define("unit/bad-steps", func(*Context, none) (none, error) { return none{}, nil },
		WithGuards(Guards{MaxSteps: -2})).Err(), "only -1 means no limit")
}

// maxStepsFlow records a shell step, a skip, a sleep and a shell step, with a cleanup.
var maxStepsFlow = Define("unit/max-steps", func(ctx *Context, _ none) (none, error) {
	ctx.OnError("cleanup", activities.Shell{Command: "cleanup"})
	if _, err := ctx.Shell("one", activities.Shell{Command: "one"}); err != nil {
		return none{}, err
	}
	ctx.Skip("two", "nothing to do")
	if err := ctx.Sleep("three", time.Minute); err != nil {
		return none{}, err
	}
	_, err := ctx.Shell("four", activities.Shell{Command: "four"})
	return none{}, err
}, WithGuards(Guards{MaxSteps: 3}), MaxAttempts(2))

func TestMaxStepsRefusesTheStepPastTheLimit(t *testing.T) {
	env := newUnitEnv(t, runConfig{}, maxStepsFlow)
	shells := mockShell(env, deployShell)
	env.ExecuteWorkflow(maxStepsFlow.Name(), none{})
	require.True(t, env.IsWorkflowCompleted())
	err := env.GetWorkflowError()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "step four: guard: steps 4 exceeds the limit of 3 at step four")
	assert.Equal(t, []string{"one", "cleanup"}, commands(shells.all()), "four is not dispatched; the cleanup is not counted")

	st := queryState(t, env)
	assert.Equal(t, 1, st.Attempt, "a guard refusal is not attempted again")
	assert.Equal(t, 3, st.Guards.MaxSteps)
	four := stepByName(t, st, "four")
	assert.Equal(t, runs.StepFailed, four.Status)
	assert.Equal(t, "guard: steps 4 exceeds the limit of 3 at step four", four.Error)
	assert.Equal(t, runs.StepCompleted, stepByName(t, st, "cleanup").Status)
}

func TestMaxStepsWorkerDefaultAndNonActivitySteps(t *testing.T) {
	var errs []error
	f := Define("unit/max-steps-kinds", func(ctx *Context, _ none) (none, error) {
		errs = append(errs, ctx.Sleep("nap", time.Second))
		ctx.Skip("skipped", "refused: recorded failed")
		errs = append(errs, ctx.Sleep("nap-2", time.Second))
		_, err := Async(ctx, "branch", func(*Context) (int, error) { return 1, nil }).Get(ctx)
		errs = append(errs, err)
		_, err = ctx.Parallel("group", WaitAll, ShellStep("a", activities.Shell{Command: "a"}))
		errs = append(errs, err)
		return none{}, nil
	})
	env := newUnitEnv(t, runConfig{guards: Guards{MaxSteps: 1}}, f)
	shells := mockShell(env, deployShell)
	env.ExecuteWorkflow(f.Name(), none{})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, errs, 4)
	assert.NoError(t, errs[0], "the worker's default allows one step")
	for _, err := range errs[1:] {
		assert.ErrorIs(t, err, errGuard)
		var ge *GuardError
		require.True(t, errors.As(err, &ge), "%v", err)
		assert.Equal(t, "steps", ge.Limit)
	}
	assert.Empty(t, shells.all(), "the parallel step is refused before dispatch")
	st := queryState(t, env)
	assert.Equal(t, 1, st.Guards.MaxSteps)
	assert.Equal(t, runs.StepFailed, stepByName(t, st, "skipped").Status)
	assert.Equal(t, runs.StepFailed, stepByName(t, st, "branch").Status)
}

func TestMaxStepsDoesNotRefuseRunsRecordedBeforeTheGuard(t *testing.T) {
	env := newUnitEnv(t, runConfig{}, maxStepsFlow)
	env.OnGetVersion(stepsVersion, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	shells := mockShell(env, deployShell)
	env.ExecuteWorkflow(maxStepsFlow.Name(), none{})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, []string{"one", "four"}, commands(shells.all()), "a run replayed without the marker goes on as it did")
}

func TestMaxRunsOption(t *testing.T) {
	h := func(*Context, none) (none, error) { return none{}, nil }
	f := Define("unit/max-runs", h, MaxRuns(2, core.OverflowReplace))
	require.NoError(t, f.Err())
	assert.Equal(t, 2, f.Info().MaxRuns)
	assert.Equal(t, core.OverflowReplace, f.Info().OnOverflow)
	assert.Equal(t, core.OverflowQueue, Define("unit/max-runs", h, MaxRuns(1, "")).Info().OnOverflow, "queue by default")
	assert.EqualError(t, Define("unit/max-runs", h, MaxRuns(0, core.OverflowQueue)).Err(), "define unit/max-runs: max runs 0: want at least 1")
	assert.EqualError(t, Define("unit/max-runs", h, MaxRuns(1, "drop")).Err(),
		`define unit/max-runs: max runs: on overflow "drop": want queue, refuse or replace`)
	assert.Zero(t, Define("unit/max-runs", h).Info().MaxRuns)

}

// TestMaxRunsRunAcquiresTheFlowsPermit: a run of a flow with MaxRuns waits in pending for
// a permit of the group flow:NAME (with the flow's limit), next to its start's groups.
func TestMaxRunsRunAcquiresTheFlowsPermit(t *testing.T) {
	f := Define("unit/max-runs-run", func(ctx *Context, _ none) (none, error) {
		_, err := ctx.Shell("work", activities.Shell{Command: "work"})
		return none{}, err
	}, MaxRuns(2, core.OverflowRefuse))
	for _, old := range []bool{false, true} {
		env := newUnitEnv(t, runConfig{}, f)
		if old {
			env.OnGetVersion(maxRunsVersion, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
		}
		startWith(t, env, protocol.RunOptions{QuotaChecked: true, Concurrency: map[string]int{"builders": 3}})
		env.RegisterActivityWithOptions(func(context.Context, string, protocol.SemaphoreMessage) error { return nil },
			activity.RegisterOptions{Name: protocol.SemaphoreSignalActivity})
		acquired := map[string]int{}
		env.OnActivity(protocol.SemaphoreSignalActivity, mock.Anything, mock.Anything, mock.Anything).Return(
			func(_ context.Context, signal string, m protocol.SemaphoreMessage) error {
				if signal == protocol.SemaphoreAcquire {
					acquired[m.Group] = m.Limit
				}
				return nil
			})
		mockShell(env, deployShell)
		var waited []string
		env.RegisterDelayedCallback(func() {
			st := queryState(t, env)
			waited = st.Waiting
			env.SignalWorkflow(protocol.SignalPermit, "builders")
			env.SignalWorkflow(protocol.SignalPermit, "flow:unit/max-runs-run")
		}, time.Second)
		env.ExecuteWorkflow(f.Name(), none{})
		require.True(t, env.IsWorkflowCompleted())
		require.NoError(t, env.GetWorkflowError())
		if old {
			assert.Equal(t, map[string]int{"builders": 3}, acquired, "a run recorded before MaxRuns does not wait for it")
			continue
		}
		assert.Equal(t, map[string]int{"builders": 3, "flow:unit/max-runs-run": 2}, acquired)
		assert.Equal(t, []string{"permit:builders"}, waited, "it waits for each permit in turn")
	}
}
