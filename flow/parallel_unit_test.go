package flow

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
)

// parallelRun is what a parallel test flow's handler saw.
type parallelRun struct {
	results []ParallelResult
	err     error
}

// parallelFlow runs steps as the group "checks" in mode and keeps what Parallel returned;
// the run fails with Parallel's error.
func parallelFlow(got *parallelRun, mode ParallelMode, steps []ParallelStep, opts ...Option) *Flow[none, none] {
	return Define("unit/parallel", func(ctx *Context, _ none) (none, error) {
		got.results, got.err = ctx.Parallel("checks", mode, steps...)
		return none{}, got.err
	}, opts...)
}

// slowShell makes the shell step with command cmd take d of workflow time.
func slowShell(env *testsuite.TestWorkflowEnvironment, cmd string, d time.Duration) {
	env.OnActivity(activities.ShellActivity, mock.Anything, activities.Shell{Command: cmd}).After(d).
		Return(activities.ShellResult{Stdout: cmd + " done", Attempt: 1}, nil)
}

func TestParallelResultsInInputOrderWithEveryKind(t *testing.T) {
	var got parallelRun
	f := parallelFlow(&got, FailFast, []ParallelStep{
		ShellStep("a", activities.Shell{Command: "a"}),
		ShellStep("b", activities.Shell{Command: "b"}),
		HTTPStep("ping", activities.HTTP{URL: "https://example.test/health"}),
		AgentStep("review", activities.Agent{Prompt: "review", Model: "m"}),
		ActivityStep("count", countChars, "parallel"),
		ShellStep("c", activities.Shell{Command: "c"}),
	})
	env := newUnitEnv(t, runConfig{}, f)
	env.RegisterActivity(countChars)
	slowShell(env, "a", 3*time.Minute)
	slowShell(env, "b", time.Minute)
	slowShell(env, "c", 2*time.Minute)
	env.OnActivity(activities.HTTPActivity, mock.Anything, mock.Anything).After(90*time.Second).
		Return(activities.HTTPResult{Status: 200, Body: "healthy", Attempt: 1}, nil)
	mockAgent(env, func(activities.Agent) (activities.AgentResult, error) {
		return activities.AgentResult{Text: "lgtm", CostUSD: dec("0.25"), Usage: llm.Usage{InputTokens: 9, OutputTokens: 1}}, nil
	})
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	require.NoError(t, got.err)

	require.Len(t, got.results, 6)
	var names []string
	for _, r := range got.results {
		names = append(names, r.Name)
		assert.NoError(t, r.Err, r.Name)
	}
	assert.Equal(t, []string{"a", "b", "ping", "review", "count", "c"}, names, "input order, not completion order")
	for i, cmd := range map[int]string{0: "a", 1: "b", 5: "c"} {
		r := got.results[i]
		assert.Equal(t, runs.KindShell, r.Kind)
		require.NotNil(t, r.Shell, cmd)
		assert.Equal(t, cmd+" done", r.Shell.Stdout)
		assert.Nil(t, r.HTTP)
		assert.Nil(t, r.Agent)
	}
	require.NotNil(t, got.results[2].HTTP)
	assert.Equal(t, runs.KindHTTP, got.results[2].Kind)
	assert.Equal(t, 200, got.results[2].HTTP.Status)
	assert.Nil(t, got.results[2].Shell)
	require.NotNil(t, got.results[3].Agent)
	assert.Equal(t, "lgtm", got.results[3].Agent.Text)

	assert.Equal(t, runs.KindActivity, got.results[4].Kind)
	mc, err := ResultAs[meteredCount](got.results[4])
	require.NoError(t, err)
	assert.Equal(t, 8, mc.N)
	assert.True(t, dec("0.015").Equal(mc.Cost))
	_, err = ResultAs[meteredCount](got.results[0])
	assert.EqualError(t, err, "step a has no activity result", "a built-in step has no raw result")
	_, err = ResultAs[int](got.results[4])
	assert.ErrorContains(t, err, "step count: decode result: ")

	st := queryState(t, env)
	require.Len(t, st.Steps, 6)
	for _, s := range st.Steps {
		assert.Equal(t, "checks", s.Group, s.Name)
		assert.Equal(t, runs.StepCompleted, s.Status, s.Name)
	}
	start := st.Steps[0].StartedAt
	for _, s := range st.Steps {
		assert.Equal(t, start, s.StartedAt, "%s started with the others", s.Name)
	}
	assert.Equal(t, 3*time.Minute, stepByName(t, st, "a").EndedAt.Sub(start))
	assert.Equal(t, time.Minute, stepByName(t, st, "b").EndedAt.Sub(start))
	assert.Equal(t, 200, stepByName(t, st, "ping").HTTPStatus)
	assert.Equal(t, "0.25", stepByName(t, st, "review").CostUSD.String())
	assert.Contains(t, currentDetails(t, env), "| checks/a | shell | completed | 1 | 3m0s | - | a done |")
}

func TestParallelWaitAllRunsEveryStepAndReturnsTheFirstFailure(t *testing.T) {
	var got parallelRun
	f := parallelFlow(&got, WaitAll, []ParallelStep{
		ShellStep("slow", activities.Shell{Command: "slow"}),
		ShellStep("bad", activities.Shell{Command: "bad"}),
		ShellStep("worse", activities.Shell{Command: "worse"}),
	})
	env := newUnitEnv(t, runConfig{}, f)
	slowShell(env, "slow", time.Hour)
	env.OnActivity(activities.ShellActivity, mock.Anything, activities.Shell{Command: "bad"}).Return(activities.ShellResult{}, shellExit(1, "lint"))
	env.OnActivity(activities.ShellActivity, mock.Anything, activities.Shell{Command: "worse"}).After(time.Minute).Return(activities.ShellResult{}, shellExit(2, "tests"))
	env.ExecuteWorkflow(f.Name(), none{})
	require.Error(t, env.GetWorkflowError())

	var perr *ParallelError
	require.True(t, errors.As(got.err, &perr), "got %v", got.err)
	assert.Equal(t, "checks", perr.Group)
	assert.Equal(t, []string{"bad", "worse"}, perr.Failed, "first failure first")
	assert.Empty(t, perr.Cancelled)
	assert.EqualError(t, got.err, "parallel checks: step bad: exit code 1: lint (also failed: worse)")
	var se *StepError
	require.True(t, errors.As(got.err, &se))
	assert.Equal(t, "bad", se.Step, "unwraps to the first failure")

	require.Len(t, got.results, 3)
	assert.NoError(t, got.results[0].Err)
	require.NotNil(t, got.results[0].Shell, "the slow step ran to the end")
	assert.Equal(t, "slow done", got.results[0].Shell.Stdout)
	assert.Error(t, got.results[1].Err)
	assert.Nil(t, got.results[1].Shell, "no result for a failed step")

	st := queryState(t, env)
	slow := stepByName(t, st, "slow")
	assert.Equal(t, runs.StepCompleted, slow.Status)
	assert.Equal(t, time.Hour, slow.EndedAt.Sub(slow.StartedAt))
	assert.Equal(t, runs.StepFailed, stepByName(t, st, "bad").Status)
	assert.Equal(t, intp(2), stepByName(t, st, "worse").ExitCode)
	assert.Equal(t, got.err.Error(), st.Error)
}

func TestParallelFailFastCancelsTheOthers(t *testing.T) {
	var got parallelRun
	f := parallelFlow(&got, FailFast, []ParallelStep{
		ShellStep("slow", activities.Shell{Command: "slow"}, AllowFailure()),
		ShellStep("bad", activities.Shell{Command: "bad"}),
		ShellStep("slower", activities.Shell{Command: "slower"}),
	})
	env := newUnitEnv(t, runConfig{}, f)
	slowShell(env, "slow", time.Hour)
	slowShell(env, "slower", 2*time.Hour)
	env.OnActivity(activities.ShellActivity, mock.Anything, activities.Shell{Command: "bad"}).After(time.Minute).
		Return(activities.ShellResult{}, shellExit(1, "lint"))
	var cancelled callLog[string]
	env.SetOnActivityCanceledListener(func(info *activity.Info) { cancelled.add(info.ActivityID) })
	env.ExecuteWorkflow(f.Name(), none{})
	require.Error(t, env.GetWorkflowError())

	var perr *ParallelError
	require.True(t, errors.As(got.err, &perr), "got %v", got.err)
	assert.Equal(t, []string{"bad"}, perr.Failed)
	assert.ElementsMatch(t, []string{"slow", "slower"}, perr.Cancelled)
	assert.True(t, strings.HasPrefix(got.err.Error(), "parallel checks: step bad: "), got.err.Error())
	assert.Contains(t, got.err.Error(), "(cancelled: ")
	assert.ElementsMatch(t, []string{"slow", "slower"}, cancelled.all())

	require.Len(t, got.results, 3)
	assert.True(t, isCancellation(got.results[0].Err), "got %v", got.results[0].Err)
	assert.Nil(t, got.results[0].Shell)

	st := queryState(t, env)
	for _, name := range []string{"slow", "slower"} {
		s := stepByName(t, st, name)
		assert.Equal(t, runs.StepCancelled, s.Status, name)
		assert.Equal(t, "cancelled", s.Error, name)
		assert.False(t, s.AllowedFailure, "%s: a cancelled step is never allowed", name)
		assert.Equal(t, time.Minute, s.EndedAt.Sub(s.StartedAt), "%s stopped at the failure, not after its hour", name)
	}
	assert.Equal(t, runs.StepFailed, stepByName(t, st, "bad").Status)
	assert.Equal(t, 0, st.AllowedFailures)
	assert.Equal(t, runs.StatusFailed, st.Status)
}

func TestParallelFailFastRefusedStepCancelsTheOthersAtOnce(t *testing.T) {
	var got parallelRun
	f := parallelFlow(&got, FailFast, []ParallelStep{
		ShellStep("slow", activities.Shell{Command: "slow"}),
		ShellStep("invalid", activities.Shell{Command: " "}),
	})
	env := newUnitEnv(t, runConfig{}, f)
	slowShell(env, "slow", time.Hour)
	env.ExecuteWorkflow(f.Name(), none{})
	require.Error(t, env.GetWorkflowError())
	var perr *ParallelError
	require.True(t, errors.As(got.err, &perr), "got %v", got.err)
	assert.Equal(t, []string{"invalid"}, perr.Failed)
	assert.Equal(t, []string{"slow"}, perr.Cancelled)
	assert.EqualError(t, got.err, "parallel checks: step invalid: shell: command is empty (cancelled: slow)")
	st := queryState(t, env)
	slow := stepByName(t, st, "slow")
	assert.Equal(t, runs.StepCancelled, slow.Status)
	assert.Equal(t, time.Duration(0), slow.EndedAt.Sub(slow.StartedAt))
}

func TestParallelAllowedFailureDoesNotFailTheGroup(t *testing.T) {
	var got parallelRun
	f := parallelFlow(&got, FailFast, []ParallelStep{
		ShellStep("flaky", activities.Shell{Command: "bad"}, AllowFailure()),
		ShellStep("slow", activities.Shell{Command: "slow"}),
	})
	env := newUnitEnv(t, runConfig{}, f)
	slowShell(env, "slow", time.Hour)
	env.OnActivity(activities.ShellActivity, mock.Anything, activities.Shell{Command: "bad"}).Return(activities.ShellResult{}, shellExit(1, "x"))
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	require.NoError(t, got.err)
	assertAllowedFailure(t, got.results[0].Err, "flaky")
	assert.Nil(t, got.results[0].Shell, "no result for the failed step")
	require.NotNil(t, got.results[1].Shell)
	assert.Equal(t, "slow done", got.results[1].Shell.Stdout, "the sibling was not cancelled")
	st := queryState(t, env)
	assert.True(t, stepByName(t, st, "flaky").AllowedFailure)
	assert.Equal(t, runs.StatusWarning, st.Status)
}

func TestParallelFanOutGuardStartsNothing(t *testing.T) {
	steps := []ParallelStep{
		ShellStep("a", activities.Shell{Command: "a"}),
		ShellStep("b", activities.Shell{Command: "b"}),
		ShellStep("c", activities.Shell{Command: "c"}),
	}
	tests := []struct {
		name    string
		opts    []Option
		cfg     runConfig
		refused bool
		max     int
	}{
		{"flow guard", []Option{WithGuards(Guards{MaxFanOut: 2})}, runConfig{}, true, 2},
		{"worker guard", nil, runConfig{guards: Guards{MaxFanOut: 2}}, true, 2},
		{"flow guard overrides the worker's", []Option{WithGuards(Guards{MaxFanOut: 3})}, runConfig{guards: Guards{MaxFanOut: 1}}, false, 3},
		{"unlimited", []Option{WithGuards(Guards{MaxFanOut: -1})}, runConfig{guards: Guards{MaxFanOut: 1}}, false, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got parallelRun
			f := parallelFlow(&got, WaitAll, steps, tt.opts...)
			env := newUnitEnv(t, tt.cfg, f)
			calls := mockShell(env, deployShell)
			env.ExecuteWorkflow(f.Name(), none{})
			require.True(t, env.IsWorkflowCompleted())
			st := queryState(t, env)
			assert.Equal(t, tt.max, st.Guards.MaxFanOut)
			if !tt.refused {
				require.NoError(t, got.err)
				assert.Len(t, calls.all(), 3)
				return
			}
			assert.EqualError(t, got.err, "step checks: guard: fan-out 3 exceeds the limit of 2 at step checks")
			assert.ErrorIs(t, got.err, errGuard)
			var se *StepError
			require.True(t, errors.As(got.err, &se))
			assert.Equal(t, runs.StepKind("parallel"), se.Kind)
			assert.Nil(t, got.results)
			assert.Empty(t, calls.all(), "no step started")
			assert.Empty(t, st.Steps, "no step recorded")
			assert.Equal(t, runs.StatusFailed, st.Status)
		})
	}
}

func TestParallelWithoutStepsDoesNothing(t *testing.T) {
	got := parallelRun{err: errors.New("not called")}
	f := parallelFlow(&got, FailFast, nil)
	env := newUnitEnv(t, runConfig{}, f)
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	assert.NoError(t, got.err)
	assert.Nil(t, got.results)
}
