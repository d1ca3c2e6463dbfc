package integration

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/events"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/integration/testflows"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/telemetry"
	"github.com/gateflow/gateflow/runs"
	"github.com/gateflow/gateflow/testsuite"
)

// sinkShellInput is how many shell steps a sink test run has; with File set, the step
// "flaky" before them fails its first attempt (Temporal retries it).
type sinkShellInput struct {
	Steps int    `json:"steps"`
	File  string `json:"file,omitempty"`
}

// sinkShell runs in.Steps shell steps one after the other.
var sinkShell = flow.Define("test.sinks.shell", func(ctx *flow.Context, in sinkShellInput) (int, error) {
	if in.File != "" {
		_, err := ctx.Shell("flaky", activities.Shell{
			Command: `if [ -e "$FILE" ]; then echo ok; else touch "$FILE"; exit 3; fi`, Env: map[string]string{"FILE": in.File},
		}, flow.Retry(temporal.RetryPolicy{InitialInterval: 200 * time.Millisecond, MaximumAttempts: 3}))
		if err != nil {
			return 0, err
		}
	}
	for i := 0; i < in.Steps; i++ {
		if _, err := ctx.Shell(fmt.Sprintf("s%d", i), activities.Shell{Command: "true"}); err != nil {
			return 0, err
		}
	}
	return in.Steps, nil
})

// Recorded runs of sinkShell (2 steps, flaky first) with a webhook sink: perEventHistory
// when each event was an activity of its own (gateflow.events version 1), batchedHistory
// with the events of a workflow task in one local activity (version 2).
// GATEFLOW_RECORD_SINK_HISTORY=1 records the current code's (batchedHistory) again.
const (
	perEventHistory = "testdata/events/per-event-activities.json"
	batchedHistory  = "testdata/events/batched.json"
)

// Recorded runs of every event delivery version replay on today's code (with sinks).
func TestRecordedSinkHistoriesReplay(t *testing.T) {
	hook := httptest.NewServer(&eventReceiver{})
	defer hook.Close()
	opts := flow.WorkerOptions{EventSinks: []events.Sink{events.Webhook{URL: hook.URL}}}
	if os.Getenv("GATEFLOW_RECORD_SINK_HISTORY") == "1" {
		ctx := ctxT(t, time.Minute)
		c := sinkWorker(t, "sinks-record", opts)
		run := runToEnd(t, ctx, c, sinkShell.Name(), sinkShellInput{Steps: 2, File: filepath.Join(t.TempDir(), "flaky")})
		require.NoError(t, testsuite.RecordHistory(ctx, shared.tc, run, batchedHistory))
	}
	for _, h := range []string{perEventHistory, batchedHistory} {
		require.NoError(t, testsuite.Replay(h, opts, sinkShell), h)
	}
	b, err := os.ReadFile(perEventHistory)
	require.NoError(t, err)
	assert.Equal(t, 7, strings.Count(string(b), `"name": "`+protocol.EventActivity+`"`), "the v1 history has its activities per event")
}

// historyCount counts a run's history events, those that schedule an activity of type
// activityType, and the markers of event delivery (version 2).
func historyCount(t *testing.T, ctx context.Context, run, activityType string) (all, scheduled, markers int) {
	t.Helper()
	it := shared.tc.GetWorkflowHistory(ctx, run, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		all++
		if e.GetEventType() == enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
			e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == activityType {
			scheduled++
		}
		if e.GetEventType() == enumspb.EVENT_TYPE_MARKER_RECORDED && strings.Contains(e.String(), protocol.EventBatchActivity) {
			markers++ // the gateflow.events version marker, or a batch's local activity
		}
	}
	return all, scheduled, markers
}

// sinkWorker serves sinkShell on a queue of its own with sinks, and returns its client.
func sinkWorker(t *testing.T, prefix string, opts flow.WorkerOptions, flows ...flow.Definition) *flowclient.Client {
	t.Helper()
	opts.TaskQueue, opts.StopTimeout = uniqueQueue(prefix), time.Second
	w := flow.NewWorker(shared.tc, opts, append([]flow.Definition{sinkShell}, flows...)...)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return flowclient.New(shared.tc, flowclient.Options{TaskQueue: opts.TaskQueue})
}

func runToEnd(t *testing.T, ctx context.Context, c *flowclient.Client, name string, in any) string {
	t.Helper()
	run, err := c.Start(ctx, name, in, core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	return run.ID
}

// With an event sink, a run of 20 shell steps has at most 1.3× the history events of the
// same run without one (K=5 and K=100 are logged): the events of a workflow task go in one local activity (a
// marker), not in activities of their own. The sink still gets every event once, in
// order, with its ID as the Idempotency-Key.
func TestEventSinkHistoryCostAtK20(t *testing.T) {
	ctx := ctxT(t, 3*time.Minute)
	rec := &eventReceiver{}
	hook := httptest.NewServer(rec)
	defer hook.Close()
	plain := sinkWorker(t, "sinks-none", flow.WorkerOptions{})
	withSink := sinkWorker(t, "sinks-one", flow.WorkerOptions{EventSinks: []events.Sink{events.Webhook{URL: hook.URL}}})

	var sunk string
	for _, k := range []int{5, 20, 100} { // the target is at K=20; the others are logged
		bare := runToEnd(t, ctx, plain, sinkShell.Name(), sinkShellInput{Steps: k})
		run := runToEnd(t, ctx, withSink, sinkShell.Name(), sinkShellInput{Steps: k})
		bareAll, _, _ := historyCount(t, ctx, bare, protocol.EventBatchActivity)
		all, perEvent, markers := historyCount(t, ctx, run, protocol.EventActivity)
		t.Logf("history events at K=%d: %d without a sink, %d with one (%.2f×), %d markers", k, bareAll, all, float64(all)/float64(bareAll), markers)
		assert.Zero(t, perEvent, "no activity per event")
		if k == 20 {
			assert.LessOrEqual(t, float64(all), 1.3*float64(bareAll), "with a sink: %d events, without: %d", all, bareAll)
			sunk = run
		}
	}

	got := rec.forRun(sunk)
	assert.Len(t, ofType(got, events.StepStarted), 20)
	assert.Len(t, ofType(got, events.StepCompleted), 20)
	seen := map[string]bool{}
	for _, e := range got {
		assert.False(t, seen[e.ID], "event %s delivered once", e.ID)
		seen[e.ID] = true
	}
	var prev int
	for i, e := range got {
		var n int
		_, err := fmt.Sscanf(e.ID[strings.LastIndex(e.ID, "/")+1:], "%d", &n)
		require.NoError(t, err, e.ID)
		assert.Greater(t, n, prev, "event %d (%s) in order", i, e.ID)
		prev = n
	}
	assert.Equal(t, events.StepStarted, got[0].Type)
	assert.Equal(t, "s0", got[0].Step)
	assert.Equal(t, events.RunStatus, got[len(got)-1].Type)
	assert.Equal(t, "completed", got[len(got)-1].Status)
	rec.mu.Lock()
	for i, e := range rec.events {
		assert.Equal(t, e.ID, rec.keys[i], "the Idempotency-Key header is the event ID")
	}
	rec.mu.Unlock()
	hist := filepath.Join(t.TempDir(), "h.json")
	require.NoError(t, testsuite.RecordHistory(ctx, shared.tc, sunk, hist))
	assert.NoError(t, testsuite.Replay(hist, flow.WorkerOptions{EventSinks: []events.Sink{events.Webhook{URL: hook.URL}}}, sinkShell),
		"a batched run replays")
}

// failingSink refuses every event and counts the tries.
type failingSink struct{ tries atomic.Int64 }

func (s *failingSink) Deliver(context.Context, events.Event) error {
	s.tries.Add(1)
	return errors.New("sink down")
}

// A sink that always fails does not stop another sink nor the run: each of its events is
// tried 3 times, then logged and counted in gateflow_event_delivery_failures_total. Sinks
// get only the events their subscriptions want, and a run no sink wants schedules no
// delivery at all.
func TestFailingSinkAndSubscriptions(t *testing.T) {
	ctx := ctxT(t, 3*time.Minute)
	rec, approvals := &eventReceiver{}, &eventReceiver{}
	hook, approvalHook := httptest.NewServer(rec), httptest.NewServer(approvals)
	defer hook.Close()
	defer approvalHook.Close()
	m, err := telemetry.NewMetrics(nil)
	require.NoError(t, err)
	tc, err := client.NewClientFromExisting(shared.tc, client.Options{MetricsHandler: m.Handler()})
	require.NoError(t, err)
	defer tc.Close()
	failing := &failingSink{}
	other := flow.Define("test.sinks.other", func(ctx *flow.Context, _ struct{}) (string, error) {
		_, err := ctx.Shell("one", activities.Shell{Command: "true"})
		return "", err
	})
	queue := uniqueQueue("sinks-failing")
	w := flow.NewWorker(tc, flow.WorkerOptions{TaskQueue: queue, StopTimeout: time.Second, EventSinks: []events.Sink{
		events.Subscribe(failing, events.Subscription{Workflows: []string{sinkShell.Name()}}),
		events.Subscribe(events.Webhook{URL: hook.URL}, events.Subscription{Workflows: []string{sinkShell.Name()}}),
		events.Subscribe(events.Webhook{URL: approvalHook.URL}, events.Subscription{Types: []events.Type{events.ApprovalRequested}, Workflows: []string{sinkShell.Name()}}),
	}}, sinkShell, other)
	require.NoError(t, w.Start())
	defer w.Stop()
	c := flowclient.New(tc, flowclient.Options{TaskQueue: queue})

	run := runToEnd(t, ctx, c, sinkShell.Name(), sinkShellInput{Steps: 2})
	got := rec.forRun(run)
	assert.Len(t, got, 5, "2 × started + completed, and the end, despite the failing sink: %v", got)
	assert.Equal(t, int64(3*5), failing.tries.Load(), "each event tried 3 times by the failing sink")
	var text strings.Builder
	require.NoError(t, m.WriteText(&text))
	failed := 0
	for _, typ := range []events.Type{events.StepStarted, events.StepCompleted, events.RunStatus} {
		n, _ := strconv.Atoi(series(text.String(), protocol.MetricEventDeliveryFailures, `workflow="test.sinks.shell"`,
			`sink="0/*integration.failingSink"`, `type="`+string(typ)+`"`))
		failed += n
	}
	assert.Equal(t, 5, failed, "five failed deliveries counted:\n%s", brief(text.String()))
	assert.Empty(t, approvals.forRun(run), "the approvals sink wants no step events")

	nobody := runToEnd(t, ctx, c, other.Name(), struct{}{})
	all, _, markers := historyCount(t, ctx, nobody, protocol.EventActivity)
	assert.Zero(t, markers, "no sink wants an event of %s: no delivery, no version marker (%d events)", other.Name(), all)
	assert.Empty(t, rec.forRun(nobody))
}

// step.retrying: Temporal's retry of a failed shell step is reported from the worker;
// the run's own retry of a cost-bearing step (run_paid.go) from the run.
func TestStepRetryingEvents(t *testing.T) {
	ctx := ctxT(t, 3*time.Minute)
	rec := &eventReceiver{}
	hook := httptest.NewServer(rec)
	defer hook.Close()
	bad := scriptAnswer{text: "Sure! Here is the JSON you asked for.", in: 1000, out: 100}
	good := scriptAnswer{text: `{"summary":"ok"}`, in: 2000, out: 50}
	srv := startScriptServer(t, map[string][]scriptAnswer{"summarize sinks": {bad, good}})
	c := sinkWorker(t, "sinks-retry", flow.WorkerOptions{
		EventSinks: []events.Sink{events.Webhook{URL: hook.URL}},
		Providers:  map[string]llm.Provider{llm.ProviderOpenAI: llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: "sk-test"})},
	}, testflows.Paid)

	run := runToEnd(t, ctx, c, sinkShell.Name(), sinkShellInput{Steps: 1, File: filepath.Join(t.TempDir(), "flaky")})
	retrying := ofType(rec.forRun(run), events.StepRetrying)
	require.Len(t, retrying, 1, "%v", rec.forRun(run))
	e := retrying[0]
	assert.Equal(t, "flaky", e.Step)
	assert.Contains(t, e.Message, "exit code 3")
	assert.EqualValues(t, 1, e.Data["attempt"])
	assert.EqualValues(t, 2, e.Data["next_attempt"])
	d, err := time.ParseDuration(e.Data["next_delay"].(string))
	require.NoError(t, err)
	assert.InDelta(t, float64(200*time.Millisecond), float64(d), float64(50*time.Millisecond), "the policy's 200ms, ±20%% jitter")

	paid := runToEnd(t, ctx, c, testflows.Paid.Name(), testflows.PaidInput{Prompt: "summarize sinks", Model: "gpt-4o-mini", JSON: true})
	retrying = ofType(rec.forRun(paid), events.StepRetrying)
	require.Len(t, retrying, 1, "%v", rec.forRun(paid))
	assert.Equal(t, "summarize", retrying[0].Step)
	assert.Contains(t, retrying[0].Message, "not JSON")
	assert.EqualValues(t, 1, retrying[0].Data["attempt"])
	assert.NotEmpty(t, retrying[0].Data["next_delay"])
}

func ofType(es []events.Event, t events.Type) []events.Event {
	var out []events.Event
	for _, e := range es {
		if e.Type == t {
			out = append(out, e)
		}
	}
	return out
}
