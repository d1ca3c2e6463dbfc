package flow

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/events"
	"github.com/gateflow/gateflow/internal/backoff"
	"github.com/gateflow/gateflow/runs"
)

// step.retrying comes from two places. A cost-bearing step's attempts are made by the run
// itself (run_paid.go), which emits the event before its backoff timer. Every other step
// is retried by Temporal on the server, unseen by the run: retryEvents, an activity
// interceptor of workers with event sinks, sees each failed attempt that Temporal will
// retry and delivers the event from the worker, right away (not through the run, so not
// in order with the run's other events; its ID is RUN/retry/STEP/ATTEMPT).

// retryData is a step.retrying event's data.
func retryData(attempt int, delay time.Duration) map[string]any {
	return map[string]any{"attempt": attempt, "next_attempt": attempt + 1, "next_delay": delay.String(), "next_delay_ms": delay.Milliseconds()}
}

// retryEvents is the interceptor; NewWorker installs it outside the jitter interceptor
// (worker_jitter.go), so it sees the delay Temporal will wait.
type retryEvents struct {
	interceptor.WorkerInterceptorBase
	sinks eventActivities
}

// InterceptActivity implements interceptor.WorkerInterceptor.
func (r *retryEvents) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &retryEventsActivity{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, sinks: r.sinks}
}

type retryEventsActivity struct {
	interceptor.ActivityInboundInterceptorBase
	sinks eventActivities
}

// ExecuteActivity implements interceptor.ActivityInboundInterceptor.
func (a *retryEventsActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	res, err := a.Next.ExecuteActivity(ctx, in)
	if err == nil || !activity.IsActivity(ctx) {
		return res, err
	}
	info := activity.GetInfo(ctx)
	if info.IsLocalActivity || !isStepActivity(info.ActivityType.Name) {
		return res, err
	}
	delay, ok := retryDelay(info, err)
	if !ok || !anyWants(a.sinks.sinks, info.WorkflowType.Name, events.StepRetrying) {
		return res, err
	}
	attempt := int(info.Attempt)
	step, _, _ := strings.Cut(info.ActivityID, "#")
	e := events.Event{
		ID:   fmt.Sprintf("%s/retry/%s/%d", info.WorkflowExecution.RunID, info.ActivityID, attempt),
		Type: events.StepRetrying, Run: info.WorkflowExecution.ID, Workflow: info.WorkflowType.Name,
		Step: step, Status: string(runs.StepRunning), Message: errorMessage(err), Data: retryData(attempt, delay), At: time.Now(),
	}
	a.sinks.deliverAll(context.WithoutCancel(ctx), []events.Event{e})
	return res, err
}

// isStepActivity reports whether an activity type is a step's: a built-in step kind or
// a custom step (gateflow's own activities are named gateflow.*).
func isStepActivity(name string) bool {
	switch name {
	case activities.ShellActivity, activities.HTTPActivity, activities.AgentActivity, activities.MCPCallActivity:
		return true
	}
	return !strings.HasPrefix(name, "gateflow.")
}

// retryDelay is how long Temporal waits before it retries an attempt that failed with
// err, and whether it retries it at all.
func retryDelay(info activity.Info, err error) (time.Duration, bool) {
	p := info.RetryPolicy
	if p == nil {
		return 0, false
	}
	var app *temporal.ApplicationError
	if top, ok := err.(*temporal.ApplicationError); ok && top.NextRetryDelay() > 0 {
		// A delay of its own (the jitter's, or the step's): retried unless the policy
		// says otherwise.
		if top.NonRetryable() || (p.MaximumAttempts > 0 && int(info.Attempt) >= int(p.MaximumAttempts)) ||
			containsType(p.NonRetryableErrorTypes, top.Type()) {
			return 0, false
		}
		return top.NextRetryDelay(), true
	}
	if !retriedByPolicy(err, p, int(info.Attempt)) || errors.As(err, &app) && app.NonRetryable() {
		return 0, false
	}
	return backoff.Policy{InitialInterval: p.InitialInterval, BackoffCoefficient: p.BackoffCoefficient,
		MaximumInterval: p.MaximumInterval}.Next(info.WorkflowExecution.ID+"/"+info.ActivityID, int(info.Attempt)+1), true
}

// containsType reports whether t is one of types.
func containsType(types []string, t string) bool { return slices.Contains(types, t) }
