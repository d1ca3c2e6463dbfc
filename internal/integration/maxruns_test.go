package integration

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/integration/testflows"
)

func TestMaxStepsRefusesTheStepPastTheLimit(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	c := shared.client
	file := filepath.Join(t.TempDir(), "log")
	run, err := c.Start(ctx, "test.maxsteps", testflows.FileInput{File: file}, core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusFailed, d.Status)
	assert.Contains(t, d.State.Error, "step four: guard: steps 4 exceeds the limit of 3 at step four")
	assert.Equal(t, 1, d.State.Attempt, "a guard refusal is not attempted again")
	assert.Equal(t, 3, d.State.Guards.MaxSteps)
	var four *runs.Step
	for i := range d.State.Steps {
		if d.State.Steps[i].Name == "four" {
			four = &d.State.Steps[i]
		}
	}
	require.NotNil(t, four)
	assert.Equal(t, runs.StepFailed, four.Status)
	assert.Equal(t, []string{"one", "cleanup"}, lines(t, file), "the refused step never ran; the cleanup did")
}

// gatedRun starts name and waits until it waits for its approval.
func gatedRun(t *testing.T, name string) *core.Run {
	t.Helper()
	run, err := shared.client.Start(ctxT(t, 10*time.Second), name, nil, core.StartOptions{})
	require.NoError(t, err)
	eventually(t, shared.client, run.ID, "waits for its approval", waitingFor("approval:gate"))
	return run
}

func approve(t *testing.T, id string) {
	t.Helper()
	_, err := shared.client.Vote(ctxT(t, 10*time.Second), id, approval.Vote{Gate: "gate", Kind: approval.Approve, By: "alice"})
	require.NoError(t, err)
}

func TestMaxRunsRefuse(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	c := shared.client
	first := gatedRun(t, "test.maxruns.refuse")
	_, err := c.Start(ctx, "test.maxruns.refuse", nil, core.StartOptions{})
	var mr *flowclient.MaxRunsError
	require.True(t, errors.As(err, &mr), "%v", err)
	assert.Equal(t, "start test.maxruns.refuse: the flow allows at most 1 live runs (max runs, on overflow refuse) and has 1: "+first.ID, err.Error())
	assert.Equal(t, []string{first.ID}, mr.Live)

	eventually(t, c, first.ID, "the first run is unaffected", waitingFor("approval:gate"))
	approve(t, first.ID)
	d, err := c.Wait(ctx, first.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	require.Eventually(t, func() bool {
		run, err := c.Start(ctx, "test.maxruns.refuse", nil, core.StartOptions{})
		if err == nil {
			require.NoError(t, c.Cancel(ctx, flowclient.CancelRequest{Run: run.ID, Reason: "test over"}))
		}
		return err == nil
	}, 20*time.Second, 200*time.Millisecond, "a start is admitted once the first run ended")
}

func TestMaxRunsQueue(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	c := shared.client
	first := gatedRun(t, "test.maxruns.queue")
	second, err := c.Start(ctx, "test.maxruns.queue", nil, core.StartOptions{})
	require.NoError(t, err)
	d := eventually(t, c, second.ID, "the second run waits for the flow's permit", waitingFor("permit:flow:test.maxruns.queue"))
	assert.Equal(t, runs.StatusPending, d.Status)

	approve(t, first.ID)
	d, err = c.Wait(ctx, first.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	eventually(t, c, second.ID, "the second run runs once the first ended", waitingFor("approval:gate"))
	approve(t, second.ID)
	d, err = c.Wait(ctx, second.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, d.Status, d.Error)

	cat, err := c.Workflows(ctx)
	require.NoError(t, err)
	info, ok := cat.Lookup("test.maxruns.queue")
	require.True(t, ok)
	assert.Equal(t, 1, info.MaxRuns, "published in the catalog")
	assert.Equal(t, core.OverflowQueue, info.OnOverflow)
}

func TestMaxRunsReplace(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	c := shared.client
	first := gatedRun(t, "test.maxruns.replace")
	second, err := c.Start(ctx, "test.maxruns.replace", nil, core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, first.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCancelled, d.Status)
	assert.Contains(t, d.State.Error, "replaced by "+second.ID)

	eventually(t, c, second.ID, "the second run runs", waitingFor("approval:gate"))
	approve(t, second.ID)
	d, err = c.Wait(ctx, second.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, d.Status, d.Error)
}
