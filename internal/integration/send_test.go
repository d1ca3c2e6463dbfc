package integration

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/integration/testflows"
	"github.com/gateflow/gateflow/signals"
)

// sendStart starts the flow name with in and fails the test if it cannot.
func sendStart(t *testing.T, c *flowclient.Client, name string, in any) string {
	t.Helper()
	run, err := c.Start(ctxT(t, 10*time.Second), name, in, core.StartOptions{})
	require.NoError(t, err)
	return run.ID
}

// sendWait waits for the run to end and returns how it ended.
func sendWait(t *testing.T, c *flowclient.Client, run string) *runs.Description {
	t.Helper()
	d, err := c.Wait(ctxT(t, time.Minute), run)
	require.NoError(t, err)
	return d
}

func sendWaiterOut(t *testing.T, d *runs.Description) testflows.WaiterOut {
	t.Helper()
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	var out testflows.WaiterOut
	require.NoError(t, json.Unmarshal(d.Result, &out))
	return out
}

func TestSendReachesAWaitingRunOnce(t *testing.T) {
	c := shared.client
	waiter := sendStart(t, c, testflows.SendWaiter.Name(), testflows.SendIn{})
	eventually(t, c, waiter, "the waiter waits", waitingFor("signal:note"))
	sender := sendStart(t, c, testflows.Sender.Name(), testflows.SendIn{Run: waiter, Text: "hello"})

	d := sendWait(t, c, sender)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	s := d.State.Steps[0]
	assert.Equal(t, runs.KindSend, s.Kind)
	assert.Equal(t, runs.StepCompleted, s.Status)
	assert.Equal(t, `to run `+waiter+`: {"text":"hello"}`, s.Output)

	out := sendWaiterOut(t, sendWait(t, c, waiter))
	assert.Equal(t, []string{"hello"}, out.Got, "delivered exactly once")
	assert.Contains(t, out.Second, "nothing arrived within 3s")
	require.NotNil(t, out.First)
	assert.Equal(t, sender, out.First.Sender, "the sender is the sending run")
	assert.Equal(t, sender+"/note", out.First.ID, "the sending run and the step's activity ID")
}

func TestSendReachesEveryRunWaitingOnAKey(t *testing.T) {
	c := shared.client
	key := fmt.Sprintf("k-%d", time.Now().UnixNano())
	waiters := []string{
		sendStart(t, c, testflows.SendWaiter.Name(), testflows.SendIn{Key: key}),
		sendStart(t, c, testflows.SendWaiter.Name(), testflows.SendIn{Key: key}),
	}
	for _, w := range waiters {
		eventually(t, c, w, "the waiter waits on the key", waitingFor("signal:note/"+key))
	}
	sender := sendStart(t, c, testflows.Sender.Name(), testflows.SendIn{Key: key, Text: "to all"})
	d := sendWait(t, c, sender)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.Equal(t, `to mailbox signal:note/`+key+`: {"text":"to all"}`, d.State.Steps[0].Output)

	for _, w := range waiters {
		out := sendWaiterOut(t, sendWait(t, c, w))
		assert.Equal(t, []string{"to all"}, out.Got, "%s got it exactly once", w)
		require.NotNil(t, out.First)
		assert.Equal(t, sender, out.First.Sender)
		assert.Equal(t, sender+"/note", out.First.ID)
		assert.Equal(t, key, out.First.Key)
	}
}

func TestCancelRunCancelsAnotherRun(t *testing.T) {
	c := shared.client
	victim := sendStart(t, c, testflows.SendWaiter.Name(), testflows.SendIn{})
	eventually(t, c, victim, "the victim waits", waitingFor("signal:note"))
	canceller := sendStart(t, c, testflows.Canceller.Name(), testflows.SendIn{Run: victim, Reason: "superseded"})

	d := sendWait(t, c, canceller)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	s := d.State.Steps[0]
	assert.Equal(t, "cancel "+victim, s.Name)
	assert.Equal(t, runs.KindSend, s.Kind)
	v := sendWait(t, c, victim)
	assert.Equal(t, runs.StatusCancelled, v.Status)
	assert.Equal(t, "Canceled", v.TemporalStatus)
	assert.Equal(t, "cancelled by "+canceller+": superseded", v.State.Error, "the reason came first")

	// The victim has ended: cancelling it again is a clear failure of the step.
	again := sendWait(t, c, sendStart(t, c, testflows.Canceller.Name(), testflows.SendIn{Run: victim}))
	assert.Equal(t, runs.StatusFailed, again.Status)
	assert.Contains(t, again.Error, "step cancel "+victim+": run "+victim+" is not found or has ended")
	nobody := sendWait(t, c, sendStart(t, c, testflows.Canceller.Name(), testflows.SendIn{Run: "no-such-run"}))
	assert.Equal(t, runs.StatusFailed, nobody.Status)
	assert.Contains(t, nobody.Error, "run no-such-run is not found or has ended")
}

func TestDetachedChildSurvivesItsParentsCancellation(t *testing.T) {
	c := shared.client
	ctx := ctxT(t, time.Minute)
	parent := sendStart(t, c, testflows.DetachingParent.Name(), testflows.SendIn{})
	kid := parent + "/kid"
	eventually(t, c, kid, "the detached child waits", waitingFor("signal:release"))
	require.NoError(t, c.Cancel(ctx, flowclient.CancelRequest{Run: parent, Reason: "test"}))

	p := sendWait(t, c, parent)
	assert.Equal(t, runs.StatusCancelled, p.Status)
	s := p.State.Steps[0]
	assert.Equal(t, runs.StepCancelled, s.Status)
	assert.Equal(t, "cancelled; the detached child run "+kid+" goes on", s.Error)
	d, err := c.Describe(ctx, kid)
	require.NoError(t, err)
	assert.Equal(t, "Running", d.TemporalStatus, "cancelling the parent did not cancel the detached child")

	_, err = c.Signal(ctx, kid, signals.Envelope{Name: "release", Payload: json.RawMessage(`{"text":"go"}`)})
	require.NoError(t, err)
	k := sendWait(t, c, kid)
	require.Equal(t, runs.StatusCompleted, k.Status, k.Error)
	assert.JSONEq(t, `"released: go"`, string(k.Result), "the child completed after its parent was cancelled")
}

func TestUnservedChildFailsItsStepAtOnce(t *testing.T) {
	c := shared.client
	start := time.Now()
	parent := sendStart(t, c, testflows.UnservedParent.Name(), testflows.SendIn{})
	d := sendWait(t, c, parent)
	assert.Less(t, time.Since(start), 10*time.Second, "at once, not after a timeout")
	assert.Equal(t, runs.StatusFailed, d.Status)
	assert.Contains(t, d.Error, "step orphan: child flow test.send.unserved: no worker on task queue "+shared.queue+" serves it")
	s := d.State.Steps[0]
	assert.Equal(t, runs.StepFailed, s.Status)
	assert.Nil(t, s.Child, "no child was started")
	_, err := c.Describe(ctxT(t, 10*time.Second), parent+"/orphan")
	assert.Error(t, err, "no child run exists")
}

func TestChildTagsSendTheChildToTaggedWorkers(t *testing.T) {
	queue := fmt.Sprintf("childtags-%d", time.Now().UnixNano())
	plain := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, Identity: "plain-worker"}, testflows.SendFlows()...)
	require.NoError(t, plain.Start())
	defer plain.Stop()
	gpu := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, Identity: "gpu-worker", Tags: []string{"gpu"}}, testflows.SendFlows()...)
	require.NoError(t, gpu.Start())
	defer gpu.Stop()
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})

	d := sendWait(t, c, sendStart(t, c, testflows.TaggedParent.Name(), testflows.SendIn{Tags: []string{"gpu"}}))
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.JSONEq(t, `"`+queue+`@gpu"`, string(d.Result), "the child ran on the gpu worker's queue")

	start := time.Now()
	d = sendWait(t, c, sendStart(t, c, testflows.TaggedParent.Name(), testflows.SendIn{Tags: []string{"tpu"}}))
	assert.Less(t, time.Since(start), 10*time.Second, "at once")
	assert.Equal(t, runs.StatusFailed, d.Status)
	assert.Contains(t, d.Error, "child flow test.send.tagged-kid: no worker on task queue "+queue+"@tpu serves it")
}
