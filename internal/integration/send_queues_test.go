package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/integration/testflows"
	"github.com/gateflow/gateflow/runs"
)

// A run's ctx.Send to a key reaches a run waiting on that key on another task queue (the
// mailboxes are per queue; the sender posts to each queue's that has waiting runs), once.
func TestSendReachesARunWaitingOnAKeyOnAnotherQueue(t *testing.T) {
	queue := fmt.Sprintf("send-b-%d", time.Now().UnixNano())
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, StopTimeout: 5 * time.Second}, testflows.SendFlows()...)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	onB := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue, Identity: "tester"})

	key := fmt.Sprintf("k-%d", time.Now().UnixNano())
	waiter := sendStart(t, onB, testflows.SendWaiter.Name(), testflows.SendIn{Key: key})
	eventually(t, onB, waiter, "the waiter on queue B waits on the key", waitingFor("signal:note/"+key))

	sender := sendStart(t, shared.client, testflows.Sender.Name(), testflows.SendIn{Key: key, Text: "across queues"})
	d := sendWait(t, shared.client, sender)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)

	out := sendWaiterOut(t, sendWait(t, onB, waiter))
	assert.Equal(t, []string{"across queues"}, out.Got, "the run on queue B got it exactly once")
	require.NotNil(t, out.First)
	assert.Equal(t, sender, out.First.Sender)
}
