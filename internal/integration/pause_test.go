package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/internal/integration/testflows"
)

func TestPauseHoldsNewRunsAndResumeReleasesThem(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	queue := "pausing"
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue}, append(examples.All(), testflows.All()...)...)
	require.NoError(t, w.Start())
	defer w.Stop()
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})

	// A run already going when the type is paused is untouched.
	going, err := c.Start(ctx, "test.earlygate", nil, core.StartOptions{})
	require.NoError(t, err)
	eventually(t, c, going.ID, "the gate opens", waitingFor("approval:gate"))

	r := flowctlRunOn(t, queue, "pause", "test.earlygate", "--reason", "release freeze")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "New runs of test.earlygate wait in pending")
	r = flowctlRunOn(t, queue, "pause", "nope")
	assert.Equal(t, flowctl.ExitUsage, r.code)

	var held []string
	for i := 0; i < 2; i++ {
		run, err := c.Start(ctx, "test.earlygate", nil, core.StartOptions{})
		require.NoError(t, err)
		assert.True(t, run.Held, "the start says the run is held")
		held = append(held, run.ID)
	}
	r = flowctlRunOn(t, queue, "start", "test.earlygate")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "  pending: workflow type test.earlygate is paused; the run starts when it is resumed (flowctl resume test.earlygate)")
	held = append(held, strings.Fields(strings.TrimPrefix(r.stdout, "Started test.earlygate run "))[0])
	for _, id := range held {
		d := eventually(t, c, id, "held", func(d *runs.Description) bool { return d.Status == runs.StatusPending })
		assert.Empty(t, d.State.Steps, "nothing ran while paused")
	}
	// Other workflows are not held.
	h, err := c.Start(ctx, "hello", nil, core.StartOptions{})
	require.NoError(t, err)
	hd, err := c.Wait(ctx, h.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, hd.Status)

	_, err = c.Vote(ctx, going.ID, approval.Vote{Gate: "gate", Kind: approval.Approve, By: "alice"})
	require.NoError(t, err)
	gd, err := c.Wait(ctx, going.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, gd.Status, "the running one finished while paused")

	r = flowctlRunOn(t, queue, "resume", "test.earlygate")
	require.Equal(t, 0, r.code, r.stderr)
	for _, id := range held {
		eventually(t, c, id, "released", waitingFor("approval:gate"))
		_, err := c.Vote(ctx, id, approval.Vote{Gate: "gate", Kind: approval.Approve, By: "alice"})
		require.NoError(t, err)
		d, err := c.Wait(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, runs.StatusCompleted, d.Status)
	}
	list, err := c.Paused(ctx)
	require.NoError(t, err)
	assert.Empty(t, list)
}
