package flow

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/searchattr"
)

// none is the input of test flows that need none.
type none struct{}

// newUnitEnv is a test environment with flows registered as NewWorker's Start registers
// them (cfg is the worker's defaults) and the three built-in step activities registered by
// name, ready to be mocked.
func newUnitEnv(t *testing.T, cfg runConfig, flows ...Definition) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := s.NewTestWorkflowEnvironment()
	for _, f := range flows {
		require.NoError(t, f.Err())
		env.RegisterWorkflowWithOptions(f.workflowWith(cfg), workflow.RegisterOptions{Name: f.Name()})
	}
	env.RegisterActivityWithOptions(activities.RunShell, activity.RegisterOptions{Name: activities.ShellActivity})
	env.RegisterActivityWithOptions(activities.RunHTTP, activity.RegisterOptions{Name: activities.HTTPActivity})
	env.RegisterActivityWithOptions((&activities.AgentActivities{}).RunAgent, activity.RegisterOptions{Name: activities.AgentActivity})
	env.RegisterActivityWithOptions((&activities.AgentActivities{}).RunAgentTurn, activity.RegisterOptions{Name: activities.AgentTurnActivity})
	// Every run's costs go to the monthly ledgers: without a server, they go nowhere
	// (mockQuotas records them).
	noLedgers(env)
	return env
}

// callLog keeps what mocked activities were called with, in call order.
type callLog[T any] struct {
	mu    sync.Mutex
	calls []T
}

func (l *callLog[T]) add(v T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, v)
}

func (l *callLog[T]) all() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]T(nil), l.calls...)
}

// mockShell answers every shell step with fn and logs the steps.
func mockShell(env *testsuite.TestWorkflowEnvironment, fn func(activities.Shell) (activities.ShellResult, error)) *callLog[activities.Shell] {
	l := &callLog[activities.Shell]{}
	env.OnActivity(activities.ShellActivity, mock.Anything, mock.Anything).Return(
		func(_ context.Context, s activities.Shell) (activities.ShellResult, error) {
			l.add(s)
			return fn(s)
		}).Maybe()
	return l
}

// mockAgent answers every agent step with fn and logs the steps.
func mockAgent(env *testsuite.TestWorkflowEnvironment, fn func(activities.Agent) (activities.AgentResult, error)) *callLog[activities.Agent] {
	l := &callLog[activities.Agent]{}
	env.OnActivity(activities.AgentActivity, mock.Anything, mock.Anything).Return(
		func(_ context.Context, a activities.Agent) (activities.AgentResult, error) {
			l.add(a)
			return fn(a)
		}).Maybe()
	return l
}

// startedActivities records the activities the environment started, by activity ID.
func startedActivities(env *testsuite.TestWorkflowEnvironment) *callLog[activity.Info] {
	l := &callLog[activity.Info]{}
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		l.add(*info)
	})
	return l
}

// statusUpserts records the FlowStatus of every search attribute upsert.
func statusUpserts(env *testsuite.TestWorkflowEnvironment) *callLog[string] {
	l := &callLog[string]{}
	env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		v, _ := args.Get(0).(temporal.SearchAttributes).GetKeyword(searchattr.StatusKey)
		l.add(v)
	}).Return(nil)
	return l
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func stepByName(t *testing.T, st runs.State, name string) runs.Step {
	t.Helper()
	for _, s := range st.Steps {
		if s.Name == name {
			return s
		}
	}
	require.Failf(t, "no step", "step %s not in %v", name, viewSteps(st.Steps))
	return runs.Step{}
}

func TestAllowFailureGivesTheHandlerAnAllowedFailureAndTheZeroValue(t *testing.T) {
	var lint activities.ShellResult
	lintErr := errors.New("not called")
	f := Define("unit/allow", func(ctx *Context, _ none) (string, error) {
		lint, lintErr = ctx.Shell("lint", activities.Shell{Command: "lint"}, AllowFailure())
		res, err := ctx.Shell("build", activities.Shell{Command: "build"})
		return res.Stdout, err
	})
	env := newUnitEnv(t, runConfig{}, f)
	mockShell(env, func(s activities.Shell) (activities.ShellResult, error) {
		if s.Command == "lint" {
			return activities.ShellResult{Stdout: "partial", ExitCode: 2}, shellExit(2, "2 problems")
		}
		return activities.ShellResult{Stdout: "built", Attempt: 1}, nil
	})
	statuses := statusUpserts(env)
	env.ExecuteWorkflow(f.Name(), none{})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var out string
	require.NoError(t, env.GetWorkflowResult(&out))
	assert.Equal(t, "built", out, "the run goes on after the allowed failure")
	assertAllowedFailure(t, lintErr, "lint")
	assert.Equal(t, activities.ShellResult{}, lint, "the handler gets the zero result")

	st := queryState(t, env)
	assert.Equal(t, runs.StatusWarning, st.Status)
	assert.Equal(t, 1, st.AllowedFailures)
	assert.Empty(t, st.Error)
	l := stepByName(t, st, "lint")
	assert.Equal(t, runs.StepFailed, l.Status)
	assert.True(t, l.AllowedFailure)
	assert.Equal(t, intp(2), l.ExitCode)
	assert.Equal(t, "exit code 2: 2 problems", l.Error)
	assert.False(t, stepByName(t, st, "build").AllowedFailure)
	assert.Equal(t, []string{"running", "warning"}, statuses.all())
	assert.Contains(t, currentDetails(t, env), "| lint | shell | failed (allowed) | 1 |")
}

func TestAllowFailureViaWithAndAWorkflowCancelledStepIsNotAllowed(t *testing.T) {
	stepErr := errors.New("not called")
	f := Define("unit/allow-cancel", func(ctx *Context, _ none) (none, error) {
		_, stepErr = ctx.With(AllowFailure()).Shell("slow", activities.Shell{Command: "sleep"})
		return none{}, stepErr
	})
	env := newUnitEnv(t, runConfig{}, f)
	env.OnActivity(activities.ShellActivity, mock.Anything, mock.Anything).After(time.Hour).Return(activities.ShellResult{}, nil)
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
	env.ExecuteWorkflow(f.Name(), none{})
	require.True(t, env.IsWorkflowCompleted())
	require.Error(t, env.GetWorkflowError())
	assert.True(t, isCancellation(stepErr), "the handler sees the cancellation: %v", stepErr)

	st := queryState(t, env)
	assert.Equal(t, runs.StatusCancelled, st.Status)
	assert.Equal(t, 0, st.AllowedFailures)
	s := stepByName(t, st, "slow")
	assert.Equal(t, runs.StepCancelled, s.Status)
	assert.False(t, s.AllowedFailure, "a cancelled step is never an allowed failure")
}

func TestSkipRecordsTheReasonAndRunsNothing(t *testing.T) {
	f := Define("unit/skip", func(ctx *Context, _ none) (none, error) {
		ctx.Skip("announce", "dry run")
		ctx.Skip("announce", "still dry")
		return none{}, nil
	})
	env := newUnitEnv(t, runConfig{}, f)
	started := startedActivities(env)
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	assert.Empty(t, started.all(), "a skipped step starts no activity")
	st := queryState(t, env)
	assert.Equal(t, runs.StatusCompleted, st.Status)
	assert.Equal(t, []stepView{
		{Name: "announce", ActivityID: "announce", Kind: runs.KindSkip, Status: runs.StepSkipped, Attempt: 1, Output: "dry run", Ended: true},
		{Name: "announce", ActivityID: "announce#2", Kind: runs.KindSkip, Status: runs.StepSkipped, Attempt: 1, Output: "still dry", Ended: true},
	}, viewSteps(st.Steps))
	assert.Contains(t, currentDetails(t, env), "| announce | skip | skipped | 1 | 0s | - | dry run |")
}

func TestSleepIsADurableTimerAndSetsSleeping(t *testing.T) {
	var after runs.Status
	f := Define("unit/sleep", func(ctx *Context, _ none) (none, error) {
		if err := ctx.Sleep("cool-down", 10*time.Minute); err != nil {
			return none{}, err
		}
		after = ctx.State().Status
		return none{}, nil
	})
	env := newUnitEnv(t, runConfig{}, f)
	statuses := statusUpserts(env)
	var timers callLog[time.Duration]
	env.SetOnTimerScheduledListener(func(_ string, d time.Duration) { timers.add(d) })
	var during runs.State
	var details string
	env.RegisterDelayedCallback(func() {
		during = queryState(t, env)
		details = currentDetails(t, env)
	}, 5*time.Minute)
	wall := time.Now()
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	assert.Less(t, time.Since(wall), time.Minute, "the test clock skips the timer")

	assert.Equal(t, []time.Duration{10 * time.Minute}, timers.all(), "one durable timer of the step's length")
	assert.Equal(t, runs.StatusSleeping, during.Status)
	require.Len(t, during.Steps, 1)
	assert.Equal(t, runs.StepRunning, during.Steps[0].Status)
	assert.Contains(t, details, "**unit/sleep** — sleeping")
	assert.Equal(t, runs.StatusRunning, after, "back to running after the sleep")
	assert.Equal(t, []string{"running", "sleeping", "running", "completed"}, statuses.all())

	st := queryState(t, env)
	s := stepByName(t, st, "cool-down")
	assert.Equal(t, runs.KindSleep, s.Kind)
	assert.Equal(t, runs.StepCompleted, s.Status)
	assert.Equal(t, "slept 10m0s", s.Output)
	require.NotNil(t, s.EndedAt)
	assert.Equal(t, 10*time.Minute, s.EndedAt.Sub(s.StartedAt))
}

func TestSleepRefusesANegativeDuration(t *testing.T) {
	var sleepErr error
	f := Define("unit/sleep-negative", func(ctx *Context, _ none) (none, error) {
		sleepErr = ctx.Sleep("nap", -time.Second)
		return none{}, nil
	})
	env := newUnitEnv(t, runConfig{}, f)
	statuses := statusUpserts(env)
	var timers callLog[time.Duration]
	env.SetOnTimerScheduledListener(func(_ string, d time.Duration) { timers.add(d) })
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	var se *StepError
	require.True(t, errors.As(sleepErr, &se), "got %v", sleepErr)
	assert.Equal(t, runs.KindSleep, se.Kind)
	assert.EqualError(t, sleepErr, "step nap: sleep -1s is negative")
	assert.Empty(t, timers.all(), "no timer")
	assert.Equal(t, []string{"running", "completed"}, statuses.all(), "never sleeping")
	assert.Equal(t, []stepView{{Name: "nap", ActivityID: "nap", Kind: runs.KindSleep, Status: runs.StepFailed, Attempt: 1,
		Error: "sleep -1s is negative", Ended: true}}, viewSteps(queryState(t, env).Steps))
}

func TestSleepCancelled(t *testing.T) {
	var sleepErr error
	f := Define("unit/sleep-cancel", func(ctx *Context, _ none) (none, error) {
		sleepErr = ctx.Sleep("nap", time.Hour)
		return none{}, sleepErr
	})
	env := newUnitEnv(t, runConfig{}, f)
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
	env.ExecuteWorkflow(f.Name(), none{})
	require.True(t, env.IsWorkflowCompleted())
	assert.True(t, isCancellation(sleepErr), "got %v", sleepErr)
	st := queryState(t, env)
	assert.Equal(t, runs.StatusCancelled, st.Status)
	s := stepByName(t, st, "nap")
	assert.Equal(t, runs.StepCancelled, s.Status)
	assert.Equal(t, "cancelled", s.Error)
	assert.Equal(t, time.Minute, s.EndedAt.Sub(s.StartedAt))
}

// meteredCount is a custom activity result that reports its cost and tokens.
type meteredCount struct {
	N    int             `json:"n"`
	Cost decimal.Decimal `json:"cost"`
	In   int64           `json:"in"`
	Out  int64           `json:"out"`
}

func (m meteredCount) StepCostUSD() decimal.Decimal      { return m.Cost }
func (m meteredCount) StepTokens() (input, output int64) { return m.In, m.Out }

func countChars(_ context.Context, s string) (meteredCount, error) {
	return meteredCount{N: len(s), Cost: dec("0.015"), In: 7, Out: 3}, nil
}

func TestStepWithCustomActivityChargesReportedCostAndTokens(t *testing.T) {
	var byFunc, byName meteredCount
	f := Define("unit/custom", func(ctx *Context, _ none) (int, error) {
		var err error
		if byFunc, err = Step[meteredCount](ctx.With(StepTimeout(2*time.Minute)), "count", countChars, "gateflow"); err != nil {
			return 0, err
		}
		if byName, err = Step[meteredCount](ctx, "count-by-name", "countChars", "ab"); err != nil {
			return 0, err
		}
		return byFunc.N + byName.N, nil
	})
	env := newUnitEnv(t, runConfig{}, f)
	env.RegisterActivity(countChars)
	started := startedActivities(env)
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	var n int
	require.NoError(t, env.GetWorkflowResult(&n))
	assert.Equal(t, 10, n)
	assert.Equal(t, meteredCount{N: 8, Cost: byFunc.Cost, In: 7, Out: 3}, byFunc)
	assert.True(t, dec("0.015").Equal(byFunc.Cost))
	assert.True(t, dec("0.015").Equal(byName.Cost))

	var infos []activity.Info
	for _, in := range started.all() {
		if in.ActivityType.Name != protocol.QuotaChargeActivity { // each cost also goes to the monthly ledgers
			infos = append(infos, in)
		}
	}
	require.Len(t, infos, 2)
	assert.Equal(t, "count", infos[0].ActivityID)
	assert.Equal(t, "countChars", infos[0].ActivityType.Name)
	// A custom activity gets exactly its StepTimeout (no grace: nothing else enforces it).
	assert.Equal(t, 2*time.Minute, infos[0].StartToCloseTimeout)
	assert.Equal(t, "count-by-name", infos[1].ActivityID)
	assert.Equal(t, DefaultStepTimeout, infos[1].StartToCloseTimeout, "ctx.With does not leak into ctx")

	st := queryState(t, env)
	for _, name := range []string{"count", "count-by-name"} {
		s := stepByName(t, st, name)
		assert.Equal(t, runs.KindActivity, s.Kind)
		assert.Equal(t, runs.StepCompleted, s.Status)
		assert.True(t, dec("0.015").Equal(s.CostUSD), "%s cost %s", name, s.CostUSD)
		assert.Equal(t, &runs.Tokens{Input: 7, Output: 3}, s.Tokens)
	}
	assert.Equal(t, `{"n":8,"cost":"0.015","in":7,"out":3}`, stepByName(t, st, "count").Output)
	assert.Equal(t, "0.03", st.CostUSD.String())
	assert.Equal(t, runs.Tokens{Input: 14, Output: 6}, st.Tokens)
}

func TestStepWithNeitherFunctionNorNameIsNotDispatched(t *testing.T) {
	var errs []error
	f := Define("unit/bad-activity", func(ctx *Context, _ none) (none, error) {
		_, e1 := Step[int](ctx, "number", 42)
		_, e2 := Step[int](ctx, "empty", "")
		errs = []error{e1, e2}
		return none{}, nil
	})
	env := newUnitEnv(t, runConfig{}, f)
	started := startedActivities(env)
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	assert.Empty(t, started.all())
	require.Len(t, errs, 2)
	assert.EqualError(t, errs[0], "step number: activity 42 is neither a function nor a name")
	assert.EqualError(t, errs[1], "step empty: activity  is neither a function nor a name")
	assert.Equal(t, []stepView{
		{Name: "number", ActivityID: "number", Kind: runs.KindActivity, Status: runs.StepFailed, Attempt: 1, Error: "activity 42 is neither a function nor a name", Ended: true},
		{Name: "empty", ActivityID: "empty", Kind: runs.KindActivity, Status: runs.StepFailed, Attempt: 1, Error: "activity  is neither a function nor a name", Ended: true},
	}, viewSteps(queryState(t, env).Steps))
}

func TestAgentStepRecordsCostAndTokensExactly(t *testing.T) {
	f := Define("unit/agents", func(ctx *Context, _ none) (string, error) {
		a, err := ctx.Agent("first", activities.Agent{Prompt: "a", Model: "m"})
		if err != nil {
			return "", err
		}
		b, err := ctx.Agent("second", activities.Agent{Prompt: "b", Model: "m"})
		return a.Text + b.Text, err
	})
	env := newUnitEnv(t, runConfig{}, f)
	calls := mockAgent(env, func(a activities.Agent) (activities.AgentResult, error) {
		if a.Prompt == "a" {
			return activities.AgentResult{Text: "A", Usage: llm.Usage{InputTokens: 100, OutputTokens: 20}, CostUSD: dec("0.1"), Attempt: 1}, nil
		}
		return activities.AgentResult{Text: "B", Usage: llm.Usage{InputTokens: 1, OutputTokens: 2}, CostUSD: dec("0.2"), Attempt: 2}, nil
	})
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	assert.Len(t, calls.all(), 2)
	st := queryState(t, env)
	first, second := stepByName(t, st, "first"), stepByName(t, st, "second")
	assert.Equal(t, runs.KindAgent, first.Kind)
	assert.Equal(t, "A", first.Output)
	assert.True(t, dec("0.1").Equal(first.CostUSD))
	assert.Equal(t, &runs.Tokens{Input: 100, Output: 20}, first.Tokens)
	assert.True(t, dec("0.2").Equal(second.CostUSD))
	assert.Equal(t, 1, second.Attempt, "the run makes an agent step's attempts itself: one attempt, whatever the activity reports")
	assert.Len(t, second.Attempts, 1)
	assert.Equal(t, "0.3", st.CostUSD.String(), "exact decimal sum, not 0.30000000000000004")
	assert.Equal(t, runs.Tokens{Input: 101, Output: 22}, st.Tokens)
	assert.Contains(t, currentDetails(t, env), "Cost **$0.3000** · 123 tokens (101 in, 22 out)")
}

func TestFailedAgentCallIsCharged(t *testing.T) {
	mapDetails := map[string]any{"cost_usd": "0.002", "attempt": 2, "usage": map[string]any{"input_tokens": 10, "output_tokens": 5}}
	tests := []struct {
		name       string
		err        error
		wantCost   string
		wantTokens *runs.Tokens
		wantTry    int
	}{
		{"map details", temporal.NewApplicationErrorWithOptions("agent: provider said no", activities.AgentFailedErrorType,
			temporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{mapDetails}}), "0.002", &runs.Tokens{Input: 10, Output: 5}, 1},
		{"an AgentResult as the agent activity attaches it", temporal.NewNonRetryableApplicationError("agent: the answer is not JSON", activities.AgentBadJSONErrorType, nil,
			activities.AgentResult{CostUSD: dec("0.05"), Usage: llm.Usage{InputTokens: 40, OutputTokens: 8}, Attempt: 1}), "0.05", &runs.Tokens{Input: 40, Output: 8}, 1},
		{"no details", temporal.NewNonRetryableApplicationError("agent: down", activities.AgentAPIErrorType, nil), "0", nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var handlerErr error
			f := Define("unit/agent-fail", func(ctx *Context, _ none) (none, error) {
				_, handlerErr = ctx.Agent("think", activities.Agent{Prompt: "p", Model: "m"}, AllowFailure())
				return none{}, nil
			})
			env := newUnitEnv(t, runConfig{}, f)
			calls := mockAgent(env, func(activities.Agent) (activities.AgentResult, error) { return activities.AgentResult{}, tt.err })
			env.ExecuteWorkflow(f.Name(), none{})
			require.NoError(t, env.GetWorkflowError())
			assertAllowedFailure(t, handlerErr, "think")
			assert.Len(t, calls.all(), 1)
			st := queryState(t, env)
			s := stepByName(t, st, "think")
			assert.Equal(t, runs.StepFailed, s.Status)
			assert.True(t, s.AllowedFailure)
			assert.Equal(t, tt.wantTry, s.Attempt)
			assert.Equal(t, tt.wantCost, s.CostUSD.String())
			assert.Equal(t, tt.wantTokens, s.Tokens)
			assert.Equal(t, tt.wantCost, st.CostUSD.String(), "charged to the run")
			assert.Equal(t, runs.StatusWarning, st.Status)
		})
	}
}

// TestFailureInfoInProcessAndOverTheWire: details decode from JSON once they crossed the
// failure converter (as every activity error does before workflow code sees it); details
// made in this process only decode into their own type, so a map is not read then.
func TestFailureInfoInProcessAndOverTheWire(t *testing.T) {
	app := temporal.NewApplicationErrorWithOptions("agent: no", activities.AgentFailedErrorType, temporal.ApplicationErrorOptions{
		Details: []any{map[string]any{"cost_usd": "0.002", "usage": map[string]any{"input_tokens": 10, "output_tokens": 5}}}})
	assert.Equal(t, failure{}, failureInfo(app), "in-process map details are not decoded")
	f := failureInfo(wire(app))
	assert.Equal(t, "0.002", f.cost.String())
	assert.Equal(t, runs.Tokens{Input: 10, Output: 5}, f.tokens)
	assert.Nil(t, f.exitCode, "only shell exits carry an exit code")

	httpErr := temporal.NewApplicationError("http: 503", activities.HTTPStatusErrorType, activities.HTTPFailure{Status: 503, Attempt: 3})
	for name, err := range map[string]error{"in-process": httpErr, "wire": wire(httpErr)} {
		f := failureInfo(&StepError{Step: "h", Err: err})
		assert.Equal(t, 503, f.httpStatus, name)
		assert.Equal(t, 3, f.attempt, name)
		assert.True(t, f.cost.IsZero(), name)
	}
}
