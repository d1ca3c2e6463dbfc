package integration

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/coroutines"
	"github.com/gateflow/gateflow/runs"
)

// leanGate waits at one approval gate.
var leanGate = flow.Define("lean/gate", func(ctx *flow.Context, _ struct{}) (string, error) {
	d, err := ctx.Approval("ship", approval.Request{Approvers: []string{"alice"}})
	if err != nil {
		return "", err
	}
	return string(d.Outcome), nil
})

// TestWaitingRunsHoldTwoCoroutinesEach holds N runs at a gate in an in-process worker and
// counts the workflow coroutines (and, for the record, all goroutines) they add: each
// waiting run keeps its function and one signal listener (four before the listeners
// were merged).
func TestWaitingRunsHoldTwoCoroutinesEach(t *testing.T) {
	const n = 40
	queue := uniqueQueue("lean")
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, StopTimeout: time.Second}, leanGate)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue, Identity: "tester"})
	ctx := ctxT(t, 2*time.Minute)

	runtime.GC()
	coBefore, goBefore := coroutines.Count(), runtime.NumGoroutine()
	ids := make([]string, n)
	for i := range ids {
		run, err := c.Start(ctx, leanGate.Name(), struct{}{}, core.StartOptions{ID: fmt.Sprintf("%s-%d", queue, i)})
		require.NoError(t, err)
		ids[i] = run.ID
	}
	for _, id := range ids {
		eventually(t, c, id, "waiting at the gate", waitingFor("approval:ship"))
	}
	coHeld, goHeld := coroutines.Count()-coBefore, runtime.NumGoroutine()-goBefore
	t.Logf("%d waiting runs: %d workflow coroutines (%.2f per run), %d goroutines in all (%.2f per run)",
		n, coHeld, float64(coHeld)/n, goHeld, float64(goHeld)/n)
	assert.GreaterOrEqual(t, coHeld, n, "each waiting run holds at least its function's coroutine")
	assert.LessOrEqual(t, coHeld, 2*n, "each waiting run holds at most 2 coroutines")

	for _, id := range ids {
		_, err := c.Vote(ctx, id, approval.Vote{Gate: "ship", Kind: approval.Approve, By: "alice"})
		require.NoError(t, err)
	}
	for _, id := range ids {
		d, err := c.Wait(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	}
}
