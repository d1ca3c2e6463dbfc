package flow

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gateflow/gateflow/service"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/internal/protocol"
)

func TestCheckServicesReportsEveryMistake(t *testing.T) {
	err := checkServices([]service.Def{
		service.Declare("", service.Options{}),
		service.Declare("a/b", service.Options{}),
		service.Declare("ok", service.Options{RatePerSecond: -1, MaxConcurrent: -2}),
		service.Declare("ok", service.Options{Breaker: &service.BreakerOptions{FailureRatio: 1.5, OpenTimeout: -time.Second}}),
	})
	require.Error(t, err)
	msg := err.Error()
	for _, want := range []string{
		"service 0: the name is empty",
		`service 1 ("a/b"): a name is letters`,
		`service 2 ("ok"): RatePerSecond -1 is not a rate`,
		`service 2 ("ok"): MaxConcurrent -2 is negative`,
		`service 3 ("ok") is declared twice`,
		`service 3 ("ok"): Breaker.FailureRatio 1.5 is not in 0..1`,
		`service 3 ("ok"): Breaker.Interval and OpenTimeout must not be negative`,
	} {
		assert.Contains(t, msg, want)
	}
	assert.NoError(t, checkServices([]service.Def{service.Declare("api.github.com", service.Options{RatePerSecond: 5}), service.Declare("openai", service.Options{})}))
	assert.ErrorContains(t, NewWorker(nil, WorkerOptions{Services: []service.Def{service.Declare("", service.Options{})}}).Validate(), "the name is empty")
}

func TestStepServiceRule(t *testing.T) {
	rt := &runner{setup: setupPart{services: []string{"127.0.0.1:8080", "api.github.com", "openai", "tools"}}}
	tests := []struct {
		name    string
		cl      call
		want    string
		wantErr string
	}{
		{"named", call{name: "s", opts: stepOptions{service: "tools"}, args: []any{activities.Shell{Command: "x"}}}, "tools", ""},
		{"named wins over the host", call{name: "s", opts: stepOptions{service: "tools"}, args: []any{activities.HTTP{URL: "https://api.github.com/x"}}}, "tools", ""},
		{"undeclared", call{name: "s", opts: stepOptions{service: "nope"}}, "", `step s: service "nope" is not declared on this worker (WorkerOptions.Services: 127.0.0.1:8080, api.github.com, openai, tools)`},
		{"host", call{args: []any{activities.HTTP{URL: "https://api.github.com/repos"}}}, "api.github.com", ""},
		{"host with port", call{args: []any{activities.HTTP{URL: "http://127.0.0.1:8080/x"}}}, "127.0.0.1:8080", ""},
		{"hostname without the port", call{args: []any{activities.HTTP{URL: "https://api.github.com:443/repos"}}}, "api.github.com", ""},
		{"other host", call{args: []any{activities.HTTP{URL: "http://example.com/"}}}, "", ""},
		{"agent provider", call{args: []any{activities.Agent{Provider: "openai", Model: "m"}}}, "openai", ""},
		{"agent model prefix", call{args: []any{activities.Agent{Model: "gpt-4o-mini"}}}, "openai", ""},
		{"shell", call{args: []any{activities.Shell{Command: "x"}}}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := rt.stepService(tt.cl)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	none := &runner{}
	_, err := none.stepService(call{name: "s", opts: stepOptions{service: "x"}})
	assert.ErrorContains(t, err, "(WorkerOptions.Services: none)")
}

var serviceFlow = Define("test.services.route", func(ctx *Context, _ struct{}) ([]string, error) {
	var out []string
	for _, s := range []struct {
		name string
		url  string
		opts []StepOption
	}{
		{"named", "http://example.com/a", []StepOption{UseService("tools")}},
		{"derived", "http://api.github.com/b", nil},
		{"plain", "http://example.com/c", nil},
	} {
		res, err := ctx.HTTP(s.name, activities.HTTP{URL: s.url}, s.opts...)
		if err != nil {
			return nil, err
		}
		out = append(out, s.name+"="+res.Body)
	}
	_, err := ctx.HTTP("undeclared", activities.HTTP{URL: "http://example.com/d"}, UseService("nope"))
	out = append(out, "undeclared: "+err.Error())
	return out, nil
})

// Steps of a service go to its queue; the others to the run's; an undeclared one fails
// without being dispatched.
func TestServiceStepsGoToTheServiceQueue(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := s.NewTestWorkflowEnvironment()
	opts := WorkerOptions{TaskQueue: "q", Services: []service.Def{service.Declare("tools", service.Options{}), service.Declare("api.github.com", service.Options{})}}
	require.NoError(t, RegisterWorkflows(env, opts, serviceFlow))
	var mu sync.Mutex
	calls := 0
	env.RegisterActivityWithOptions(func(ctx context.Context, _ activities.HTTP) (activities.HTTPResult, error) {
		mu.Lock()
		calls++
		mu.Unlock()
		return activities.HTTPResult{Status: 200, Body: activity.GetInfo(ctx).TaskQueue, Attempt: 1}, nil
	}, activity.RegisterOptions{Name: activities.HTTPActivity})
	env.ExecuteWorkflow(serviceFlow.Name(), struct{}{})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var out []string
	require.NoError(t, env.GetWorkflowResult(&out))
	require.Len(t, out, 4)
	assert.Equal(t, "named=q/svc/tools", out[0])
	assert.Equal(t, "derived=q/svc/api.github.com", out[1])
	assert.NotContains(t, out[2], "/svc/")
	assert.Contains(t, out[3], `service "nope" is not declared on this worker`)
	assert.Equal(t, 3, calls, "the undeclared service's step was not dispatched")
}

// fakeNext is the activity behind a breaker: it answers with the queued errors (nil:
// success) and counts its calls.
type fakeNext struct {
	interceptor.ActivityInboundInterceptorBase
	errs  []error
	calls int
}

func (f *fakeNext) ExecuteActivity(context.Context, *interceptor.ExecuteActivityInput) (any, error) {
	f.calls++
	if len(f.errs) == 0 {
		return "ok", nil
	}
	err := f.errs[0]
	f.errs = f.errs[1:]
	return nil, err
}

func TestServiceBreakerTripsFailsFastAndProbes(t *testing.T) {
	var changes int
	b := newServiceBreaker("api", service.BreakerOptions{ConsecutiveFailures: 2, OpenTimeout: 200 * time.Millisecond},
		func(*serviceBreaker) { changes++ })
	boom := temporal.NewApplicationError("503", activities.HTTPStatusErrorType)
	notFound := temporal.NewNonRetryableApplicationError("404", activities.HTTPStatusErrorType, nil)
	next := &fakeNext{errs: []error{boom, notFound, boom, boom}}
	act := b.InterceptActivity(context.Background(), next)
	ctx := context.Background()
	run := func() error { _, err := act.ExecuteActivity(ctx, &interceptor.ExecuteActivityInput{}); return err }

	require.ErrorIs(t, run(), boom)
	require.ErrorIs(t, run(), notFound, "a non-retryable error is the request's fault")
	require.ErrorIs(t, run(), boom)
	assert.Equal(t, "closed", b.status(time.Now()).State, "the 404 broke the run of failures")
	require.ErrorIs(t, run(), boom)
	st := b.status(time.Now())
	assert.Equal(t, "open", st.State)
	require.NotNil(t, st.OpenUntil)
	assert.Equal(t, 1, changes)

	err := run()
	var app *temporal.ApplicationError
	require.ErrorAs(t, err, &app)
	assert.Equal(t, string(ErrorServiceUnavailable), app.Type())
	assert.False(t, app.NonRetryable())
	assert.Greater(t, app.NextRetryDelay(), 100*time.Millisecond)
	assert.LessOrEqual(t, app.NextRetryDelay(), 220*time.Millisecond)
	assert.Contains(t, app.Message(), "service api: circuit breaker open, not called")
	var sw protocol.ServiceWait
	require.NoError(t, app.Details(&sw))
	assert.Equal(t, protocol.ServiceWait{Service: "api", State: "open", RetryAfterMS: app.NextRetryDelay().Milliseconds()}, sw)
	assert.Equal(t, 4, next.calls, "the fast failure did not call the service")

	time.Sleep(app.NextRetryDelay())
	require.NoError(t, run(), "the probe goes through")
	assert.Equal(t, 5, next.calls)
	assert.Equal(t, "closed", b.status(time.Now()).State)
}

func TestServiceBreakerRatioTrip(t *testing.T) {
	b := newServiceBreaker("api", service.BreakerOptions{FailureRatio: 0.5, MinRequests: 4}, func(*serviceBreaker) {})
	boom := errors.New("down")
	next := &fakeNext{errs: []error{nil, boom, nil, boom}}
	act := b.InterceptActivity(context.Background(), next)
	for range 3 {
		_, _ = act.ExecuteActivity(context.Background(), &interceptor.ExecuteActivityInput{})
		assert.Equal(t, "closed", b.status(time.Now()).State)
	}
	_, _ = act.ExecuteActivity(context.Background(), &interceptor.ExecuteActivityInput{})
	assert.Equal(t, "open", b.status(time.Now()).State, "2 failures of 4 reach the ratio")
	assert.Equal(t, defaultBreakerOpenTimeout, b.open)
	_, _ = act.ExecuteActivity(context.Background(), &interceptor.ExecuteActivityInput{})
	assert.Equal(t, 4, next.calls)
	_, err := act.ExecuteActivity(context.Background(), &interceptor.ExecuteActivityInput{})
	var app *temporal.ApplicationError
	require.ErrorAs(t, err, &app)
	assert.Greater(t, app.NextRetryDelay(), 29*time.Second)
}

func TestMarkWaitingService(t *testing.T) {
	details, err := converter.GetDefaultDataConverter().ToPayloads(protocol.ServiceWait{Service: "api", State: "open", RetryAfterMS: 500})
	require.NoError(t, err)
	next := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	pending := []*workflowpb.PendingActivityInfo{{
		ActivityId: "s1@2", State: enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, NextAttemptScheduleTime: timestamppb.New(next),
		LastFailure: &failurepb.Failure{FailureInfo: &failurepb.Failure_ApplicationFailureInfo{ApplicationFailureInfo: &failurepb.ApplicationFailureInfo{
			Type: string(ErrorServiceUnavailable), Details: &commonpb.Payloads{Payloads: details.GetPayloads()}}}},
	}, {
		ActivityId: "s2", State: enumspb.PENDING_ACTIVITY_STATE_SCHEDULED,
		LastFailure: &failurepb.Failure{FailureInfo: &failurepb.Failure_ApplicationFailureInfo{ApplicationFailureInfo: &failurepb.ApplicationFailureInfo{
			Type: activities.HTTPStatusErrorType}}},
	}}
	st := &runs.State{Steps: []runs.Step{
		{Name: "a", ActivityID: "s1", Status: runs.StepRunning},
		{Name: "b", ActivityID: "s2", Status: runs.StepRunning},
		{Name: "c", ActivityID: "s10", Status: runs.StepRunning},
	}}
	protocol.MarkWaitingService(st, pending)
	assert.Equal(t, runs.StepWaitingService, st.Steps[0].Status)
	assert.Equal(t, "waiting for service api (circuit breaker open), next attempt at 2026-01-02T03:04:05Z", st.Steps[0].Error)
	assert.Equal(t, runs.StepRunning, st.Steps[1].Status, "another failure is not a wait for the service")
	assert.Equal(t, runs.StepRunning, st.Steps[2].Status)
	assert.True(t, strings.HasPrefix(protocol.ServiceQueue("q", "x"), "q/svc/"))
	protocol.MarkWaitingService(nil, pending) // no state: nothing to mark
}
