package integration

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/integration/testflows"
	"github.com/gateflow/gateflow/internal/searchattr"
)

func TestGuardLimitsEachStopTheRunWithAClearError(t *testing.T) {
	cases := []struct {
		flow  string
		input any
		err   string
		check func(t *testing.T, d *runs.Description)
	}{
		{"test.deep", testflows.DepthInput{}, "guard: child depth 3 exceeds the limit of 2 at step deeper",
			func(t *testing.T, d *runs.Description) {
				child := stepNamed(t, d.State.Steps, "deeper").Child
				require.NotNil(t, child)
				assert.Equal(t, runs.StatusFailed, child.Status)
				grandchild := stepNamed(t, child.Steps, "deeper").Child
				require.NotNil(t, grandchild, "depth 1 and 2 ran")
				require.Len(t, grandchild.Steps, 1)
				assert.Nil(t, grandchild.Steps[0].Child, "depth 3 never started")
			}},
		{"test.wide", nil, "guard: fan-out 3 exceeds the limit of 2 at step three",
			func(t *testing.T, d *runs.Description) {
				assert.Empty(t, d.State.Steps, "no step of the refused parallel call started")
			}},
		{"test.tokens", nil, "guard: tokens 1200 exceeds the limit of 1000 at step second",
			func(t *testing.T, d *runs.Description) {
				assert.Equal(t, int64(1200), d.State.Tokens.Total())
			}},
		{"test.walltime", nil, "guard: wall time",
			func(t *testing.T, d *runs.Description) {
				s := stepNamed(t, d.State.Steps, "too-late")
				assert.Equal(t, runs.StepFailed, s.Status)
				assert.Contains(t, s.Error, "exceeds the limit of 1s at step too-late")
			}},
	}
	for _, tc := range cases {
		t.Run(tc.flow, func(t *testing.T) {
			d := runFlow(t, tc.flow, tc.input)
			assert.Equal(t, runs.StatusFailed, d.Status)
			assert.Contains(t, d.Error, tc.err)
			tc.check(t, d)
		})
	}
}

func TestIncompatibleVersionFailsTheRunClearly(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	// Started as if by a client that knew version "0" of hello; this worker has "1".
	run, err := shared.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		TaskQueue:             shared.queue,
		TypedSearchAttributes: temporal.NewSearchAttributes(searchattr.VersionKey.ValueSet("0")),
	}, "hello", map[string]string{"name": "old"})
	require.NoError(t, err)
	d, err := shared.client.Wait(ctx, run.GetID())
	require.NoError(t, err)
	assert.Equal(t, runs.StatusFailed, d.Status)
	assert.Contains(t, d.Error, `run of hello was started with version "0", this worker has version "1"`)
	assert.Empty(t, d.State.Steps, "no step ran")
}

func TestCancellingARunKillsItsShellProcessGroupAndRunsOnError(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	pidFile := filepath.Join(t.TempDir(), "pid")
	run, err := shared.client.Start(ctx, "test.cancellable", testflows.FileInput{File: pidFile}, core.StartOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, err := os.Stat(pidFile); return err == nil }, 20*time.Second, 20*time.Millisecond)
	require.NoError(t, shared.tc.CancelWorkflow(ctx, run.ID, ""))
	d, err := shared.client.Wait(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCancelled, d.Status)
	assert.Equal(t, "Canceled", d.TemporalStatus)
	assert.Equal(t, runs.StepCancelled, stepNamed(t, d.State.Steps, "long").Status)
	assertProcessGone(t, pidFile)
	assert.Equal(t, []string{"cleanup"}, lines(t, pidFile+".cleanup"), "OnError ran once after the cancellation")
	assert.Equal(t, runs.StepCompleted, stepNamed(t, d.State.Steps, "cleanup").Status)
}

// A worker process killed with SIGKILL in the middle of a long step: a new worker retries
// the step after its heartbeat timeout and finishes the run; completed steps do not run
// again.
func TestWorkerKilledMidStepAnotherWorkerFinishesTheRun(t *testing.T) {
	queue := "crash"
	worker := startTestworker(t, queue)

	ctx := ctxT(t, 2*time.Minute)
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})
	file := filepath.Join(t.TempDir(), "log")
	run, err := c.Start(ctx, "test.crashy", testflows.FileInput{File: file}, core.StartOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return count(lines(t, file), "start") == 1 }, 30*time.Second, 20*time.Millisecond)
	require.NoError(t, worker.Process.Signal(syscall.SIGKILL))
	_ = worker.Wait()

	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue}, testflows.All()...)
	require.NoError(t, w.Start())
	defer w.Stop()
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	got := lines(t, file)
	assert.Equal(t, 1, count(got, "before"), "a completed step did not run again: %v", got)
	assert.Equal(t, 1, count(got, "after"), "%v", got)
	assert.GreaterOrEqual(t, count(got, "start"), 2, "the long step was retried: %v", got)
	long := stepNamed(t, d.State.Steps, "long")
	assert.Equal(t, runs.StepCompleted, long.Status)
	assert.GreaterOrEqual(t, long.Attempt, 2)
	assert.Equal(t, 1, stepNamed(t, d.State.Steps, "before").Attempt)
}

// TestThreeWorkerLossesDoNotUseUpAStepsAttempts: the worker running a step allowed three
// attempts is killed three times in a row; each loss is a heartbeat timeout, which Temporal
// counts as an attempt, but gateflow does not count it against the step (worker_losses.go),
// so the fourth attempt runs and the run completes.
func TestThreeWorkerLossesDoNotUseUpAStepsAttempts(t *testing.T) {
	queue := "crash-thrice"
	worker := startTestworker(t, queue)
	ctx := ctxT(t, 3*time.Minute)
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})
	file := filepath.Join(t.TempDir(), "log")
	run, err := c.Start(ctx, "test.crashy", testflows.FileInput{File: file}, core.StartOptions{})
	require.NoError(t, err)
	for kill := 1; kill <= 3; kill++ {
		require.Eventually(t, func() bool { return count(lines(t, file), "start") == kill }, 60*time.Second, 20*time.Millisecond,
			"attempt %d of the long step starts", kill)
		require.NoError(t, worker.Process.Signal(syscall.SIGKILL))
		_ = worker.Wait()
		worker = startTestworker(t, queue)
	}
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	got := lines(t, file)
	assert.Equal(t, 4, count(got, "start"), "three lost attempts, then one that ends: %v", got)
	// (A killed worker's shell goes on and may still write "end".)
	assert.Equal(t, 1, count(got, "before"), "%v", got)
	long := stepNamed(t, d.State.Steps, "long")
	assert.Equal(t, runs.StepCompleted, long.Status)
	assert.Equal(t, 4, long.Attempt, "the attempt that completed is Temporal's fourth")
}
