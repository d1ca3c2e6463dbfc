package flow

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

func TestGuardsResolve(t *testing.T) {
	tests := []struct {
		name           string
		flow, fallback Guards
		want           Guards
	}{
		{"nothing set gives the defaults", Guards{}, Guards{}, DefaultGuards},
		{"defaults are the documented ones", Guards{}, Guards{},
			Guards{MaxChildDepth: 5, MaxFanOut: 50, MaxTokens: -1, MaxWallTime: -1, MaxSteps: 10_000}},
		{"worker fallback fills zero fields",
			Guards{}, Guards{MaxChildDepth: 2, MaxFanOut: 7, MaxTokens: 1000, MaxWallTime: time.Hour, MaxSteps: 20},
			Guards{MaxChildDepth: 2, MaxFanOut: 7, MaxTokens: 1000, MaxWallTime: time.Hour, MaxSteps: 20}},
		{"flow value wins over the worker, field by field",
			Guards{MaxFanOut: 3, MaxWallTime: time.Minute}, Guards{MaxChildDepth: 2, MaxFanOut: 7, MaxTokens: 1000, MaxWallTime: time.Hour, MaxSteps: 20},
			Guards{MaxChildDepth: 2, MaxFanOut: 3, MaxTokens: 1000, MaxWallTime: time.Minute, MaxSteps: 20}},
		{"flow -1 means unlimited even when the worker limits",
			Guards{MaxChildDepth: -1, MaxFanOut: -1, MaxTokens: -1, MaxWallTime: -1, MaxSteps: -1}, Guards{MaxChildDepth: 2, MaxFanOut: 7, MaxTokens: 1000, MaxWallTime: time.Hour, MaxSteps: 20},
			Guards{MaxChildDepth: -1, MaxFanOut: -1, MaxTokens: -1, MaxWallTime: -1, MaxSteps: -1}},
		{"worker -1 means unlimited over the defaults",
			Guards{}, Guards{MaxChildDepth: -1, MaxFanOut: -1, MaxSteps: -1},
			Guards{MaxChildDepth: -1, MaxFanOut: -1, MaxTokens: -1, MaxWallTime: -1, MaxSteps: -1}},
		{"partial worker fallback, rest from defaults",
			Guards{MaxTokens: 50}, Guards{MaxFanOut: 9},
			Guards{MaxChildDepth: 5, MaxFanOut: 9, MaxTokens: 50, MaxWallTime: -1, MaxSteps: 10_000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.flow.resolve(tt.fallback))
		})
	}
}

func TestGuardChecks(t *testing.T) {
	g := Guards{MaxChildDepth: 2, MaxFanOut: 3, MaxTokens: 100, MaxWallTime: time.Minute}
	unlimited := Guards{MaxChildDepth: -1, MaxFanOut: -1, MaxTokens: -1, MaxWallTime: -1}
	zero := Guards{} // unresolved zero limits: nothing allowed above zero

	assert.NoError(t, g.checkDepth("c", 2), "equal to the limit is allowed")
	assert.EqualError(t, g.checkDepth("c", 3), "guard: child depth 3 exceeds the limit of 2 at step c")
	assert.NoError(t, unlimited.checkDepth("c", 1_000_000))
	assert.Error(t, zero.checkDepth("c", 1))

	assert.NoError(t, g.checkFanOut("p", 3))
	assert.EqualError(t, g.checkFanOut("p", 4), "guard: fan-out 4 exceeds the limit of 3 at step p")
	assert.NoError(t, unlimited.checkFanOut("p", 1_000_000))

	assert.NoError(t, g.checkTokens("a", 100))
	assert.EqualError(t, g.checkTokens("a", 101), "guard: tokens 101 exceeds the limit of 100 at step a")
	assert.NoError(t, unlimited.checkTokens("a", 1<<40))
	assert.NoError(t, zero.checkTokens("a", 0))
	assert.Error(t, zero.checkTokens("a", 1))

	for _, err := range []error{g.checkDepth("c", 3), g.checkFanOut("p", 4), g.checkTokens("a", 101)} {
		assert.True(t, errors.Is(err, errGuard), "%v matches errGuard", err)
		var ge *GuardError
		require.True(t, errors.As(err, &ge))
		wrapped := &StepError{Step: ge.Step, Err: err}
		assert.True(t, errors.Is(wrapped, errGuard), "a step error wrapping a guard matches errGuard")
		assert.True(t, errors.Is(fmt.Errorf("x: %w", wrapped), errGuard))
	}
	assert.False(t, errors.Is(errors.New("guard limit reached"), errGuard), "only guard errors match")
	assert.Equal(t, "guard limit reached", errGuard.Error())
}

func TestGuardErrorFields(t *testing.T) {
	err := Guards{MaxFanOut: 1}.checkFanOut("checks", 2)
	var ge *GuardError
	require.True(t, errors.As(err, &ge))
	assert.Equal(t, GuardError{Limit: "fan-out", Value: "2", Max: "1", Step: "checks"}, *ge)
	assert.Equal(t, "guard: wall time 1m0s exceeds the limit of 30s at step s",
		(&GuardError{Limit: "wall time", Value: "1m0s", Max: "30s", Step: "s"}).Error())
}

func TestGuardsWallTime(t *testing.T) {
	start := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	g := Guards{MaxWallTime: time.Minute}

	left, ok := g.remaining(start, start.Add(20*time.Second))
	assert.Equal(t, 40*time.Second, left)
	assert.True(t, ok)
	left, ok = g.remaining(start, start.Add(time.Minute))
	assert.Equal(t, time.Duration(0), left)
	assert.False(t, ok, "nothing left exactly at the limit")
	left, ok = g.remaining(start, start.Add(90*time.Second))
	assert.Equal(t, -30*time.Second, left)
	assert.False(t, ok)

	left, ok = Guards{MaxWallTime: -1}.remaining(start, start.Add(1000*time.Hour))
	assert.Equal(t, time.Duration(0), left)
	assert.True(t, ok, "no limit: always ok")

	assert.NoError(t, g.checkWallTime("s", start, start.Add(59*time.Second)))
	assert.EqualError(t, g.checkWallTime("s", start, start.Add(time.Minute)),
		"guard: wall time 1m0s exceeds the limit of 1m0s at step s")
	err := g.checkWallTime("late", start, start.Add(61*time.Second+1234567*time.Nanosecond))
	assert.EqualError(t, err, "guard: wall time 1m1.001s exceeds the limit of 1m0s at step late",
		"the elapsed time is rounded to the millisecond")
	assert.True(t, errors.Is(err, errGuard))
	assert.NoError(t, Guards{MaxWallTime: -1}.checkWallTime("s", start, start.Add(1000*time.Hour)))
}

func TestStatusOf(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		allowed int
		want    runs.Status
	}{
		{"success", nil, 0, runs.StatusCompleted},
		{"success with allowed failures", nil, 2, runs.StatusWarning},
		{"failure", errors.New("boom"), 0, runs.StatusFailed},
		{"failure with allowed failures is still failed", errors.New("boom"), 1, runs.StatusFailed},
		{"temporal cancellation", temporal.NewCanceledError(), 0, runs.StatusCancelled},
		{"workflow.ErrCanceled", workflow.ErrCanceled, 0, runs.StatusCancelled},
		{"cancellation inside a step error", &StepError{Step: "s", Err: temporal.NewCanceledError()}, 3, runs.StatusCancelled},
		{"context.Canceled is not a workflow cancellation", context.Canceled, 0, runs.StatusFailed},
		{"guard refusal fails", &StepError{Step: "s", Err: &GuardError{Limit: "tokens"}}, 0, runs.StatusFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, statusOf(tt.err, tt.allowed))
		})
	}
}

func TestAttemptBackoff(t *testing.T) {
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second,
		16 * time.Second, 32 * time.Second, time.Minute, time.Minute, time.Minute}
	for i, w := range want {
		assert.Equal(t, w, attemptBackoff(i+1), "after attempt %d", i+1)
	}
	assert.Equal(t, time.Minute, attemptBackoff(1000), "large attempts stay capped (no shift overflow)")
}

func TestRunnerRetryable(t *testing.T) {
	rt := &runner{}
	verr := &versionError{Workflow: "w", Started: "1", Worker: "2"}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"plain error", errors.New("boom"), true},
		{"step error", &StepError{Step: "s", Err: errors.New("boom")}, true},
		{"application error", temporal.NewApplicationError("x", "T"), true},
		{"non-retryable application error is still retried as a run", temporal.NewNonRetryableApplicationError("x", "T", nil), true},
		{"cancellation", temporal.NewCanceledError(), false},
		{"cancellation in a step", &StepError{Step: "s", Err: temporal.NewCanceledError()}, false},
		{"workflow.ErrCanceled", workflow.ErrCanceled, false},
		{"guard", &GuardError{Limit: "fan-out"}, false},
		{"guard in a step", &StepError{Step: "s", Err: &GuardError{Limit: "tokens"}}, false},
		{"guard in a parallel error", &ParallelError{Group: "g", First: &StepError{Step: "p", Err: &GuardError{}}}, false},
		{"permanent", Permanent(errors.New("final")), false},
		{"permanent wrapped", fmt.Errorf("ctx: %w", Permanent(errors.New("final"))), false},
		{"version error", verr, false},
		{"version error as the gate builds it", temporal.NewNonRetryableApplicationError(verr.Error(), "gateflow.Version", verr), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, rt.retryable(tt.err))
		})
	}
}

func TestPermanent(t *testing.T) {
	assert.Nil(t, Permanent(nil))
	cause := &StepError{Step: "s", Err: errors.New("boom")}
	p := Permanent(cause)
	assert.Equal(t, cause.Error(), p.Error(), "same message as the cause")
	var se *StepError
	require.True(t, errors.As(p, &se), "unwraps to the cause")
	assert.Same(t, cause, se)
	assert.ErrorIs(t, p, cause)
}

func TestVersionErrorMessage(t *testing.T) {
	e := &versionError{Workflow: "release", Started: "2", Worker: "3"}
	assert.Equal(t, `version: run of release was started with version "2", this worker has version "3"; `+
		`run it on a worker with version "2" (or keep versions compatible with workflow.GetVersion)`, e.Error())
}
