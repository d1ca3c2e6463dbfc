package flow

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/internal/searchattr"
)

type failIn struct {
	Fail bool `json:"fail"`
}

// cleanupFlow registers two cleanup steps (the first twice: the second registration
// replaces it) and runs deploy, which fails when told to.
var cleanupFlow = Define("unit/on-error", func(ctx *Context, in failIn) (none, error) {
	ctx.OnError("undo", activities.Shell{Command: "undo-v1", Env: map[string]string{"KEEP": "1"}})
	ctx.OnError("notify", activities.Shell{Command: "notify"})
	ctx.OnError("undo", activities.Shell{Command: "undo-v2", Env: map[string]string{"KEEP": "1"}})
	cmd := "deploy"
	if in.Fail {
		cmd = "deploy-fails"
	}
	_, err := ctx.Shell("deploy", activities.Shell{Command: cmd})
	return none{}, err
})

// deployShell fails "deploy-fails" with exit code 3 and "cleanup-fails" with exit code 1.
func deployShell(s activities.Shell) (activities.ShellResult, error) {
	switch s.Command {
	case "deploy-fails":
		return activities.ShellResult{}, shellExit(3, "boom")
	case "cleanup-fails":
		return activities.ShellResult{}, shellExit(1, "cleanup broke")
	}
	return activities.ShellResult{Stdout: s.Command + " ok", Attempt: 1}, nil
}

func commands(calls []activities.Shell) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = c.Command
	}
	return out
}

func TestOnErrorRunsOnlyWhenTheRunFailsInRegistrationOrder(t *testing.T) {
	t.Run("failed run", func(t *testing.T) {
		env := newUnitEnv(t, runConfig{}, cleanupFlow)
		calls := mockShell(env, deployShell)
		env.ExecuteWorkflow(cleanupFlow.Name(), failIn{Fail: true})
		require.True(t, env.IsWorkflowCompleted())
		var app *temporal.ApplicationError
		require.True(t, errors.As(env.GetWorkflowError(), &app))
		assert.Equal(t, "step deploy: exit code 3: boom", app.Message())

		got := calls.all()
		assert.Equal(t, []string{"deploy-fails", "undo-v2", "notify"}, commands(got),
			"once each, in registration order, the re-registered step in its first place")
		require.Len(t, got, 3)
		assert.Equal(t, map[string]string{"KEEP": "1", "GATEFLOW_ERROR_STEP": "deploy", "GATEFLOW_ERROR_MESSAGE": "exit code 3: boom"}, got[1].Env)
		assert.Equal(t, map[string]string{"GATEFLOW_ERROR_STEP": "deploy", "GATEFLOW_ERROR_MESSAGE": "exit code 3: boom"}, got[2].Env)

		st := queryState(t, env)
		assert.Equal(t, runs.StatusFailed, st.Status)
		assert.Equal(t, "step deploy: exit code 3: boom", st.Error)
		require.Len(t, st.Steps, 3)
		assert.False(t, st.Steps[0].OnError)
		for _, s := range st.Steps[1:] {
			assert.True(t, s.OnError, s.Name)
			assert.Equal(t, runs.StepCompleted, s.Status, s.Name)
		}
		assert.Equal(t, []string{"deploy", "undo", "notify"}, []string{st.Steps[0].Name, st.Steps[1].Name, st.Steps[2].Name})
		assert.Equal(t, "undo-v2 ok", st.Steps[1].Output)
	})
	t.Run("completed run", func(t *testing.T) {
		env := newUnitEnv(t, runConfig{}, cleanupFlow)
		calls := mockShell(env, deployShell)
		env.ExecuteWorkflow(cleanupFlow.Name(), failIn{})
		require.NoError(t, env.GetWorkflowError())
		assert.Equal(t, []string{"deploy"}, commands(calls.all()), "no cleanup")
		st := queryState(t, env)
		assert.Equal(t, runs.StatusCompleted, st.Status)
		assert.Len(t, st.Steps, 1)
	})
}

func TestOnErrorHTTPAndAgentStepsGetTheFailure(t *testing.T) {
	f := Define("unit/on-error-kinds", func(ctx *Context, _ none) (none, error) {
		ctx.OnError("page", activities.HTTP{Method: "POST", URL: "https://example.test/page", Headers: map[string]string{"X-Keep": "1"}})
		ctx.OnError("explain", activities.Agent{Prompt: "summarise", Model: "m"})
		_, err := ctx.Shell("deploy", activities.Shell{Command: "deploy-fails"})
		return none{}, err
	})
	env := newUnitEnv(t, runConfig{}, f)
	mockShell(env, deployShell)
	var https callLog[activities.HTTP]
	env.OnActivity(activities.HTTPActivity, mock.Anything, mock.Anything).Return(
		func(_ context.Context, h activities.HTTP) (activities.HTTPResult, error) {
			https.add(h)
			return activities.HTTPResult{Status: 204, Attempt: 1}, nil
		})
	agents := mockAgent(env, func(activities.Agent) (activities.AgentResult, error) {
		return activities.AgentResult{Text: "it broke", CostUSD: dec("0.01"), Usage: llm.Usage{InputTokens: 3, OutputTokens: 4}}, nil
	})
	env.ExecuteWorkflow(f.Name(), none{})
	require.Error(t, env.GetWorkflowError())

	require.Len(t, https.all(), 1)
	assert.Equal(t, map[string]string{"X-Keep": "1", "X-Gateflow-Error-Step": "deploy", "X-Gateflow-Error-Message": "exit code 3: boom"},
		https.all()[0].Headers)
	require.Len(t, agents.all(), 1)
	assert.Equal(t, "[Error context]\nStep \"deploy\" failed: exit code 3: boom\n\nsummarise", agents.all()[0].Prompt)

	st := queryState(t, env)
	assert.Equal(t, 204, stepByName(t, st, "page").HTTPStatus)
	assert.True(t, stepByName(t, st, "explain").OnError)
	assert.Equal(t, "0.01", st.CostUSD.String(), "a cleanup step's cost is charged")
	assert.Equal(t, runs.StatusFailed, st.Status)
}

func TestOnErrorFailureNeverReplacesTheRunError(t *testing.T) {
	f := Define("unit/on-error-fails", func(ctx *Context, _ none) (none, error) {
		ctx.OnError("cleanup", activities.Shell{Command: "cleanup-fails"})
		ctx.OnError("after", activities.Shell{Command: "after"})
		_, err := ctx.Shell("deploy", activities.Shell{Command: "deploy-fails"})
		return none{}, err
	})
	env := newUnitEnv(t, runConfig{}, f)
	calls := mockShell(env, deployShell)
	env.ExecuteWorkflow(f.Name(), none{})
	var app *temporal.ApplicationError
	require.True(t, errors.As(env.GetWorkflowError(), &app))
	assert.Equal(t, "step deploy: exit code 3: boom", app.Message())
	assert.Equal(t, []string{"deploy-fails", "cleanup-fails", "after"}, commands(calls.all()),
		"a failed cleanup step does not stop the next one")
	st := queryState(t, env)
	assert.Equal(t, "step deploy: exit code 3: boom", st.Error)
	assert.Equal(t, runs.StatusFailed, st.Status)
	c := stepByName(t, st, "cleanup")
	assert.Equal(t, runs.StepFailed, c.Status)
	assert.True(t, c.OnError)
	assert.Equal(t, "exit code 1: cleanup broke", c.Error)
}

func TestOnErrorRunsWhenTheRunIsCancelled(t *testing.T) {
	f := Define("unit/on-error-cancel", func(ctx *Context, _ none) (none, error) {
		ctx.OnError("cleanup", activities.Shell{Command: "cleanup"})
		_, err := ctx.Shell("slow", activities.Shell{Command: "slow"})
		return none{}, err
	})
	env := newUnitEnv(t, runConfig{}, f)
	var calls callLog[activities.Shell]
	env.OnActivity(activities.ShellActivity, mock.Anything, activities.Shell{Command: "slow"}).After(time.Hour).Return(activities.ShellResult{}, nil)
	env.OnActivity(activities.ShellActivity, mock.Anything, mock.Anything).Return(
		func(_ context.Context, s activities.Shell) (activities.ShellResult, error) {
			calls.add(s)
			return activities.ShellResult{Stdout: "cleaned"}, nil
		})
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
	env.ExecuteWorkflow(f.Name(), none{})
	require.True(t, env.IsWorkflowCompleted())
	require.Len(t, calls.all(), 1, "the cleanup runs on a disconnected context")
	assert.Equal(t, map[string]string{"GATEFLOW_ERROR_STEP": "slow", "GATEFLOW_ERROR_MESSAGE": "cancelled"}, calls.all()[0].Env)
	st := queryState(t, env)
	assert.Equal(t, runs.StatusCancelled, st.Status)
	assert.Equal(t, runs.StepCompleted, stepByName(t, st, "cleanup").Status)
}

// flakyFlow runs a paid agent step, then a shell step that fails (exit 1) until the
// mock says otherwise; it fails the run when the shell step fails.
func flakyFlow(opts ...Option) *Flow[none, string] {
	return Define("unit/flaky", func(ctx *Context, _ none) (string, error) {
		ctx.OnError("cleanup", activities.Shell{Command: "cleanup"})
		if _, err := ctx.Agent("think", activities.Agent{Prompt: "p", Model: "m"}); err != nil {
			return "", err
		}
		res, err := ctx.Shell("flaky", activities.Shell{Command: "flaky"})
		return res.Stdout, err
	}, opts...)
}

// flakyEnv is a test environment whose "flaky" shell step fails (exit 1) for the first
// failures calls; every other shell step and every agent step ($0.01, 2 tokens) succeeds.
type flakyEnv struct {
	*testsuite.TestWorkflowEnvironment
	shell *callLog[activities.Shell]
	agent *callLog[activities.Agent]
}

func newFlakyEnv(t *testing.T, cfg runConfig, f Definition, failures int) *flakyEnv {
	env := &flakyEnv{TestWorkflowEnvironment: newUnitEnv(t, cfg, f)}
	var mu sync.Mutex
	flaky := 0
	env.shell = mockShell(env.TestWorkflowEnvironment, func(s activities.Shell) (activities.ShellResult, error) {
		if s.Command != "flaky" {
			return activities.ShellResult{Stdout: s.Command}, nil
		}
		mu.Lock()
		flaky++
		n := flaky
		mu.Unlock()
		if n <= failures {
			return activities.ShellResult{}, shellExit(1, "flake")
		}
		return activities.ShellResult{Stdout: "steady", Attempt: 1}, nil
	})
	env.agent = mockAgent(env.TestWorkflowEnvironment, func(activities.Agent) (activities.AgentResult, error) {
		return activities.AgentResult{Text: "ok", CostUSD: dec("0.01"), Usage: llm.Usage{InputTokens: 1, OutputTokens: 1}}, nil
	})
	return env
}

func TestMaxAttemptsRunsTheHandlerAgainKeepingCost(t *testing.T) {
	f := flakyFlow(MaxAttempts(3))
	env := newFlakyEnv(t, runConfig{}, f, 2)
	var timers callLog[time.Duration]
	env.SetOnTimerScheduledListener(func(_ string, d time.Duration) { timers.add(d) })
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	var out string
	require.NoError(t, env.GetWorkflowResult(&out))
	assert.Equal(t, "steady", out)
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second}, timers.all(), "backoff between attempts")
	assert.Equal(t, []string{"flaky", "flaky", "flaky"}, commands(env.shell.all()), "cleanup never ran")

	st := queryState(t, env.TestWorkflowEnvironment)
	assert.Equal(t, runs.StatusCompleted, st.Status)
	assert.Equal(t, 3, st.Attempt)
	assert.Equal(t, 3, st.MaxAttempts)
	var ids []string
	var runAttempts []int
	for _, s := range st.Steps {
		ids = append(ids, s.ActivityID)
		runAttempts = append(runAttempts, s.RunAttempt)
	}
	assert.Equal(t, []string{"think", "flaky", "think#2", "flaky#2", "think#3", "flaky#3"}, ids)
	assert.Equal(t, []int{1, 1, 2, 2, 3, 3}, runAttempts)
	assert.Equal(t, "0.03", st.CostUSD.String(), "cost of every attempt stays on the run")
	assert.Equal(t, runs.Tokens{Input: 3, Output: 3}, st.Tokens)
	assert.Equal(t, 3*time.Second, st.Steps[5].StartedAt.Sub(st.Steps[0].StartedAt), "1s + 2s of backoff on the run's clock")
	assert.Contains(t, currentDetails(t, env.TestWorkflowEnvironment), "— completed (attempt 3 of 3)")
}

func TestMaxAttemptsResolutionAndLimits(t *testing.T) {
	tests := []struct {
		name        string
		opts        []Option
		cfg         runConfig
		failures    int
		wantAttempt int
		wantMax     int
		wantStatus  runs.Status
		wantCleanup int
	}{
		{"one attempt by default", nil, runConfig{}, 1, 1, 1, runs.StatusFailed, 1},
		{"worker default", nil, runConfig{maxAttempts: 2}, 1, 2, 2, runs.StatusCompleted, 0},
		{"flow overrides the worker", []Option{MaxAttempts(1)}, runConfig{maxAttempts: 5}, 1, 1, 1, runs.StatusFailed, 1},
		{"attempts exhausted: cleanup once, after the last", []Option{MaxAttempts(2)}, runConfig{}, 5, 2, 2, runs.StatusFailed, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := flakyFlow(tt.opts...)
			env := newFlakyEnv(t, tt.cfg, f, tt.failures)
			env.ExecuteWorkflow(f.Name(), none{})
			require.True(t, env.IsWorkflowCompleted())
			st := queryState(t, env.TestWorkflowEnvironment)
			assert.Equal(t, tt.wantStatus, st.Status)
			assert.Equal(t, tt.wantAttempt, st.Attempt)
			assert.Equal(t, tt.wantMax, st.MaxAttempts)
			cleanups := 0
			for _, c := range env.shell.all() {
				if c.Command == "cleanup" {
					cleanups++
				}
			}
			assert.Equal(t, tt.wantCleanup, cleanups)
			if tt.wantCleanup > 0 {
				c := stepByName(t, st, "cleanup")
				assert.Equal(t, tt.wantAttempt, c.RunAttempt, "cleanup belongs to the last attempt")
			}
		})
	}
}

func TestPermanentStopsRunAttemptsAndIsUnwrapped(t *testing.T) {
	f := Define("unit/permanent", func(ctx *Context, _ none) (string, error) {
		res, err := ctx.Shell("flaky", activities.Shell{Command: "flaky"})
		if err != nil {
			return "", Permanent(err)
		}
		return res.Stdout, nil
	}, MaxAttempts(3))
	env := newFlakyEnv(t, runConfig{}, f, 5)
	env.ExecuteWorkflow(f.Name(), none{})
	var app *temporal.ApplicationError
	require.True(t, errors.As(env.GetWorkflowError(), &app), "got %v", env.GetWorkflowError())
	assert.Equal(t, "StepError", app.Type(), "the run fails with the wrapped error itself")
	assert.Equal(t, "step flaky: exit code 1: flake", app.Message())
	assert.Len(t, env.shell.all(), 1, "no further attempt")
	st := queryState(t, env.TestWorkflowEnvironment)
	assert.Equal(t, 1, st.Attempt)
	assert.Equal(t, "step flaky: exit code 1: flake", st.Error)
}

func TestTokenGuardStopsTheRunWithoutRetrying(t *testing.T) {
	f := Define("unit/tokens", func(ctx *Context, _ none) (none, error) {
		if _, err := ctx.Agent("think", activities.Agent{Prompt: "p", Model: "m"}); err != nil {
			return none{}, err
		}
		_, err := ctx.Shell("after", activities.Shell{Command: "after"})
		return none{}, err
	}, WithGuards(Guards{MaxTokens: 100}), MaxAttempts(3))
	env := newUnitEnv(t, runConfig{}, f)
	shells := mockShell(env, deployShell)
	agents := mockAgent(env, func(activities.Agent) (activities.AgentResult, error) {
		return activities.AgentResult{Text: "long", CostUSD: dec("0.5"), Usage: llm.Usage{InputTokens: 80, OutputTokens: 30}}, nil
	})
	env.ExecuteWorkflow(f.Name(), none{})
	var app *temporal.ApplicationError
	require.True(t, errors.As(env.GetWorkflowError(), &app))
	assert.Equal(t, "step think: guard: tokens 110 exceeds the limit of 100 at step think", app.Message())
	assert.Len(t, agents.all(), 1, "a guard refusal is not attempted again")
	assert.Empty(t, shells.all())
	st := queryState(t, env)
	assert.Equal(t, runs.StatusFailed, st.Status)
	assert.Equal(t, 1, st.Attempt)
	think := stepByName(t, st, "think")
	assert.Equal(t, runs.StepCompleted, think.Status, "the step itself completed and is paid for")
	assert.Equal(t, "0.5", st.CostUSD.String())
	assert.Equal(t, runs.Guards{MaxChildDepth: 5, MaxFanOut: 50, MaxTokens: 100, MaxWallTime: -1, MaxSteps: 10_000}, st.Guards)
}

func TestWallTimeGuardBoundsAndRefusesSteps(t *testing.T) {
	var lateErr error
	f := Define("unit/wall", func(ctx *Context, _ none) (none, error) {
		if _, err := ctx.Shell("early", activities.Shell{Command: "early"}); err != nil {
			return none{}, err
		}
		if err := ctx.Sleep("nap", 4*time.Minute); err != nil {
			return none{}, err
		}
		if _, err := ctx.Shell("middle", activities.Shell{Command: "middle"}); err != nil {
			return none{}, err
		}
		if err := ctx.Sleep("long-nap", 10*time.Minute); err != nil {
			return none{}, err
		}
		_, lateErr = ctx.Shell("late", activities.Shell{Command: "late"})
		return none{}, lateErr
	}, WithGuards(Guards{MaxWallTime: 10 * time.Minute}), MaxAttempts(2))
	env := newUnitEnv(t, runConfig{}, f)
	shells := mockShell(env, deployShell)
	started := startedActivities(env)
	env.ExecuteWorkflow(f.Name(), none{})
	require.Error(t, env.GetWorkflowError())
	assert.EqualError(t, lateErr, "step late: guard: wall time 14m0s exceeds the limit of 10m0s at step late")
	assert.ErrorIs(t, lateErr, errGuard)
	assert.Equal(t, []string{"early", "middle"}, commands(shells.all()), "the late step is not dispatched")

	infos := started.all()
	require.Len(t, infos, 2)
	assert.Equal(t, 10*time.Minute, infos[0].StartToCloseTimeout, "a step gets no more than what is left")
	assert.Equal(t, 10*time.Minute, infos[0].ScheduleToCloseTimeout)
	assert.Equal(t, 6*time.Minute, infos[1].StartToCloseTimeout)

	st := queryState(t, env)
	assert.Equal(t, 1, st.Attempt, "a guard refusal is not attempted again")
	late := stepByName(t, st, "late")
	assert.Equal(t, runs.StepFailed, late.Status)
	assert.Equal(t, "guard: wall time 14m0s exceeds the limit of 10m0s at step late", late.Error)
}

func TestVersionGate(t *testing.T) {
	tests := []struct {
		name    string
		started []temporal.SearchAttributeUpdate
		wantErr string
		// wantUpserts lists each upsert as FlowStatus, plus "+v<version>" when it set FlowVersion.
		wantUpserts []string
		wantCalls   int
	}{
		{name: "other version fails at once", started: []temporal.SearchAttributeUpdate{searchattr.VersionKey.ValueSet("6")},
			wantErr: `version: run of test/steps was started with version "6", this worker has version "7"`, wantUpserts: []string{"failed"}},
		{name: "same version runs", started: []temporal.SearchAttributeUpdate{searchattr.VersionKey.ValueSet("7")},
			wantUpserts: []string{"running", "completed"}, wantCalls: 1},
		{name: "no version: upserted with the first status", wantUpserts: []string{"running+v7", "completed"}, wantCalls: 1},
		{name: "no version, status set at start: upserted with the final status",
			started:     []temporal.SearchAttributeUpdate{searchattr.StatusKey.ValueSet("running")},
			wantUpserts: []string{"completed+v7"}, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t)
			if tt.started != nil {
				require.NoError(t, env.SetTypedSearchAttributesOnStart(temporal.NewSearchAttributes(tt.started...)))
			}
			var upserts callLog[string]
			env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
				sa := args.Get(0).(temporal.SearchAttributes)
				s, _ := sa.GetKeyword(searchattr.StatusKey)
				if v, ok := sa.GetKeyword(searchattr.VersionKey); ok {
					s += "+v" + v
				}
				upserts.add(s)
			}).Return(nil)
			calls := mockShell(env, deployShell)
			env.ExecuteWorkflow(stepsFlow.Name(), stepsInput{Steps: []testStep{{Name: "a", Shell: activities.Shell{Command: "a"}}}})
			require.True(t, env.IsWorkflowCompleted())
			assert.Equal(t, tt.wantUpserts, upserts.all())
			assert.Len(t, calls.all(), tt.wantCalls)
			st := queryState(t, env)
			if tt.wantErr == "" {
				require.NoError(t, env.GetWorkflowError())
				assert.Equal(t, runs.StatusCompleted, st.Status)
				return
			}
			var app *temporal.ApplicationError
			require.True(t, errors.As(env.GetWorkflowError(), &app), "got %v", env.GetWorkflowError())
			assert.Contains(t, app.Message(), tt.wantErr)
			assert.Contains(t, app.Message(), "was started with version")
			assert.Equal(t, "gateflow.Version", app.Type())
			assert.True(t, app.NonRetryable())
			assert.Equal(t, runs.StatusFailed, st.Status)
			assert.Contains(t, st.Error, tt.wantErr)
			assert.Empty(t, st.Steps)
		})
	}
}

func TestOnErrorNamesTheFailedStepThroughWrappers(t *testing.T) {
	tests := []struct {
		name     string
		fail     func(ctx *Context) error
		wantStep string
		wantMsg  string
	}{
		{"permanent", func(ctx *Context) error {
			_, err := ctx.Shell("deploy", activities.Shell{Command: "deploy-fails"})
			return Permanent(err)
		}, "deploy", "exit code 3: boom"},
		{"wrapped", func(ctx *Context) error {
			_, err := ctx.Shell("deploy", activities.Shell{Command: "deploy-fails"})
			return fmt.Errorf("shipping: %w", err)
		}, "deploy", "exit code 3: boom"},
		{"parallel", func(ctx *Context) error {
			_, err := ctx.Parallel("checks", WaitAll,
				ShellStep("ok", activities.Shell{Command: "ok"}),
				ShellStep("lint", activities.Shell{Command: "deploy-fails"}))
			return err
		}, "lint", "exit code 3: boom"},
		{"plain handler error", func(*Context) error { return errors.New("bad input") }, "", "bad input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Define("unit/on-error-wrapped", func(ctx *Context, _ none) (none, error) {
				ctx.OnError("cleanup", activities.Shell{Command: "cleanup"})
				return none{}, tt.fail(ctx)
			})
			env := newUnitEnv(t, runConfig{}, f)
			calls := mockShell(env, deployShell)
			env.ExecuteWorkflow(f.Name(), none{})
			require.Error(t, env.GetWorkflowError())
			var cleanup []activities.Shell
			for _, c := range calls.all() {
				if c.Command == "cleanup" {
					cleanup = append(cleanup, c)
				}
			}
			require.Len(t, cleanup, 1)
			assert.Equal(t, map[string]string{"GATEFLOW_ERROR_STEP": tt.wantStep, "GATEFLOW_ERROR_MESSAGE": tt.wantMsg}, cleanup[0].Env)
		})
	}
}
