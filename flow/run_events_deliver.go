package flow

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/log"

	"github.com/gateflow/gateflow/events"
	"github.com/gateflow/gateflow/internal/protocol"
)

// How a sink's delivery is retried: sinkAttempts tries of one event, each bounded by
// sinkAttemptTimeout, sinkBackoff apart (doubling). deliveryBudget bounds a whole batch.
const (
	sinkAttempts       = 3
	sinkAttemptTimeout = 5 * time.Second
	sinkBackoff        = 200 * time.Millisecond
	deliveryBudget     = sinkAttempts*sinkAttemptTimeout + 2*sinkBackoff*(1<<(sinkAttempts-1))
)

// deliveryWait is how long deliverAll waits for its sinks (a variable for tests).
var deliveryWait = deliveryBudget + time.Second

// deliverAll gives each sink the events it wants, in order, each sink on its own
// goroutine: a failing or slow sink does not hold up the others. An event a sink still
// refuses after its retries is logged and counted, and the sink goes on with the next.
// It returns within deliveryWait, whatever the sinks do.
func (a eventActivities) deliverAll(ctx context.Context, batch []events.Event) {
	var logger log.Logger
	counted := func(e events.Event, sink string) {}
	if activity.IsActivity(ctx) {
		logger = activity.GetLogger(ctx)
		m := activity.GetMetricsHandler(ctx)
		counted = func(e events.Event, sink string) {
			m.WithTags(map[string]string{"workflow": e.Workflow, "type": string(e.Type), "sink": sink}).
				Counter(protocol.MetricEventDeliveryFailures).Inc(1)
		}
	}
	var wg sync.WaitGroup
	for i, s := range a.sinks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := sinkName(i, s)
			for _, e := range batch {
				if !events.Wants(s, e.Workflow, e.Type) {
					continue
				}
				if err := deliverOne(ctx, s, e); err != nil {
					if logger != nil {
						logger.Warn("event sink did not take the event after its retries", "sink", name, "event", e.ID,
							"type", e.Type, "attempts", sinkAttempts, "error", err)
					}
					counted(e, name)
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(deliveryWait):
		// A sink that ignores its context: the others are done; leave it, rather than
		// time the delivery out and have it made again, to every sink.
		if logger != nil {
			logger.Warn("an event sink is still delivering past its budget; going on without it", "budget", deliveryWait)
		}
	}
}

// deliverOne delivers e to s, retrying a failure up to sinkAttempts tries.
func deliverOne(ctx context.Context, s events.Sink, e events.Event) error {
	var err error
	wait := sinkBackoff
	for attempt := 1; attempt <= sinkAttempts; attempt++ {
		if err = deliverOnce(ctx, s, e); err == nil {
			return nil
		}
		if attempt == sinkAttempts {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (then %w)", err, ctx.Err())
		case <-time.After(wait):
		}
		wait *= 2
	}
	return err
}

// deliverOnce is one try, bounded by sinkAttemptTimeout; a panicking sink is an error.
func deliverOnce(ctx context.Context, s events.Sink, e events.Event) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("event sink panicked: %v", r)
		}
	}()
	actx, cancel := context.WithTimeout(ctx, sinkAttemptTimeout)
	defer cancel()
	return s.Deliver(actx, e)
}

// sinkName names a sink in logs and metrics: its index among the worker's sinks and its
// type (a Subscribed sink's own type).
func sinkName(i int, s events.Sink) string {
	if sub, ok := s.(events.Subscribed); ok {
		s = sub.Sink
	}
	return fmt.Sprintf("%d/%T", i, s)
}
