package integration

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/internal/integration/testflows"
)

// TestForEachOfFiveWithMaxParallelTwo: never more than 2 items in flight, checked from
// the items' own start/end log, and the results come back in input order.
func TestForEachOfFiveWithMaxParallelTwo(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	file := filepath.Join(t.TempDir(), "log")
	in := testflows.FanoutInput{File: file, Max: 2, Commands: []string{
		"sleep 0.6; echo a", "sleep 0.2; echo b", "sleep 0.4; echo c", "echo d", "sleep 0.3; echo e"}}
	run, err := shared.client.Start(ctx, "test.fanout", in, core.StartOptions{})
	require.NoError(t, err)
	d, err := shared.client.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	var out []string
	require.NoError(t, json.Unmarshal(d.Result, &out))
	for i, want := range []string{"a", "b", "c", "d", "e"} {
		assert.Equal(t, want, strings.TrimSpace(out[i]), "result %d in input order", i)
	}
	running, most, ends := 0, 0, 0
	words := lines(t, file)
	for i := 0; i+1 < len(words); i += 2 {
		switch words[i] {
		case "start":
			running++
		case "end":
			running--
			ends++
		}
		most = max(most, running)
	}
	assert.Equal(t, 2, most, "never more than 2 at once, and both slots were used")
	assert.Equal(t, 5, ends)
	assert.Equal(t, runs.StepCompleted, stepLabelled(t, d.State.Steps, "items/5/run").Status)
}

// TestForEachHaltKillsTheItemsInFlight: the first failure cancels the item in flight (its
// process is gone) and starts no more.
func TestForEachHaltKillsTheItemsInFlight(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	dir := t.TempDir()
	pid := filepath.Join(dir, "pid")
	in := testflows.FanoutInput{File: filepath.Join(dir, "log"), Max: 2, Policy: flow.Halt, Commands: []string{
		"echo $$ > " + pid + "; exec sleep 60", "sleep 1; exit 4", "echo never"}}
	run, err := shared.client.Start(ctx, "test.fanout", in, core.StartOptions{})
	require.NoError(t, err)
	d, err := shared.client.Wait(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusFailed, d.Status)
	assert.Contains(t, d.Error, "foreach items: step 2: exit code 4")
	assert.Contains(t, d.Error, "cancelled: 1, 3")
	assert.Equal(t, runs.StepCancelled, stepLabelled(t, d.State.Steps, "items/1/run").Status)
	assert.NotContains(t, lines(t, in.File), "2", "item 3 never started")
	assertProcessGone(t, pid)
}

// TestForEachChildOfTwoThousandItems: 2,000 child runs, 200 at a time, all complete. Past
// 1,000 items the fan-out runs through the runner, which continues as new every 1,000
// items: the parent's history stays tiny and the runner's below Temporal's limits (51,200
// events, 50 MB per history), whatever the number of items.
func TestForEachChildOfTwoThousandItems(t *testing.T) {
	ctx := ctxT(t, 5*time.Minute)
	in := make([]int, 2000)
	want := 0
	for i := range in {
		in[i] = i
		want += 2 * i
	}
	run, err := shared.client.Start(ctx, "test.fanout.many", in, core.StartOptions{})
	require.NoError(t, err)
	d, err := shared.client.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	var sum int
	require.NoError(t, json.Unmarshal(d.Result, &sum))
	assert.Equal(t, want, sum)
	require.Len(t, d.State.Steps, 1, "the parent records the fan-out as one step")
	assert.Equal(t, "2000 of 2000 items completed", d.State.Steps[0].Output)
	item, err := shared.client.Describe(ctx, run.ID+"/double/2000")
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, item.Status, "the last item ran as its own run")

	count := func(id, runID string) (events, size int) {
		hist := shared.tc.GetWorkflowHistory(ctx, id, runID, false, 0)
		for hist.HasNext() {
			ev, err := hist.Next()
			require.NoError(t, err)
			events++
			size += len(ev.String())
		}
		return events, size
	}
	pe, _ := count(run.ID, "")
	re, rs := count(run.ID+"/double", "")
	t.Logf("parent history: %d events; the runner's last run: %d events, about %d KB", pe, re, rs/1024)
	assert.Less(t, pe, 100, "the parent's history does not grow with the items")
	assert.Less(t, re, 51200/4, "each run of the runner stays well under the event limit")
	assert.Less(t, rs, 12<<20, "and under the size limit")
}

// TestBranchWaitsForAnApprovalWhileStepsRun: the handler's steps run while a branch waits
// for a person; the vote closes the branch.
func TestBranchWaitsForAnApprovalWhileStepsRun(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	file := filepath.Join(t.TempDir(), "log")
	run, err := shared.client.Start(ctx, "test.branch.gate", testflows.FileInput{File: file}, core.StartOptions{})
	require.NoError(t, err)
	eventually(t, shared.client, run.ID, "the steps ran while the gate is open", func(d *runs.Description) bool {
		return len(lines(t, file)) == 2 && d.Status == runs.StatusAwaitingApproval
	})
	_, err = shared.client.Vote(ctx, run.ID, approval.Vote{Gate: "ship", Kind: approval.Approve, By: "alice"})
	require.NoError(t, err)
	d, err := shared.client.Wait(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.Equal(t, `"approved"`, string(d.Result))
	assert.Equal(t, runs.StepCompleted, stepLabelled(t, d.State.Steps, "review/ship").Status)
}

// TestRaceCancelsTheLoser: the fast branch wins and the slow one's process is gone.
func TestRaceCancelsTheLoser(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	pid := filepath.Join(t.TempDir(), "pid")
	run, err := shared.client.Start(ctx, "test.race", testflows.FileInput{File: pid}, core.StartOptions{})
	require.NoError(t, err)
	d, err := shared.client.Wait(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.Equal(t, "1", string(d.Result), "the second branch won")
	assert.Equal(t, runs.StepCancelled, stepLabelled(t, d.State.Steps, "first/1/slow").Status)
	assertProcessGone(t, pid)
}

func stepLabelled(t *testing.T, steps []runs.Step, label string) runs.Step {
	t.Helper()
	for _, s := range steps {
		if s.Label() == label {
			return s
		}
	}
	t.Fatalf("no step %s", label)
	return runs.Step{}
}
