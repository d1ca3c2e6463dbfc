//go:build cluster

package clustertest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	ctl "github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/runs"
)

// show is `flowctl show RUN -o json`, or nil with why it failed.
func show(t *testing.T, queue, run string) (*runs.Description, string) {
	t.Helper()
	r := flowctl(t, queue, "show", run, "-o", "json")
	if r.code != 0 {
		return nil, fmt.Sprintf("exit %d: %s", r.code, r.stderr)
	}
	var d runs.Description
	if err := ctl.DecodeJSON([]byte(r.stdout), &d); err != nil {
		return nil, fmt.Sprintf("flowctl show %s: %v: %s", run, err, r.stdout)
	}
	return &d, ""
}

// waitFor polls `flowctl show` until cond holds, failing the test after d.
func waitFor(t *testing.T, queue, run, what string, d time.Duration, cond func(*runs.Description) bool) *runs.Description {
	t.Helper()
	deadline := time.Now().Add(d)
	last := ""
	for time.Now().Before(deadline) {
		desc, why := show(t, queue, run)
		if desc != nil && cond(desc) {
			return desc
		}
		if desc != nil {
			last = fmt.Sprintf("status %s (%s) %s", desc.Status, desc.TemporalStatus, desc.StateError)
		} else {
			last = why
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("run %s: %s not seen within %s; last: %s", run, what, d, last)
	return nil
}

func hasStatus(s runs.Status) func(*runs.Description) bool {
	return func(d *runs.Description) bool { return d.Status == s }
}

// stepRecord is what a run's history says of one step (activity ID).
type stepRecord struct {
	scheduled, completed int
	attempt              int32  // of the completed attempt
	identity             string // the worker that completed it
	result               string // the completed attempt's result, as stored
}

// history reads a closed or open run's history and sums it up per activity ID.
func history(t *testing.T, run string) (map[string]*stepRecord, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	it := env.tc.GetWorkflowHistory(ctx, run, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	steps := map[string]*stepRecord{}
	byScheduled := map[int64]string{}
	started := map[int64]int32{}
	events := 0
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatalf("history of %s: %v", run, err)
		}
		events++
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			id := e.GetActivityTaskScheduledEventAttributes().GetActivityId()
			byScheduled[e.GetEventId()] = id
			if steps[id] == nil {
				steps[id] = &stepRecord{}
			}
			steps[id].scheduled++
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			started[e.GetEventId()] = e.GetActivityTaskStartedEventAttributes().GetAttempt()
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			a := e.GetActivityTaskCompletedEventAttributes()
			s := steps[byScheduled[a.GetScheduledEventId()]]
			s.completed++
			s.attempt = started[a.GetStartedEventId()]
			s.identity = a.GetIdentity()
			for _, p := range a.GetResult().GetPayloads() {
				s.result += string(p.GetData())
			}
		}
	}
	return steps, events
}

// terminateOnFailure terminates the runs of a failed test, so nothing it left open is
// picked up later; runs that already ended refuse, which is fine.
func terminateOnFailure(t *testing.T, ids *[]string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, id := range *ids {
			if err := env.tc.TerminateWorkflow(context.Background(), id, "", "clustertest failed"); err != nil {
				t.Logf("terminate %s: %v", id, err)
			}
		}
	})
}

// lines reads the side-effect file: one slice of fields per line.
func lines(t *testing.T, file string) [][]string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out [][]string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l != "" {
			out = append(out, strings.Fields(l))
		}
	}
	return out
}
