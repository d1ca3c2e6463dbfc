package integration

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/devserver"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/runs"
	"github.com/gateflow/gateflow/signals"
)

// notesOf is a schema-valid answer to the ship example's release-notes input of about n
// bytes of JSON.
func notesOf(n int) json.RawMessage {
	b, _ := json.Marshal(examples.ReleaseNotes{Summary: strings.Repeat("s", n), Risk: "low"})
	return b
}

// TestJunkSignalsAndHugeAnswersDoNotHurtARun is issue 16's "28 refused 1.9 MB Signals no
// longer terminate a run; a 1.5 MB answer is refused with the limit; the run still
// completes": the dev server refuses every payload over devserver.BlobSizeLimit at the
// frontend, so none of the junk enters history; a signal under that but over
// signals.MaxPayloadBytes is refused by the run and kept without its payload; answers are
// refused by the client, the server or the run's Validator, each with its limit; then
// genuine decisions complete the run.
func TestJunkSignalsAndHugeAnswersDoNotHurtARun(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	c := shared.client
	// A version of its own: keyed signals stay in their mailbox for a day, so a fixed one
	// would meet the deploy-done of an earlier run (-count=N).
	version := fmt.Sprintf("16.5.%d", time.Now().UnixNano())
	run, err := c.Start(ctx, "ship", examples.ShipInput{Version: version}, core.StartOptions{})
	require.NoError(t, err)
	eventually(t, c, run.ID, "waits for release notes", waitingFor("input:release-notes"))

	// 28 Signals of 1.9 MB (a raw SDK client, as an attacker would send them): each is
	// refused by the frontend before it reaches the run's history.
	junk := signals.Envelope{Name: "deploy-done", Key: version, ID: "junk", Sender: "mallory",
		Payload: json.RawMessage(`"` + strings.Repeat("j", 1_900_000) + `"`)}
	start := time.Now()
	for i := range 28 {
		err := shared.tc.SignalWorkflow(ctx, run.ID, "", protocol.SignalName, junk)
		var inv *serviceerror.InvalidArgument
		require.Truef(t, errors.As(err, &inv), "signal %d: want InvalidArgument from the server, got %v", i, err)
		assert.Contains(t, err.Error(), "Blob data size exceeds limit")
	}
	t.Logf("28 signals of 1.9 MB refused by the server in %s", time.Since(start).Round(time.Millisecond))
	vote := approval.Vote{Gate: "ship", Kind: approval.Reject, By: "mallory", Comment: strings.Repeat("c", 1_900_000)}
	require.Error(t, shared.tc.SignalWorkflow(ctx, run.ID, "", protocol.SignalApproval, vote), "a 1.9 MB vote Signal is refused too")

	// Under the server's limit but over a signal's: the run refuses it and keeps no payload.
	mid := junk
	mid.ID, mid.Payload = "mid", json.RawMessage(`"`+strings.Repeat("m", 300<<10)+`"`)
	require.NoError(t, shared.tc.SignalWorkflow(ctx, run.ID, "", protocol.SignalName, mid))
	d := eventually(t, c, run.ID, "the 300 KiB signal is refused", func(d *runs.Description) bool { return len(d.State.Refused) == 1 })
	assert.Contains(t, d.State.Refused[0].Reason, "more than the limit of 262144")
	raw, err := json.Marshal(d.State)
	require.NoError(t, err)
	assert.Less(t, len(raw), 32<<10, "the state keeps nothing of the refused payload")

	// A 1.5 MB schema-valid answer: flowclient.Client (and so flowctl) refuses it before sending;
	// a raw Update is refused by the server; a 100 KiB one, under the server's limit, by the
	// run's Validator with the request's limit.
	huge := notesOf(1_500_000)
	_, err = c.Answer(ctx, flowclient.AnswerRequest{Run: run.ID, Name: "release-notes", Data: huge, By: "carol"})
	var ie *core.InputError
	require.ErrorAs(t, err, &ie)
	assert.ErrorContains(t, err, "the limit is 262144")
	rawAnswer := func(data json.RawMessage) error {
		h, err := shared.tc.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: run.ID, UpdateName: protocol.UpdateInput,
			Args: []any{protocol.InputAnswer{Name: "release-notes", Data: data, By: "carol"}}, WaitForStage: client.WorkflowUpdateStageCompleted})
		if err != nil {
			return err
		}
		return h.Get(ctx, nil)
	}
	err = rawAnswer(huge)
	require.Error(t, err)
	var inv *serviceerror.InvalidArgument
	require.ErrorAs(t, err, &inv, "the server refuses the 1.5 MB Update")
	assert.Contains(t, err.Error(), "the limit is 524288 (limit.blobSize.error)")
	err = rawAnswer(notesOf(100 << 10))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `input "release-notes": the answer is 102427 bytes of JSON; the limit is 65536 (max_answer_bytes)`)
	_, err = c.Answer(ctx, flowclient.AnswerRequest{Run: run.ID, Name: "release-notes", Data: notesOf(100 << 10), By: "carol"})
	refused(t, err, "the limit is 65536")
	assert.Equal(t, 0, updateEvents(t, run.ID), "no refused answer was accepted into history")

	// The run is unharmed: genuine decisions complete it.
	d, err = c.Describe(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusAwaitingInput, d.Status)
	_, err = c.Answer(ctx, flowclient.AnswerRequest{Run: run.ID, Name: "release-notes", Data: json.RawMessage(`{"summary":"Limits on everything","risk":"low"}`), By: "carol"})
	require.NoError(t, err)
	eventually(t, c, run.ID, "waits for approval", waitingFor("approval:ship"))
	for _, by := range []string{"alice", "bob"} {
		_, err = c.Vote(ctx, run.ID, approval.Vote{Gate: "ship", Kind: approval.Approve, By: by})
		require.NoError(t, err)
	}
	eventually(t, c, run.ID, "waits for the deploy", waitingFor("signal:deploy-done/"+version))
	_, err = c.Signal(ctx, "", signals.Envelope{Name: "deploy-done", Key: version, Payload: json.RawMessage(`{"environment":"prod"}`)})
	require.NoError(t, err)
	d, err = c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)

	signalsInHistory := 0
	hist := shared.tc.GetWorkflowHistory(ctx, run.ID, "", false, 0)
	for hist.HasNext() {
		ev, err := hist.Next()
		require.NoError(t, err)
		if a := ev.GetWorkflowExecutionSignaledEventAttributes(); a != nil {
			signalsInHistory++
			assert.LessOrEqual(t, a.GetInput().Size(), devserver.BlobSizeLimit)
		}
	}
	assert.Equal(t, 2, signalsInHistory, "only the 300 KiB signal and the deploy signal entered history")
}
