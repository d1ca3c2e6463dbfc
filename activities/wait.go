package activities

import (
	"context"
	"time"

	"github.com/gateflow/gateflow/artifacts"
)

// heartbeatEvery is how often a step heartbeats while it waits for a call in flight.
const heartbeatEvery = time.Second

// heartbeatWhile runs call, heartbeating every second while it is in flight (inside an
// activity) with a LiveOutput whose Progress is progress of the time waited so far. It
// returns when call does or when ctx is done.
func heartbeatWhile[T any](ctx context.Context, progress func(waited time.Duration) string, call func() (T, error)) (T, error) {
	type outcome struct {
		v   T
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		v, err := call()
		done <- outcome{v, err}
	}()
	tick := time.NewTicker(heartbeatEvery)
	defer tick.Stop()
	attempt, start := 1, time.Now()
	if id, ok := Identity(ctx); ok {
		attempt = id.Attempt
	}
	for {
		select {
		case o := <-done:
			return o.v, o.err
		case <-ctx.Done():
			var zero T
			return zero, ctx.Err()
		case <-tick.C:
			heartbeat(ctx, artifacts.LiveOutput{Attempt: attempt, At: time.Now(), Progress: progress(time.Since(start).Round(time.Second))})
		}
	}
}
