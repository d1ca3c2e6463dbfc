package flow

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/activities"
)

// assertAllowedFailure checks that err is the *AllowedFailure of the step named step.
func assertAllowedFailure(t *testing.T, err error, step string) {
	t.Helper()
	var af *AllowedFailure
	require.True(t, errors.As(err, &af), "want an *AllowedFailure, got %v", err)
	require.NotNil(t, af.Err)
	assert.Equal(t, step, af.Err.Step)
	var se *StepError
	assert.True(t, errors.As(err, &se), "errors.As sees the *StepError through it")
	assert.True(t, onlyAllowed(err))
}

// alwaysShell answers the shell steps of these tests: "work-fails", "broken" and
// "notify-fails" fail, everything else succeeds.
func alwaysShell(s activities.Shell) (activities.ShellResult, error) {
	switch s.Command {
	case "work-fails", "broken", "notify-fails":
		return activities.ShellResult{}, shellExit(1, s.Command)
	}
	return activities.ShellResult{Stdout: s.Command + " ok", Attempt: 1}, nil
}

func TestAlwaysRunsOnceOnEveryOutcomeAfterOnError(t *testing.T) {
	tests := []struct {
		outcome runs.Status
		// work is the handler's shell step, or "" for an agent step over the cap.
		work   string
		cancel bool
		// want are the shell commands run, in order.
		want      []string
		errorStep string
	}{
		{runs.StatusCompleted, "work", false, []string{"work", "report", "broken"}, ""},
		{runs.StatusFailed, "work-fails", false, []string{"work-fails", "cleanup", "report", "broken"}, "work"},
		{runs.StatusCancelled, "work-slow", true, []string{"cleanup", "report", "broken"}, "work"},
		{runs.StatusBudgetExceeded, "", false, []string{"cleanup", "report", "broken"}, "think"},
	}
	for _, tt := range tests {
		t.Run(string(tt.outcome), func(t *testing.T) {
			f := Define("unit/always-"+string(tt.outcome), func(ctx *Context, _ none) (string, error) {
				ctx.Always("report", activities.Shell{Command: "old report"})
				ctx.OnError("cleanup", activities.Shell{Command: "cleanup"})
				ctx.Always("broken", activities.Shell{Command: "broken"})
				ctx.Always("report", activities.Shell{Command: "report"}) // replaces the first
				if tt.work == "" {
					_, err := ctx.Agent("think", activities.Agent{Prompt: "p", Model: "m", MaxBudgetUSD: dec("1.00")})
					return "thought", err
				}
				_, err := ctx.Shell("work", activities.Shell{Command: tt.work})
				return "worked", err
			}, MaxCostUSD(dec("0.10")))
			env := newUnitEnv(t, runConfig{}, f)
			env.OnActivity(activities.ShellActivity, mock.Anything, activities.Shell{Command: "work-slow"}).After(time.Hour).
				Return(activities.ShellResult{}, nil).Maybe()
			shells := mockShell(env, alwaysShell)
			agents := mockAgent(env, func(activities.Agent) (activities.AgentResult, error) { return activities.AgentResult{}, nil })
			if tt.cancel {
				env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
			}
			env.ExecuteWorkflow(f.Name(), none{})
			require.True(t, env.IsWorkflowCompleted())
			if tt.outcome == runs.StatusCompleted {
				require.NoError(t, env.GetWorkflowError(), "a failing Always step does not fail the run")
			} else {
				require.Error(t, env.GetWorkflowError())
			}
			assert.Empty(t, agents.all(), "the agent step over the cap is never dispatched")

			var cmds []string
			for _, s := range shells.all() {
				cmds = append(cmds, s.Command)
				if s.Command != "report" && s.Command != "broken" {
					continue
				}
				assert.Equal(t, string(tt.outcome), s.Env["GATEFLOW_RUN_STATUS"], "an Always step knows the outcome")
				assert.Equal(t, tt.errorStep, s.Env["GATEFLOW_ERROR_STEP"], "and the failed step")
				if tt.outcome != runs.StatusCompleted {
					assert.NotEmpty(t, s.Env["GATEFLOW_ERROR_MESSAGE"])
				}
			}
			assert.Equal(t, tt.want, cmds, "OnError first, then each Always step once in registration order, the replaced one in its place with its new spec")

			st := queryState(t, env)
			assert.Equal(t, tt.outcome, st.Status, "the failing Always step does not change the outcome")
			report := stepByName(t, st, "report")
			assert.True(t, report.Always)
			assert.False(t, report.OnError)
			assert.Equal(t, runs.StepCompleted, report.Status)
			assert.Equal(t, "completed (always)", report.StatusText())
			broken := stepByName(t, st, "broken")
			assert.Equal(t, runs.StepFailed, broken.Status)
			assert.Equal(t, "failed (always)", broken.StatusText())
			assert.Equal(t, "exit code 1: broken", broken.Error)
			n := 0
			for _, s := range st.Steps {
				if s.Always {
					n++
				}
			}
			assert.Equal(t, 2, n, "each Always step is recorded once")
			assert.Contains(t, currentDetails(t, env), "| report | shell | completed (always) |")
		})
	}
}

func TestOnStepErrorRunsAfterAnAllowedFailureAndTheRunGoesOn(t *testing.T) {
	var seen []StepFailure
	var stepsWhenCalled []string
	var lintErr error
	f := Define("unit/on-step-error", func(ctx *Context, _ none) (string, error) {
		ctx.OnStepError(func(hc *Context, sf StepFailure) {
			seen = append(seen, sf)
			for _, s := range hc.State().Steps {
				stepsWhenCalled = append(stepsWhenCalled, s.Name+":"+string(s.Status))
			}
			_, err := hc.Shell("notify", activities.Shell{Command: "notify", Env: map[string]string{"STEP": sf.Step}})
			assert.NoError(t, err)
		})
		_, lintErr = ctx.With(StepTimeout(time.Hour), AllowFailure()).Shell("lint", activities.Shell{Command: "lint"})
		res, err := ctx.Shell("build", activities.Shell{Command: "build"})
		return res.Stdout, err
	})
	env := newUnitEnv(t, runConfig{}, f)
	env.OnActivity(activities.ShellActivity, mock.Anything, activities.Shell{Command: "lint"}).After(time.Minute).
		Return(activities.ShellResult{}, shellExit(2, "2 problems"))
	shells := mockShell(env, alwaysShell)
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	var out string
	require.NoError(t, env.GetWorkflowResult(&out))
	assert.Equal(t, "build ok", out, "the run goes on after the handler")
	assertAllowedFailure(t, lintErr, "lint")

	require.Len(t, seen, 1)
	assert.Equal(t, StepFailure{Step: "lint", Kind: runs.KindShell, Error: "exit code 2: 2 problems", Duration: time.Minute, Allowed: true}, seen[0])
	assert.Equal(t, []string{"lint:failed"}, stepsWhenCalled, "called once the step is recorded, before the handler goes on")
	calls := shells.all()
	require.Len(t, calls, 2)
	assert.Equal(t, "notify", calls[0].Command, "the error handler's step runs before the handler's next step")
	assert.Equal(t, "lint", calls[0].Env["STEP"])

	st := queryState(t, env)
	assert.Equal(t, runs.StatusWarning, st.Status)
	var names []string
	for _, s := range st.Steps {
		names = append(names, s.Name)
	}
	assert.Equal(t, []string{"lint", "notify", "build"}, names, "the error handler's steps are recorded")
	notify := stepByName(t, st, "notify")
	assert.Equal(t, runs.StepCompleted, notify.Status)
	assert.False(t, notify.AllowedFailure, "the error handler's context has none of the failed step's options")
}

func TestOnStepErrorRunsForEachFailedParallelStep(t *testing.T) {
	var seen []StepFailure
	var endedWhenCalled []bool
	f := Define("unit/on-step-error-parallel", func(ctx *Context, _ none) (none, error) {
		ctx.OnStepError(func(hc *Context, sf StepFailure) {
			seen = append(seen, sf)
			ended := true
			for _, s := range hc.State().Steps {
				ended = ended && s.EndedAt != nil
			}
			endedWhenCalled = append(endedWhenCalled, ended)
		})
		_, err := ctx.Parallel("checks", WaitAll,
			ShellStep("unit", activities.Shell{Command: "unit"}),
			ShellStep("lint", activities.Shell{Command: "lint"}),
			ShellStep("vet", activities.Shell{Command: "vet"}, AllowFailure()),
		)
		return none{}, err
	})
	env := newUnitEnv(t, runConfig{}, f)
	slowShell(env, "unit", 3*time.Minute)
	env.OnActivity(activities.ShellActivity, mock.Anything, activities.Shell{Command: "lint"}).After(time.Minute).
		Return(activities.ShellResult{}, shellExit(1, "lint"))
	env.OnActivity(activities.ShellActivity, mock.Anything, activities.Shell{Command: "vet"}).After(2*time.Minute).
		Return(activities.ShellResult{}, shellExit(1, "vet"))
	env.ExecuteWorkflow(f.Name(), none{})
	require.Error(t, env.GetWorkflowError())
	assert.Equal(t, []StepFailure{
		{Step: "lint", Kind: runs.KindShell, Error: "exit code 1: lint", Duration: time.Minute},
		{Step: "vet", Kind: runs.KindShell, Error: "exit code 1: vet", Duration: 2 * time.Minute, Allowed: true},
	}, seen, "once per failed step, in the order they failed")
	assert.Equal(t, []bool{true, true}, endedWhenCalled, "called once the Parallel call has finished")
	assert.Equal(t, runs.StatusFailed, queryState(t, env).Status)
}

func TestClearErrorHandlersStopsTheStepErrorHandler(t *testing.T) {
	var seen []string
	f := Define("unit/clear-error-handlers", func(ctx *Context, _ none) (none, error) {
		ctx.OnStepError(func(_ *Context, sf StepFailure) { seen = append(seen, "first:"+sf.Step) })
		ctx.OnStepError(func(_ *Context, sf StepFailure) { seen = append(seen, "second:"+sf.Step) }) // replaces it
		_, _ = ctx.Shell("a", activities.Shell{Command: "notify-fails"}, AllowFailure())
		ctx.ClearErrorHandlers()
		_, _ = ctx.Shell("b", activities.Shell{Command: "notify-fails"}, AllowFailure())
		return none{}, nil
	})
	env := newUnitEnv(t, runConfig{}, f)
	mockShell(env, alwaysShell)
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, []string{"second:a"}, seen)
	st := queryState(t, env)
	assert.Equal(t, runs.StatusWarning, st.Status)
	assert.Equal(t, 2, st.AllowedFailures)
}

func TestStepErrorHandlerDoesNotRecurse(t *testing.T) {
	var seen []string
	var notifyErr error
	f := Define("unit/no-recursion", func(ctx *Context, _ none) (string, error) {
		ctx.OnStepError(func(hc *Context, sf StepFailure) {
			seen = append(seen, sf.Step)
			_, notifyErr = hc.Shell("notify", activities.Shell{Command: "notify-fails"})
			// A branch of the handler is the handler's too.
			_, _ = hc.Go("inner", func(bc *Context) error {
				_, err := bc.Shell("notify-again", activities.Shell{Command: "notify-fails"})
				return err
			}).Get(hc)
		})
		_, _ = ctx.Shell("lint", activities.Shell{Command: "work-fails"}, AllowFailure())
		res, err := ctx.Shell("build", activities.Shell{Command: "build"})
		return res.Stdout, err
	})
	env := newUnitEnv(t, runConfig{}, f)
	mockShell(env, alwaysShell)
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, []string{"lint"}, seen, "the handler's own failed steps do not call it again")
	var se *StepError
	require.True(t, errors.As(notifyErr, &se), "the handler sees its step's error: %v", notifyErr)
	assert.Equal(t, "notify", se.Step)
	st := queryState(t, env)
	assert.Equal(t, runs.StepFailed, stepByName(t, st, "notify").Status)
	assert.Equal(t, runs.StepFailed, stepByName(t, st, "notify-again").Status)
	assert.Equal(t, runs.StepCompleted, stepByName(t, st, "build").Status)
	assert.Equal(t, runs.StatusWarning, st.Status, "a failure inside the handler does not fail the run")
}

func TestOnStepErrorRunsAfterAFailedChild(t *testing.T) {
	var views callLog[childView]
	child := newChildFlow(&views)
	var seen []StepFailure
	var childErr error
	parent := Define("unit/parent-on-step-error", func(ctx *Context, _ none) (string, error) {
		ctx.OnStepError(func(_ *Context, sf StepFailure) { seen = append(seen, sf) })
		_, childErr = Child(ctx, "smoke", child, "deploy-fails", AllowFailure())
		return "after", nil
	})
	env := newUnitEnv(t, runConfig{}, parent, child)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "rel-9"})
	mockShell(env, deployShell)
	env.ExecuteWorkflow(parent.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	assertAllowedFailure(t, childErr, "smoke")
	require.Len(t, seen, 1)
	assert.Equal(t, "smoke", seen[0].Step)
	assert.Equal(t, runs.KindChild, seen[0].Kind)
	assert.True(t, seen[0].Allowed)
	assert.Equal(t, "step c1: exit code 3: boom", seen[0].Error)
	assert.Equal(t, runs.StatusWarning, queryState(t, env).Status)
}

func TestHandlerReturningOnlyAllowedFailuresEndsWarning(t *testing.T) {
	tests := map[string]func(error) error{
		"as is":   func(err error) error { return err },
		"wrapped": func(err error) error { return fmt.Errorf("lint: %w", err) },
		"joined":  func(err error) error { return errors.Join(err, fmt.Errorf("again: %w", err)) },
	}
	for name, wrap := range tests {
		t.Run(name, func(t *testing.T) {
			f := Define("unit/return-allowed", func(ctx *Context, _ none) (string, error) {
				_, err := ctx.Shell("lint", activities.Shell{Command: "work-fails"}, AllowFailure())
				return "partial", wrap(err)
			}, MaxAttempts(3))
			env := newUnitEnv(t, runConfig{}, f)
			shells := mockShell(env, alwaysShell)
			env.ExecuteWorkflow(f.Name(), none{})
			require.NoError(t, env.GetWorkflowError())
			var out string
			require.NoError(t, env.GetWorkflowResult(&out))
			assert.Equal(t, "partial", out)
			assert.Len(t, shells.all(), 1, "no second attempt")
			st := queryState(t, env)
			assert.Equal(t, runs.StatusWarning, st.Status)
			assert.Empty(t, st.Error)
		})
	}
	assert.False(t, onlyAllowed(errors.Join(&AllowedFailure{Err: &StepError{Step: "a"}}, errors.New("real"))),
		"an allowed failure joined with a real error is a failure")
	assert.False(t, onlyAllowed(nil))
	assert.False(t, onlyAllowed(errors.New("real")))
}

func TestFailedHandlerOutputIsKept(t *testing.T) {
	type report struct {
		Built  []string `json:"built"`
		Failed string   `json:"failed"`
	}
	f := Define("unit/failed-output", func(ctx *Context, _ none) (report, error) {
		r := report{}
		if _, err := ctx.Shell("a", activities.Shell{Command: "a"}); err == nil {
			r.Built = append(r.Built, "a")
		}
		_, err := ctx.Shell("b", activities.Shell{Command: "work-fails"})
		r.Failed = "b"
		return r, err
	})
	env := newUnitEnv(t, runConfig{}, f)
	mockShell(env, alwaysShell)
	env.ExecuteWorkflow(f.Name(), none{})
	require.Error(t, env.GetWorkflowError())
	st := queryState(t, env)
	assert.Equal(t, runs.StatusFailed, st.Status)
	assert.JSONEq(t, `{"built":["a"],"failed":"b"}`, string(st.Output))

	// flowclient.TestDescribeOutputsOfClosedRuns describes such a run.
}

func TestCompletedAndTooLargeOutputsAreKept(t *testing.T) {
	f := Define("unit/outputs", func(ctx *Context, n int) (string, error) {
		return fmt.Sprintf("%0*d", n, 0), nil
	})
	for n, want := range map[int]string{3: `"000"`, maxKeptOutput + 1: fmt.Sprintf(`"output of %d bytes, too large to keep (the limit is %d)"`, maxKeptOutput+3, maxKeptOutput)} {
		env := newUnitEnv(t, runConfig{}, f)
		env.ExecuteWorkflow(f.Name(), n)
		require.NoError(t, env.GetWorkflowError())
		assert.Equal(t, want, string(queryState(t, env).Output))
	}
}

// TestAllowedFailureBeforeTheChangeIsNil: a run whose history has no marker
// gateflow.allowed-failure-error (started before allowed failures were returned) gets nil,
// as it did, so its handler takes the path it took.
func TestAllowedFailureBeforeTheChangeIsNil(t *testing.T) {
	lintErr := errors.New("not called")
	f := Define("unit/allow-old", func(ctx *Context, _ none) (string, error) {
		_, lintErr = ctx.Shell("lint", activities.Shell{Command: "work-fails"}, AllowFailure())
		if lintErr != nil {
			return "", lintErr
		}
		res, err := ctx.Shell("build", activities.Shell{Command: "build"})
		return res.Stdout, err
	})
	env := newUnitEnv(t, runConfig{}, f)
	env.OnGetVersion("gateflow.allowed-failure-error", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	shells := mockShell(env, alwaysShell)
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	assert.NoError(t, lintErr)
	assert.Len(t, shells.all(), 2)
	assert.Equal(t, runs.StatusWarning, queryState(t, env).Status)
}
