package integration

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/runs"
)

var downFlow = flow.Define("test.worker.down", func(ctx *flow.Context, _ struct{}) (string, error) {
	d, err := ctx.Approval("go", approval.Request{})
	return d.By, err
})

// TestDecisionsWhileTheWorkerIsDown: with the run's only worker stopped, flowctl approvals
// lists the run as unknown with the reason and exits 1 (it printed an empty table and exit
// 0), and flowctl approve gives up after --decision-timeout with "submitted, not yet
// validated" and exit 7 (it blocked with no deadline). When a worker is back, the
// submitted vote is checked and counts, as the message said. (Issue 17.) The message and
// the exit code come from the error's type and from asking the server about the Update,
// so they do not depend on which error the SDK gives when the wait ends (issue 31: a
// "RST_STREAM ... CANCEL" gave exit 1 and a raw message while the vote counted later).
func TestDecisionsWhileTheWorkerIsDown(t *testing.T) {
	t.Parallel()
	queue := fmt.Sprintf("down-%d", time.Now().UnixNano())
	opts := flow.WorkerOptions{TaskQueue: queue, StopTimeout: time.Second}
	w := flow.NewWorker(shared.tc, opts, downFlow)
	require.NoError(t, w.Start())
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})
	ctx := ctxT(t, 2*time.Minute)
	run := queue + "-run"
	_, err := c.Start(ctx, downFlow.Name(), json.RawMessage(`{}`), core.StartOptions{ID: run})
	require.NoError(t, err)
	waitStatus(t, c, run, runs.StatusAwaitingApproval)
	r := flowctlRunOn(t, queue, "schedules")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "No schedules on task queue "+queue+" (flows declare them with flow.Schedule or a definition's schedules:).\n", r.stdout,
		"no schedules: a sentence, not a bare header")
	w.Stop()

	r = flowctlRunOn(t, queue, "approvals")
	assert.Equal(t, flowctl.ExitError, r.code, "stdout %s stderr %s", r.stdout, r.stderr)
	assert.Regexp(t, `(?m)^`+run+`\s+\?\s+\?\s+\?\s+\?\s+\?\s+unknown: `, r.stdout)
	// Approvals lists the open gates of every run of the namespace, whatever its queue, so
	// runs of other tests whose workers are stopped may be counted too.
	assert.Regexp(t, `^flowctl: [1-9][0-9]* run\(s\) awaiting approval could not be read \(is their worker running\?\)\n$`, r.stderr)

	r = flowctlRunOn(t, queue, "--decision-timeout", "2s", "approve", run, "go", "--as", "alice")
	assert.Equal(t, flowctl.ExitPending, r.code, "stdout %s stderr %s", r.stdout, r.stderr)
	assert.Equal(t, "flowctl: vote on go on run "+run+": submitted, not yet validated: the worker is not answering (no answer within 2s); "+
		"the Temporal server has queued it and the run will check it, and count it if it is valid, when a worker comes back "+
		"(unless the server drops it first: it keeps it in memory only, until a restart or until it unloads the run; "+
		"`flowctl show "+run+"` tells whether it counted)\n", r.stderr,
		"one line saying what will happen, whatever error the SDK gave when the wait ended")
	assert.Zero(t, countHistoryEvents(t, ctx, run, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED), "not counted yet")

	w2 := flow.NewWorker(shared.tc, opts, downFlow)
	require.NoError(t, w2.Start())
	t.Cleanup(w2.Stop)
	var by string
	require.NoError(t, shared.tc.GetWorkflow(ctx, run, "").Get(ctx, &by))
	assert.Equal(t, "alice", by, "the submitted vote was validated and counted once a worker was back")
}
