package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
)

type slowInput struct {
	Marker string `json:"marker"`
}

// slow runs one shell step that takes a while and leaves a marker when it finishes.
var slow = flow.Define("test.slow", func(ctx *flow.Context, in slowInput) (string, error) {
	res, err := ctx.Shell("slow-step", activities.Shell{
		Command: `sleep 2; echo done >> "$MARKER"; echo finished`,
		Env:     map[string]string{"MARKER": in.Marker},
	})
	return res.Stdout, err
})

// A worker that stops while a step runs lets the step finish within its grace period;
// the next worker completes the run without running the step again.
func TestWorkerStopGivesInFlightStepsAGracePeriod(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	queue := "grace"
	w1 := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, StopTimeout: 20 * time.Second}, slow)
	require.NoError(t, w1.Start())
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})
	marker := filepath.Join(t.TempDir(), "marker")
	run, err := c.Start(ctx, "test.slow", slowInput{Marker: marker}, core.StartOptions{})
	require.NoError(t, err)

	require.Eventually(t, func() bool {
		d, err := c.Describe(ctx, run.ID)
		return err == nil && d.State != nil && len(d.State.Steps) == 1 && d.State.Steps[0].Status == runs.StepRunning
	}, 20*time.Second, 20*time.Millisecond, "the step starts")
	stopStarted := time.Now()
	w1.Stop()
	assert.Greater(t, time.Since(stopStarted), 500*time.Millisecond, "Stop waited for the running step")
	b, err := os.ReadFile(marker)
	require.NoError(t, err, "the step finished during the grace period")
	assert.Equal(t, "done\n", string(b))

	w2 := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue}, slow)
	require.NoError(t, w2.Start())
	defer w2.Stop()
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, d.Status)
	assert.JSONEq(t, `"finished\n"`, string(d.Result))
	require.Len(t, d.State.Steps, 1)
	assert.Equal(t, 1, d.State.Steps[0].Attempt)
	b, err = os.ReadFile(marker)
	require.NoError(t, err)
	assert.Equal(t, "done\n", string(b), fmt.Sprintf("the step ran once, marker: %q", b))
}
