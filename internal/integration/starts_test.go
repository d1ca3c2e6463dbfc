package integration

import (
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/internal/integration/testflows"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/signals"
)

func TestOnceStartsOnceAcrossWorkersAndRestartOnceStartsAgain(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	queue := "once-" + strconv.FormatInt(time.Now().UnixNano(), 36) // -count=N runs anew
	id := protocol.OnceID("test.once", queue)

	// Two workers starting together start the flow once.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	workers := make([]*flow.Worker, 2)
	for i := range workers {
		workers[i] = flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, StopTimeout: time.Second}, testflows.Once)
		wg.Go(func() { errs[i] = workers[i].Start() })
	}
	wg.Wait()
	for i, w := range workers {
		require.NoError(t, errs[i])
		defer w.Stop()
	}
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue, Identity: "tester"})
	d, err := c.Wait(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.Equal(t, "once", d.CreatedBy)
	first := runIDs(t, id, 1) // one run of the once start
	var out string
	require.NoError(t, shared.tc.GetWorkflow(ctx, id, "").Get(ctx, &out))
	assert.Equal(t, "once:boot", out)

	// A worker restarted does not start the ended run again.
	w3 := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, StopTimeout: time.Second}, testflows.Once)
	require.NoError(t, w3.Start())
	w3.Stop()
	assert.Equal(t, first, runIDs(t, id, 1), "a restarted worker starts nothing")

	// RestartOnce starts a new run with the same ID.
	again, err := c.RestartOnce(ctx, "test.once")
	require.NoError(t, err)
	assert.Equal(t, id, again.ID)
	assert.NotEqual(t, first[0], again.RunID)
	d, err = c.Wait(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	runIDs(t, id, 2)

	// flowctl start --once-again does the same; it takes no other start options.
	r := run(t, queue, "start", "test.once", "--once-again", "--wait")
	require.Equal(t, 0, r.code, r.stderr)
	runIDs(t, id, 3)
	r = run(t, queue, "start", "test.once", "--once-again", "--input", "{}")
	assert.Equal(t, flowctl.ExitUsage, r.code, r.stderr)
	assert.Contains(t, r.stderr, "--input cannot be given with it")

	_, err = c.RestartOnce(ctx, "test.trigger.source")
	var uerr *core.UnknownWorkflowError
	assert.ErrorAs(t, err, &uerr, "the once queue does not serve it")
	_, err = shared.client.RestartOnce(ctx, "test.trigger.source")
	var ierr *core.InputError
	assert.ErrorAs(t, err, &ierr, "a flow without a once start")
}

// runIDs waits until want closed executions have the workflow ID id and none runs, and
// returns their run IDs.
func runIDs(t *testing.T, id string, want int) []string {
	t.Helper()
	ctx := ctxT(t, 30*time.Second)
	var ids []string
	require.Eventually(t, func() bool {
		resp, err := shared.tc.ListWorkflow(ctx, listRequest("WorkflowId = '"+id+"'"))
		if err != nil {
			return false
		}
		ids = ids[:0]
		for _, e := range resp.GetExecutions() {
			if e.GetStatus() == enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
				return false
			}
			ids = append(ids, e.GetExecution().GetRunId())
		}
		return len(ids) == want
	}, 20*time.Second, 100*time.Millisecond, "%d closed runs with the ID %s", want, id)
	return ids
}

func TestTriggerCompletedRunStartsOnDoneWithItsOutput(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	c := shared.client
	run, err := c.Start(ctx, "test.trigger.source", testflows.SourceInput{Value: "v1"}, core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)

	done := protocol.TriggeredID("test.trigger.ondone", run.ID, run.RunID)
	dd, err := c.Wait(ctx, done)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, dd.Status, dd.Error)
	assert.Equal(t, "trigger", dd.CreatedBy)
	var out string
	require.NoError(t, shared.tc.GetWorkflow(ctx, done, "").Get(ctx, &out))
	assert.Equal(t, "done:v1", out)

	// Not the WhenFailed flow; the flow whose input does not fit is refused, clearly.
	_, err = c.Describe(ctx, protocol.TriggeredID("test.trigger.onfailed", run.ID, run.RunID))
	var nf *flowclient.RunNotFoundError
	assert.ErrorAs(t, err, &nf)
	_, err = c.Describe(ctx, protocol.TriggeredID("test.trigger.mismatch", run.ID, run.RunID))
	assert.ErrorAs(t, err, &nf)
	assert.Contains(t, activityFailures(t, run.ID), "start test.trigger.mismatch, triggered by run "+run.ID)
}

// activityFailures joins the messages of the failed activities in the history of run id.
func activityFailures(t *testing.T, id string) string {
	t.Helper()
	ctx := ctxT(t, 30*time.Second)
	it := shared.tc.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var msgs string
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		if a := e.GetActivityTaskFailedEventAttributes(); a != nil {
			msgs += a.GetFailure().GetMessage() + "\n"
		}
	}
	return msgs
}

func TestTriggerFailedRunStartsOnFailedOnly(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	c := shared.client
	run, err := c.Start(ctx, "test.trigger.source", testflows.SourceInput{Value: "v2", Fail: true}, core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusFailed, d.Status)

	failed := protocol.TriggeredID("test.trigger.onfailed", run.ID, run.RunID)
	fd, err := c.Wait(ctx, failed)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, fd.Status, fd.Error)
	var out string
	require.NoError(t, shared.tc.GetWorkflow(ctx, failed, "").Get(ctx, &out))
	assert.Equal(t, "failed:v2", out)
	for _, other := range []string{"test.trigger.ondone", "test.trigger.mismatch"} {
		_, err = c.Describe(ctx, protocol.TriggeredID(other, run.ID, run.RunID))
		var nf *flowclient.RunNotFoundError
		assert.ErrorAs(t, err, &nf, other)
	}
}

func TestSignalStartStartsOneRunPerKeyAndDeliversThePayload(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	c := shared.client
	sfx := "-" + strconv.FormatInt(time.Now().UnixNano(), 36) // keys start one run ever
	send := func(order, item string) (*core.Run, error) {
		order += sfx
		b, err := json.Marshal(testflows.OrderPlaced{Order: order, Item: item})
		require.NoError(t, err)
		return c.SignalStart(ctx, "test.signal.started", signals.Envelope{Name: "order-placed", Key: order, Payload: b})
	}
	r1, err := send("o-1", "apple")
	require.NoError(t, err)
	assert.Equal(t, protocol.SignalStartID("test.signal.started", "order-placed", "o-1"+sfx), r1.ID)
	r2, err := send("o-2", "pear")
	require.NoError(t, err)
	assert.NotEqual(t, r1.ID, r2.ID)
	again, err := send("o-1", "banana")
	require.NoError(t, err)
	assert.Equal(t, r1.RunID, again.RunID, "the same key reaches the same run")

	var out string
	require.NoError(t, shared.tc.GetWorkflow(ctx, r1.ID, "").Get(ctx, &out))
	assert.Equal(t, "o-1"+sfx+":apple,banana", out)
	d, err := c.Describe(ctx, r1.ID)
	require.NoError(t, err)
	assert.Equal(t, "tester", d.CreatedBy)
	runIDs(t, r1.ID, 1)

	// A key starts one run: after it ended, its key is refused.
	_, err = send("o-1", "cherry")
	var exists *flowclient.RunExistsError
	require.ErrorAs(t, err, &exists)
	assert.Contains(t, exists.Error(), "a key starts one run")

	// o-2 is still waiting for its second signal; finish it.
	_, err = send("o-2", "plum")
	require.NoError(t, err)
	require.NoError(t, shared.tc.GetWorkflow(ctx, r2.ID, "").Get(ctx, &out))
	assert.Equal(t, "o-2"+sfx+":pear,plum", out)

	// Refusals before anything starts.
	_, err = c.SignalStart(ctx, "test.signal.started", signals.Envelope{Name: "other", Key: "k"})
	var ierr *core.InputError
	assert.ErrorAs(t, err, &ierr)
	_, err = c.SignalStart(ctx, "test.signal.started", signals.Envelope{Name: "order-placed", Key: "k", Payload: json.RawMessage(`42`)})
	assert.ErrorAs(t, err, &ierr, "a payload the input type refuses")
	assert.False(t, errors.As(err, &exists))
}
