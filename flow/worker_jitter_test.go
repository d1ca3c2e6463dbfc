package flow

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/internal/backoff"
)

func jitterInfo(attempt int32, p *temporal.RetryPolicy) activity.Info {
	return activity.Info{ActivityID: "build", Attempt: attempt, RetryPolicy: p,
		WorkflowExecution: workflow.Execution{ID: "run-1", RunID: "temporal-run"}}
}

func wantDelay(p temporal.RetryPolicy, attempt int) time.Duration {
	return backoff.Policy{InitialInterval: p.InitialInterval, BackoffCoefficient: p.BackoffCoefficient,
		MaximumInterval: p.MaximumInterval}.Next("run-1/build", attempt+1)
}

type myError struct{ code int }

func (e *myError) Error() string { return "my error" }

func TestJitterKeepsTheApplicationErrorAndSetsItsDelay(t *testing.T) {
	p := temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: 5}
	cause := errors.New("disk full")
	orig := temporal.NewApplicationErrorWithOptions("exit code 3: boom", activities.ShellExitErrorType, temporal.ApplicationErrorOptions{
		Cause:    cause,
		Details:  []any{activities.ShellFailure{ExitCode: 3, StderrTail: "boom", Attempt: 2}, "second"},
		Category: temporal.ApplicationErrorCategoryBenign,
	})
	got := withJitter(jitterInfo(2, &p), orig)
	var app *temporal.ApplicationError
	require.True(t, errors.As(got, &app))
	assert.Equal(t, "exit code 3: boom", app.Message())
	assert.Equal(t, activities.ShellExitErrorType, app.Type())
	assert.False(t, app.NonRetryable())
	assert.Equal(t, temporal.ApplicationErrorCategoryBenign, app.Category())
	assert.Same(t, cause, app.Unwrap())
	var sf activities.ShellFailure
	var second string
	require.NoError(t, app.Details(&sf, &second))
	assert.Equal(t, activities.ShellFailure{ExitCode: 3, StderrTail: "boom", Attempt: 2}, sf)
	assert.Equal(t, "second", second)
	d := app.NextRetryDelay()
	assert.Equal(t, wantDelay(p, 2), d)
	assert.InDelta(t, float64(2*time.Second), float64(d), float64(400*time.Millisecond), "2s ±20% before the third attempt")
	assert.Equal(t, d, withJitter(jitterInfo(2, &p), orig).(*temporal.ApplicationError).NextRetryDelay(), "deterministic")
}

func TestJitterKeepsDetailsDecodedFromTheWire(t *testing.T) {
	fc := temporal.GetDefaultFailureConverter()
	wire := fc.FailureToError(fc.ErrorToFailure(temporal.NewApplicationError("status 503", activities.HTTPStatusErrorType,
		activities.HTTPFailure{Status: 503, Attempt: 1})))
	p := temporal.RetryPolicy{InitialInterval: 500 * time.Millisecond}
	got := withJitter(jitterInfo(1, &p), wire)
	f1, f2 := fc.ErrorToFailure(wire), fc.ErrorToFailure(got)
	assert.Equal(t, f1.GetApplicationFailureInfo().GetDetails().String(), f2.GetApplicationFailureInfo().GetDetails().String(),
		"the same payloads go to the server")
	assert.Equal(t, wantDelay(p, 1), f2.GetApplicationFailureInfo().GetNextRetryDelay().AsDuration())
	var hf activities.HTTPFailure
	require.NoError(t, fc.FailureToError(f2).(*temporal.ApplicationError).Details(&hf))
	assert.Equal(t, 503, hf.Status)
}

func TestJitterWrapsAPlainErrorWithTheTypeTemporalGivesIt(t *testing.T) {
	p := temporal.RetryPolicy{InitialInterval: time.Second}
	for _, tc := range []struct {
		err      error
		wantType string
	}{
		{&myError{code: 1}, "myError"},
		{errors.New("plain"), ""},
		{&fs.PathError{Op: "open", Path: "/x", Err: fs.ErrNotExist}, "PathError"},
	} {
		got := withJitter(jitterInfo(1, &p), tc.err)
		app, ok := got.(*temporal.ApplicationError)
		require.True(t, ok, "%T", got)
		assert.Equal(t, tc.wantType, app.Type())
		assert.Equal(t, tc.err.Error(), app.Message())
		assert.Same(t, tc.err, app.Unwrap(), "the error is the cause")
		assert.Equal(t, wantDelay(p, 1), app.NextRetryDelay())
		// What the server learns: the message and type of the error, as without jitter.
		before := temporal.GetDefaultFailureConverter().ErrorToFailure(tc.err)
		after := temporal.GetDefaultFailureConverter().ErrorToFailure(got)
		assert.Equal(t, before.GetMessage(), after.GetMessage())
		assert.Equal(t, before.GetApplicationFailureInfo().GetType(), after.GetApplicationFailureInfo().GetType())
	}
}

func TestJitterLeavesErrorsTemporalWouldNotRetryAfterTheBackoff(t *testing.T) {
	p := temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 3, NonRetryableErrorTypes: []string{activities.ShellExitErrorType, "myError"}}
	for name, tc := range map[string]struct {
		attempt int32
		err     error
		policy  *temporal.RetryPolicy
	}{
		"non-retryable":       {1, temporal.NewNonRetryableApplicationError("no", "X", nil), &p},
		"non-retryable type":  {1, temporal.NewApplicationError("exit", activities.ShellExitErrorType), &p},
		"non-retryable Go":    {1, &myError{}, &p},
		"last attempt":        {3, temporal.NewApplicationError("again", "X"), &p},
		"own delay":           {1, temporal.NewApplicationErrorWithOptions("later", "X", temporal.ApplicationErrorOptions{NextRetryDelay: 7 * time.Second}), &p},
		"timeout":             {1, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil), &p},
		"cancelled":           {1, temporal.NewCanceledError(), &p},
		"context cancelled":   {1, context.Canceled, &p},
		"no policy":           {1, errors.New("x"), nil},
		"one attempt":         {1, errors.New("x"), &temporal.RetryPolicy{MaximumAttempts: 1}},
		"retry-after by HTTP": {1, temporal.NewApplicationErrorWithOptions("429", activities.HTTPStatusErrorType, temporal.ApplicationErrorOptions{NextRetryDelay: time.Minute}), &p},
	} {
		assert.Same(t, tc.err, withJitter(jitterInfo(tc.attempt, tc.policy), tc.err), name)
	}
	// Unlimited attempts (MaximumAttempts 0) are retried, so jittered.
	got := withJitter(jitterInfo(40, &temporal.RetryPolicy{}), errors.New("x"))
	assert.Equal(t, backoff.Policy{}.Next("run-1/build", 41), got.(*temporal.ApplicationError).NextRetryDelay())
}

// flakyCalls counts the attempts of Flaky and when (by the test environment's clock) each
// started.
type flakyCalls struct {
	mu     sync.Mutex
	starts []time.Time
}

var jitteredFlow = Define("unit/jittered", func(ctx *Context, _ none) (string, error) {
	return Step[string](ctx.With(Retry(temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 3})), "flaky", "Flaky")
})

// TestJitterInTheTestEnvironment runs the interceptor in Temporal's test environment.
// That environment gives activities no retry policy (activity.Info.RetryPolicy is nil:
// its activity tasks are built without one), so the interceptor cannot know the backoff
// and leaves the errors alone: the retries keep the environment's plain delays (1s and,
// since it caps MaximumInterval at InitialInterval, 1s again). The jittered delays are
// checked against a real server (internal/integration, TestJitter...).
func TestJitterInTheTestEnvironment(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := s.NewTestWorkflowEnvironment()
	var seen []bool // per attempt: the interceptor saw a retry policy
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{&jitterInterceptor{}, &policyProbe{seen: &seen}}})
	env.RegisterWorkflowWithOptions(jitteredFlow.workflowWith(runConfig{}), workflow.RegisterOptions{Name: jitteredFlow.Name()})
	calls := &flakyCalls{}
	env.RegisterActivityWithOptions(func(ctx context.Context) (string, error) {
		calls.mu.Lock()
		defer calls.mu.Unlock()
		calls.starts = append(calls.starts, env.Now())
		if len(calls.starts) < 3 {
			return "", errors.New("flaky")
		}
		return "done", nil
	}, activity.RegisterOptions{Name: "Flaky"})
	env.ExecuteWorkflow(jitteredFlow.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, calls.starts, 3)
	assert.Equal(t, []bool{false, false, false}, seen, "the interceptors ran for every attempt, without a policy")
	assert.Equal(t, time.Second, calls.starts[1].Sub(calls.starts[0]))
	assert.Equal(t, time.Second, calls.starts[2].Sub(calls.starts[1]))
}

// policyProbe records whether each activity attempt had a retry policy.
type policyProbe struct {
	interceptor.WorkerInterceptorBase
	seen *[]bool
}

func (p *policyProbe) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &probeActivity{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, seen: p.seen}
}

type probeActivity struct {
	interceptor.ActivityInboundInterceptorBase
	seen *[]bool
}

func (a *probeActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	*a.seen = append(*a.seen, activity.GetInfo(ctx).RetryPolicy != nil)
	return a.Next.ExecuteActivity(ctx, in)
}
