package flow

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/runs"
)

// Worker losses do not use up a step's attempts.
//
// Temporal counts an attempt that timed out because its worker stopped heartbeating (the
// worker crashed, was killed, was cut off) like one that failed, so three worker crashes
// during one step would fail a step allowed three attempts. gateflow keeps Temporal's
// retries and counts the step's real failures itself:
//
//   - the run schedules the step with MaximumAttempts raised by maxWorkerLosses, and its
//     own number of attempts as the marker type "gateflow.step-attempts:N" among the
//     policy's NonRetryableErrorTypes (no error has that type; the worker reads it from the
//     activity info);
//   - the worker's lossInterceptor adds the number of attempts that failed so far to every
//     heartbeat of the step (a last detail, {"gateflow_failures": n}) and, when an attempt
//     fails, heartbeats the count plus one before reporting the failure: the next attempt
//     reads it from the heartbeat details Temporal hands it. An attempt that finds fewer
//     failures than attempts before it knows the others were lost with their workers.
//   - the N-th real failure is reported non-retryable, so the step fails after N failed
//     attempts however many attempts were lost, and a step lost more than maxWorkerLosses
//     times fails with the heartbeat timeout.
//
// Only shell and HTTP steps are marked: they end an attempt that runs too long themselves,
// with an error the interceptor counts, so a timeout Temporal reports for them is a lost
// worker's. Other steps (custom activities) have Temporal's StartToClose timeout as their
// timeout, which the next attempt cannot tell from a lost worker: their losses count, as
// Temporal counts them. Cost-bearing steps are retried by the run itself (run_paid.go),
// which tells a lost worker from a timeout, and are not marked either.

// ownsTimeout reports whether steps of kind end an attempt past its timeout themselves.
func ownsTimeout(kind runs.StepKind) bool { return kind == runs.KindShell || kind == runs.KindHTTP }

// stepAttemptsMarker prefixes the marker type that carries a step's attempts.
const stepAttemptsMarker = "gateflow.step-attempts:"

// lossTolerant is the retry policy a step without a cost is scheduled with: p with room
// for maxWorkerLosses lost attempts and the marker of its own attempts. A policy with
// unlimited attempts needs no room.
func lossTolerant(p *temporal.RetryPolicy) *temporal.RetryPolicy {
	if p == nil || p.MaximumAttempts <= 0 {
		return p
	}
	out := *p
	out.NonRetryableErrorTypes = append(slices.Clip(p.NonRetryableErrorTypes), stepAttemptsMarker+strconv.Itoa(int(p.MaximumAttempts)))
	out.MaximumAttempts = p.MaximumAttempts + maxWorkerLosses
	return &out
}

// stepAttempts reads the marker of a step's own attempts from its retry policy.
func stepAttempts(p *temporal.RetryPolicy) (int, bool) {
	if p == nil {
		return 0, false
	}
	for _, t := range p.NonRetryableErrorTypes {
		if rest, ok := strings.CutPrefix(t, stepAttemptsMarker); ok {
			n, err := strconv.Atoi(rest)
			return n, err == nil && n > 0
		}
	}
	return 0, false
}

// failureCount is the heartbeat detail that carries how many attempts of a step failed.
type failureCount struct {
	Failures *int `json:"gateflow_failures"`
}

// maxHeartbeatDetails bounds how many heartbeat details priorFailures reads.
const maxHeartbeatDetails = 16

// priorFailures is the failure count the previous attempts left in the heartbeat details.
func priorFailures(ctx context.Context) int {
	if !activity.HasHeartbeatDetails(ctx) {
		return 0
	}
	raws := make([]converter.RawValue, maxHeartbeatDetails)
	ptrs := make([]any, len(raws))
	for i := range raws {
		ptrs[i] = &raws[i]
	}
	if err := activity.GetHeartbeatDetails(ctx, ptrs...); err != nil {
		return 0
	}
	dc := converter.GetDefaultDataConverter()
	for i := len(raws) - 1; i >= 0; i-- {
		if raws[i].Payload() == nil {
			continue
		}
		var fc failureCount
		if err := dc.FromPayload(raws[i].Payload(), &fc); err == nil && fc.Failures != nil {
			return *fc.Failures
		}
		return 0 // the last detail is the step's own: no count was kept
	}
	return 0
}

// lossInterceptor counts a step's real failures across its attempts (see above).
type lossInterceptor struct {
	interceptor.WorkerInterceptorBase
}

// InterceptActivity implements interceptor.WorkerInterceptor.
func (*lossInterceptor) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &lossActivity{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}}
}

// lossActivity is one attempt of a step: failures is the count so far, details the step's
// last heartbeat details (sent again with the new count when the attempt fails).
type lossActivity struct {
	interceptor.ActivityInboundInterceptorBase
	out      interceptor.ActivityOutboundInterceptor
	counting bool
	failures int
	details  []any
}

// Init implements interceptor.ActivityInboundInterceptor.
func (a *lossActivity) Init(outbound interceptor.ActivityOutboundInterceptor) error {
	a.out = outbound
	return a.Next.Init(&lossOutbound{ActivityOutboundInterceptorBase: interceptor.ActivityOutboundInterceptorBase{Next: outbound}, a: a})
}

// ExecuteActivity implements interceptor.ActivityInboundInterceptor.
func (a *lossActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	if !activity.IsActivity(ctx) {
		return a.Next.ExecuteActivity(ctx, in)
	}
	info := activity.GetInfo(ctx)
	attempts, marked := stepAttempts(info.RetryPolicy)
	if !marked || info.IsLocalActivity {
		return a.Next.ExecuteActivity(ctx, in)
	}
	a.counting, a.failures = true, priorFailures(ctx)
	if info.Attempt > 1 {
		// Keep the count where the next attempt finds it, even if this one heartbeats never.
		a.out.RecordHeartbeat(ctx, failureCount{Failures: &a.failures})
	}
	res, err := a.Next.ExecuteActivity(ctx, in)
	if err == nil || !countsAsFailure(err, info.RetryPolicy) {
		return res, err
	}
	a.failures++
	if a.failures >= attempts {
		return res, lastFailure(err)
	}
	a.out.RecordHeartbeat(ctx, append(slices.Clip(a.details), failureCount{Failures: &a.failures})...)
	return res, err
}

// lossOutbound adds the failure count to the step's own heartbeats.
type lossOutbound struct {
	interceptor.ActivityOutboundInterceptorBase
	a *lossActivity
}

// RecordHeartbeat implements interceptor.ActivityOutboundInterceptor.
func (o *lossOutbound) RecordHeartbeat(ctx context.Context, details ...any) {
	if !o.a.counting {
		o.Next.RecordHeartbeat(ctx, details...)
		return
	}
	o.a.details = details
	n := o.a.failures
	o.Next.RecordHeartbeat(ctx, append(slices.Clip(details), failureCount{Failures: &n})...)
}

// countsAsFailure reports whether Temporal would count err as a failed attempt it may
// retry: not a cancellation, not non-retryable (by flag or by type).
func countsAsFailure(err error, p *temporal.RetryPolicy) bool {
	var ce *temporal.CanceledError
	if errors.As(err, &ce) || errors.Is(err, context.Canceled) {
		return false
	}
	errType := goErrorType(err)
	if app, ok := err.(*temporal.ApplicationError); ok {
		if app.NonRetryable() {
			return false
		}
		errType = app.Type()
	}
	return p == nil || !slices.Contains(p.NonRetryableErrorTypes, errType)
}

// lastFailure is err reported as the step's last attempt: non-retryable, with its type,
// message, cause and details kept.
func lastFailure(err error) error {
	app, ok := err.(*temporal.ApplicationError)
	if !ok {
		return temporal.NewApplicationErrorWithOptions(err.Error(), goErrorType(err), temporal.ApplicationErrorOptions{
			NonRetryable: true, Cause: err,
		})
	}
	return temporal.NewApplicationErrorWithOptions(app.Message(), app.Type(), temporal.ApplicationErrorOptions{
		NonRetryable: true,
		Cause:        app.Unwrap(),
		Details:      errorDetails(app),
		Category:     app.Category(),
	})
}
