package flow

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gateflow/gateflow/service"

	"github.com/sony/gobreaker/v2"
	"go.temporal.io/sdk/activity"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/protocol"
)

// Breaker defaults (BreakerOptions).
const (
	defaultBreakerFailures    = 5
	defaultBreakerMinRequests = 10
	defaultBreakerOpenTimeout = 30 * time.Second
	// halfOpenRetryDelay is how long a step refused while the half-open breaker's probes
	// are in flight waits before its next attempt.
	halfOpenRetryDelay = time.Second
)

// startServices starts one Temporal worker per declared service on its queue
// ("<queue>/svc/<name>"), with the service's limits and breaker and the same activities as the
// worker's own queues (see Services).
func (w *Worker) startServices(o worker.Options) error {
	w.svc = servicesPart{notify: make(chan struct{}, 1)}
	for _, d := range w.opts.Services {
		so := o
		so.DisableWorkflowWorker = true
		if d.Options.RatePerSecond > 0 {
			so.TaskQueueActivitiesPerSecond = d.Options.RatePerSecond
		}
		if d.Options.MaxConcurrent > 0 {
			so.MaxConcurrentActivityExecutionSize = d.Options.MaxConcurrent
		}
		if d.Options.Breaker != nil {
			b := newServiceBreaker(d.Name, *d.Options.Breaker, w.breakerChanged)
			w.svc.breakers = append(w.svc.breakers, b)
			so.Interceptors = append(append([]interceptor.WorkerInterceptor(nil), o.Interceptors...), b)
		}
		q := protocol.ServiceQueue(w.opts.TaskQueue, d.Name)
		tw := worker.New(w.client, q, so)
		if err := RegisterActivities(tw, w.opts); err != nil {
			return err
		}
		for _, r := range w.extra {
			tw.RegisterActivityWithOptions(r.fn, activity.RegisterOptions{Name: r.name})
		}
		if err := tw.Start(); err != nil {
			return fmt.Errorf("worker: start service %s on %s: %w", d.Name, q, err)
		}
		w.ws = append(w.ws, tw)
	}
	return nil
}

// serviceBreaker is a service's circuit breaker on one worker, as an activity interceptor
// of the service's queue.
type serviceBreaker struct {
	interceptor.WorkerInterceptorBase
	name    string
	open    time.Duration
	cb      *gobreaker.CircuitBreaker[any]
	changed func(*serviceBreaker)

	mu       sync.Mutex
	openedAt time.Time
	metrics  sdkclient.MetricsHandler
}

func newServiceBreaker(name string, o service.BreakerOptions, changed func(*serviceBreaker)) *serviceBreaker {
	b := &serviceBreaker{name: name, open: o.OpenTimeout, changed: changed}
	if b.open <= 0 {
		b.open = defaultBreakerOpenTimeout
	}
	failures, ratio, minReq := o.ConsecutiveFailures, o.FailureRatio, o.MinRequests
	if failures == 0 && ratio == 0 {
		failures = defaultBreakerFailures
	}
	if minReq == 0 {
		minReq = defaultBreakerMinRequests
	}
	b.cb = gobreaker.NewCircuitBreaker[any](gobreaker.Settings{
		Name:        name,
		MaxRequests: max(o.HalfOpenProbes, 1),
		Interval:    o.Interval,
		Timeout:     b.open,
		ReadyToTrip: func(c gobreaker.Counts) bool {
			if failures > 0 && c.ConsecutiveFailures >= failures {
				return true
			}
			return ratio > 0 && c.Requests >= minReq && float64(c.TotalFailures)/float64(c.Requests) >= ratio
		},
		IsSuccessful: breakerSuccess,
		IsExcluded:   func(err error) bool { return errors.Is(err, context.Canceled) || isCancellation(err) },
		// Called with the breaker's lock held: only note the time, report later.
		OnStateChange: func(_ string, _, to gobreaker.State) {
			if to == gobreaker.StateOpen {
				b.mu.Lock()
				b.openedAt = time.Now()
				b.mu.Unlock()
			}
		},
	})
	return b
}

// breakerSuccess: a step's outcome that is not the service's failure. A non-retryable
// error (an HTTP 4xx answer, an invalid step) is the request's fault.
func breakerSuccess(err error) bool {
	if err == nil {
		return true
	}
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.NonRetryable()
}

// InterceptActivity implements interceptor.WorkerInterceptor.
func (b *serviceBreaker) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &breakerActivity{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, b: b}
}

type breakerActivity struct {
	interceptor.ActivityInboundInterceptorBase
	b *serviceBreaker
}

// ExecuteActivity implements interceptor.ActivityInboundInterceptor: the activity runs
// through the breaker, or fails fast while it is open.
func (a *breakerActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	b := a.b
	if activity.IsActivity(ctx) {
		b.mu.Lock()
		b.metrics = activity.GetMetricsHandler(ctx)
		b.mu.Unlock()
	}
	before := b.cb.State()
	res, err := b.cb.Execute(func() (any, error) { return a.Next.ExecuteActivity(ctx, in) })
	after := b.cb.State()
	if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
		delay := b.retryDelay(after, time.Now())
		b.report(after, true)
		if after != before {
			b.changed(b)
		}
		return nil, temporal.NewApplicationErrorWithOptions(
			fmt.Sprintf("service %s: circuit breaker %s, not called; next attempt in %s", b.name, after, delay.Round(time.Millisecond)),
			string(ErrorServiceUnavailable), temporal.ApplicationErrorOptions{
				NextRetryDelay: delay, Details: []any{protocol.ServiceWait{Service: b.name, State: after.String(), RetryAfterMS: delay.Milliseconds()}},
			})
	}
	b.report(after, false)
	if after != before {
		b.changed(b)
	}
	return res, err
}

// retryDelay is how long a step refused in state waits: the rest of the open time, or
// while half-open a short while for the probes to finish.
func (b *serviceBreaker) retryDelay(state gobreaker.State, now time.Time) time.Duration {
	if state == gobreaker.StateOpen {
		b.mu.Lock()
		left := b.open - now.Sub(b.openedAt)
		b.mu.Unlock()
		if left > 10*time.Millisecond {
			return left + 10*time.Millisecond // just past the expiry: the attempt probes
		}
	}
	return min(halfOpenRetryDelay, b.open)
}

// breakerStateValue is the gauge value of a state: 0 closed, 1 half-open, 2 open.
func breakerStateValue(s gobreaker.State) float64 {
	switch s {
	case gobreaker.StateHalfOpen:
		return 1
	case gobreaker.StateOpen:
		return 2
	}
	return 0
}

// report updates the breaker's metrics: gateflow_service_breaker_state{service} (0
// closed, 1 half-open, 2 open) and gateflow_service_fast_failures_total{service}.
func (b *serviceBreaker) report(state gobreaker.State, fastFailure bool) {
	b.mu.Lock()
	m := b.metrics
	b.mu.Unlock()
	if m == nil {
		return
	}
	m = m.WithTags(map[string]string{"service": b.name})
	m.Gauge(protocol.MetricBreakerState).Update(breakerStateValue(state))
	if fastFailure {
		m.Counter(protocol.MetricFastFailures).Inc(1)
	}
}

// status is the breaker's state now.
func (b *serviceBreaker) status(now time.Time) core.ServiceBreakerState {
	s := b.cb.State()
	c := b.cb.Counts()
	st := core.ServiceBreakerState{Service: b.name, State: s.String(), ConsecutiveFailures: c.ConsecutiveFailures,
		Requests: c.Requests, Failures: c.TotalFailures, UpdatedAt: now.UTC()}
	if s == gobreaker.StateOpen {
		b.mu.Lock()
		until := b.openedAt.Add(b.open).UTC()
		b.mu.Unlock()
		st.OpenUntil = &until
	}
	return st
}
