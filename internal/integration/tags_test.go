package integration

import (
	"errors"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/protocol"
)

// activityWorkers lists the identities of the workers that ran a run's activities.
func activityWorkers(t *testing.T, run string) []string {
	t.Helper()
	var out []string
	hist := shared.tc.GetWorkflowHistory(ctxT(t, time.Minute), run, "", false, 0)
	for hist.HasNext() {
		ev, err := hist.Next()
		require.NoError(t, err)
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil {
			out = append(out, a.GetIdentity())
		}
	}
	return out
}

func TestWorkerTagsRouteRunsToWorkersThatHaveThem(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	queue := "tags"
	plain := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, Identity: "plain-worker"}, examples.All()...)
	require.NoError(t, plain.Start())
	defer plain.Stop()
	gpu := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, Identity: "gpu-worker", Tags: []string{"gpu", "eu"}}, examples.All()...)
	require.NoError(t, gpu.Start())
	defer gpu.Stop()
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})

	for _, tags := range [][]string{{"gpu"}, {"eu", "gpu"}} {
		run, err := c.Start(ctx, "hello", nil, core.StartOptions{WorkerTags: tags})
		require.NoError(t, err)
		d, err := c.Wait(ctx, run.ID)
		require.NoError(t, err)
		assert.Equal(t, runs.StatusCompleted, d.Status)
		assert.Equal(t, protocol.TaggedQueue(queue, tags), d.TaskQueue)
		assert.Equal(t, []string{"gpu-worker", "gpu-worker"}, activityWorkers(t, run.ID), "only the tagged worker ran %v", tags)
	}

	// No worker has "tpu": the run waits for one.
	run, err := c.Start(ctx, "hello", nil, core.StartOptions{WorkerTags: []string{"tpu"}})
	require.NoError(t, err)
	time.Sleep(time.Second)
	d, err := c.Describe(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, "Running", d.TemporalStatus)
	assert.Nil(t, d.State, "no worker picked it up")
	require.NoError(t, shared.tc.TerminateWorkflow(ctx, run.ID, "", "test done"))

	_, err = c.Start(ctx, "hello", nil, core.StartOptions{ID: "bad-tag", WorkerTags: []string{"GPU!"}})
	var ie *core.InputError
	require.True(t, errors.As(err, &ie), "%v", err)
	assert.Contains(t, err.Error(), `tag "GPU!"`)
	r := flowctlRunOn(t, queue, "start", "hello", "--tag", "gpu", "--wait")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "completed")
}
