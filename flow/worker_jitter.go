package flow

import (
	"context"
	"errors"
	"reflect"
	"slices"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/internal/backoff"
)

// jitterInterceptor spreads the retries of failed activity attempts: Temporal's activity
// retry policies have no jitter, so steps that fail together (a provider outage, a flaky
// dependency) would retry in lockstep. For an attempt that failed with a retryable error
// that asks for no delay of its own, it returns the error with NextRetryDelay set to the
// policy's backoff moved by ±20% (internal/backoff), chosen by hashing the run ID (the
// workflow ID), the activity ID and the next attempt: the same step of the same run always
// waits the same.
//
// NewWorker installs it (Worker.Start) as the outermost activity interceptor, so it sees
// the error the activity and the other interceptors finally return.
type jitterInterceptor struct {
	interceptor.WorkerInterceptorBase
}

// InterceptActivity implements interceptor.WorkerInterceptor.
func (*jitterInterceptor) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &jitterActivity{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}}
}

type jitterActivity struct {
	interceptor.ActivityInboundInterceptorBase
}

// ExecuteActivity implements interceptor.ActivityInboundInterceptor.
func (a *jitterActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	res, err := a.Next.ExecuteActivity(ctx, in)
	if err == nil || ctx.Err() != nil || !activity.IsActivity(ctx) {
		return res, err
	}
	return res, withJitter(activity.GetInfo(ctx), err)
}

// withJitter is err with a jittered NextRetryDelay when Temporal would retry it after
// the policy's plain backoff; otherwise err itself.
func withJitter(info activity.Info, err error) error {
	p := info.RetryPolicy
	if p == nil || info.IsLocalActivity || !retriedByPolicy(err, p, int(info.Attempt)) {
		return err
	}
	next := int(info.Attempt) + 1
	delay := backoff.Policy{
		InitialInterval:    p.InitialInterval,
		BackoffCoefficient: p.BackoffCoefficient,
		MaximumInterval:    p.MaximumInterval,
	}.Next(info.WorkflowExecution.ID+"/"+info.ActivityID, next)
	if delay <= 0 {
		return err
	}
	app, ok := err.(*temporal.ApplicationError)
	if !ok {
		// A plain Go error (or one that wraps an application error): Temporal would send it
		// as an application error typed by its Go type; keep that type, the message and the
		// error as the cause.
		return temporal.NewApplicationErrorWithOptions(err.Error(), goErrorType(err), temporal.ApplicationErrorOptions{
			Cause: err, NextRetryDelay: delay,
		})
	}
	return temporal.NewApplicationErrorWithOptions(app.Message(), app.Type(), temporal.ApplicationErrorOptions{
		NonRetryable:   app.NonRetryable(), // false: a non-retryable error is not jittered
		Cause:          app.Unwrap(),
		Details:        errorDetails(app),
		NextRetryDelay: delay,
		Category:       app.Category(),
	})
}

// retriedByPolicy reports whether Temporal would retry an attempt that failed with err
// after the policy's backoff: err is retryable (not a timeout or cancellation, not
// non-retryable, not of a non-retryable type), names no delay of its own, and attempt is
// not the last.
func retriedByPolicy(err error, p *temporal.RetryPolicy, attempt int) bool {
	if p.MaximumAttempts > 0 && attempt >= int(p.MaximumAttempts) {
		return false
	}
	var te *temporal.TimeoutError
	var ce *temporal.CanceledError
	if errors.As(err, &te) || errors.As(err, &ce) || errors.Is(err, context.Canceled) {
		return false
	}
	errType := goErrorType(err)
	// Temporal reads only the top error's type and delay (not the whole chain).
	if app, ok := err.(*temporal.ApplicationError); ok {
		if app.NonRetryable() || app.NextRetryDelay() != 0 {
			return false
		}
		errType = app.Type()
	}
	return !slices.Contains(p.NonRetryableErrorTypes, errType)
}

// goErrorType is the type Temporal gives a plain Go error when it sends it as an
// application error: the name of its type, pointers dereferenced, and "" for the
// errors.New kind (the SDK's getErrType).
func goErrorType(err error) string {
	t := reflect.TypeOf(err)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() == "errorString" {
		return ""
	}
	return t.Name()
}

// maxErrorDetails bounds how many details errorDetails looks for.
const maxErrorDetails = 32

// errorDetails are an application error's details, as they will encode again: the
// values themselves for an error made in this process, the raw payloads for one decoded
// from the wire (so a custom data converter's encoding is kept either way).
func errorDetails(app *temporal.ApplicationError) []any {
	if !app.HasDetails() {
		return nil
	}
	if raw, ok := rawDetails(app); ok {
		return raw
	}
	// Details made in this process: *any receives each value as it is; asking for more
	// values than there are fails.
	var out []any
	for n := 1; n <= maxErrorDetails; n++ {
		vals := make([]any, n)
		ptrs := make([]any, n)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if !detailsInto(app, ptrs) {
			break
		}
		out = vals
	}
	return out
}

// rawDetails reads details decoded from the wire as raw payloads; details made in this
// process cannot be read so (the SDK panics assigning a value to a RawValue, recovered
// here), and ok is false.
func rawDetails(app *temporal.ApplicationError) (out []any, ok bool) {
	raws := make([]converter.RawValue, maxErrorDetails)
	ptrs := make([]any, maxErrorDetails)
	for i := range raws {
		ptrs[i] = &raws[i]
	}
	if !detailsInto(app, ptrs) {
		return nil, false
	}
	for _, r := range raws {
		if r.Payload() == nil {
			break
		}
		out = append(out, r)
	}
	return out, len(out) > 0
}

func detailsInto(app *temporal.ApplicationError, ptrs []any) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return app.Details(ptrs...) == nil
}
