package integration

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/events"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/runs"
	"github.com/gateflow/gateflow/testsuite"
	"go.temporal.io/sdk/temporal"
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

// sinkHistoryV1 is a run of sinkShell recorded when each event was an activity of its own
// (gateflow.events version 1); GATEFLOW_RECORD_SINK_HISTORY=1 records it again.
const sinkHistoryV1 = "testdata/events/per-event-activities.json"

// A run recorded with one activity per event replays on today's code (with sinks).
func TestPerEventActivityHistoryReplays(t *testing.T) {
	hook := httptest.NewServer(&eventReceiver{})
	defer hook.Close()
	opts := flow.WorkerOptions{EventSinks: []events.Sink{events.Webhook{URL: hook.URL}}}
	if os.Getenv("GATEFLOW_RECORD_SINK_HISTORY") == "1" {
		ctx := ctxT(t, time.Minute)
		queue := uniqueQueue("sinks-record")
		opts.TaskQueue, opts.StopTimeout = queue, time.Second
		w := flow.NewWorker(shared.tc, opts, sinkShell)
		require.NoError(t, w.Start())
		defer w.Stop()
		c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})
		run, err := c.Start(ctx, sinkShell.Name(), sinkShellInput{Steps: 2, File: filepath.Join(t.TempDir(), "flaky")}, flow.StartOptions{})
		require.NoError(t, err)
		d, err := c.Wait(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
		require.NoError(t, testsuite.RecordHistory(ctx, shared.tc, run.ID, sinkHistoryV1))
	}
	require.NoError(t, testsuite.Replay(sinkHistoryV1, opts, sinkShell))
}
