package flow

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
)

func TestLossTolerantPolicyCarriesTheStepsAttempts(t *testing.T) {
	p := &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: []string{"Fatal"}}
	got := lossTolerant(p)
	assert.Equal(t, int32(3+maxWorkerLosses), got.MaximumAttempts)
	assert.Equal(t, []string{"Fatal", "gateflow.step-attempts:3"}, got.NonRetryableErrorTypes)
	assert.Equal(t, []string{"Fatal"}, p.NonRetryableErrorTypes, "the step's own policy is not changed")
	n, ok := stepAttempts(got)
	assert.True(t, ok)
	assert.Equal(t, 3, n)

	unlimited := &temporal.RetryPolicy{}
	assert.Same(t, unlimited, lossTolerant(unlimited), "unlimited attempts need no room")
	assert.Nil(t, lossTolerant(nil))
	for _, p := range []*temporal.RetryPolicy{nil, {}, {NonRetryableErrorTypes: []string{"gateflow.step-attempts:x"}},
		{NonRetryableErrorTypes: []string{"gateflow.step-attempts:0"}}} {
		_, ok := stepAttempts(p)
		assert.False(t, ok, "%+v", p)
	}
}

func TestCountsAsFailure(t *testing.T) {
	p := &temporal.RetryPolicy{NonRetryableErrorTypes: []string{"Fatal"}}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"a plain error", errors.New("boom"), true},
		{"a retryable application error", temporal.NewApplicationError("boom", "Flaky"), true},
		{"non-retryable by flag", temporal.NewNonRetryableApplicationError("boom", "Flaky", nil), false},
		{"non-retryable by type", temporal.NewApplicationError("boom", "Fatal"), false},
		{"cancelled", temporal.NewCanceledError(), false},
		{"context cancelled", context.Canceled, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, countsAsFailure(tt.err, p)) })
	}
}

func TestLastFailureKeepsTheErrorAndStopsRetries(t *testing.T) {
	in := temporal.NewApplicationError("exit code 9", "gateflow.ShellExit", map[string]int{"exit_code": 9})
	out := lastFailure(in)
	var app *temporal.ApplicationError
	require.True(t, errors.As(out, &app))
	assert.True(t, app.NonRetryable())
	assert.Equal(t, "gateflow.ShellExit", app.Type())
	assert.Equal(t, "exit code 9", app.Message())
	var d map[string]int
	require.NoError(t, app.Details(&d))
	assert.Equal(t, 9, d["exit_code"])

	plain := lastFailure(errors.New("boom"))
	require.True(t, errors.As(plain, &app))
	assert.True(t, app.NonRetryable())
	assert.Equal(t, "boom", app.Message())
}
