package flowctl

import (
	"context"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/runs"
)

// watch reads the run's whole state (a DescribeWorkflowExecution with its memo) only when
// something can have changed: while a step runs (its live output arrives by heartbeat,
// which makes no history event) every --interval; otherwise when the run's history has a
// new event, which a long poll of the history tells (followHistory). A run waiting hours
// for a signal costs one open long poll, not a describe every half second.

// watchIdleRecheck is how long watch waits for a history event before reading the run
// anyway (a long poll that was cut off without an error).
const watchIdleRecheck = time.Minute

// followHistory long-polls the history of run id and sends on the channel it returns
// after each batch of new events; it closes the channel when the history ends or cannot
// be read (watch then reads every interval). The first events are the history so far.
func followHistory(ctx context.Context, tc client.Client, id string) <-chan struct{} {
	if tc == nil {
		return nil
	}
	ch := make(chan struct{}, 1)
	go func() {
		defer close(ch)
		it := tc.GetWorkflowHistory(ctx, id, "", true, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			if _, err := it.Next(); err != nil {
				return
			}
			select {
			case ch <- struct{}{}:
			default: // a change is already waiting to be read
			}
		}
	}()
	return ch
}

// next is what watch waits for before it reads the run again (see above).
func (w *watcher) next(interval time.Duration) <-chan time.Time {
	if w.changes == nil || w.stepRunning() {
		return time.After(interval)
	}
	out := make(chan time.Time, 1)
	go func(changes <-chan struct{}) {
		t := time.NewTimer(watchIdleRecheck)
		defer t.Stop()
		select {
		case _, ok := <-changes:
			if !ok {
				// The history ended or cannot be followed: read every interval from now on.
				time.Sleep(interval)
			}
		case <-t.C:
		}
		out <- w.now()
	}(w.changes)
	return out
}

// stepRunning reports whether a step of the run was running when it was last read.
func (w *watcher) stepRunning() bool {
	for _, st := range w.seen {
		if st == runs.StepRunning {
			return true
		}
	}
	return false
}
