package integration

import (
	"encoding/json"
	"errors"
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
	"github.com/gateflow/gateflow/internal/integration/testflows"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/signals"
)

// eventually waits until the run's state satisfies cond.
func eventually(t *testing.T, c *flowclient.Client, run string, what string, cond func(*runs.Description) bool) *runs.Description {
	t.Helper()
	var d *runs.Description
	require.Eventually(t, func() bool {
		var err error
		d, err = c.Describe(ctxT(t, 10*time.Second), run)
		return err == nil && d.State != nil && cond(d)
	}, 30*time.Second, 50*time.Millisecond, what)
	return d
}

func waitingFor(what string) func(*runs.Description) bool {
	return func(d *runs.Description) bool {
		for _, w := range d.State.Waiting {
			if w == what {
				return true
			}
		}
		return false
	}
}

// updateEvents counts the Update events in a run's history.
func updateEvents(t *testing.T, run string) int {
	t.Helper()
	n := 0
	hist := shared.tc.GetWorkflowHistory(ctxT(t, time.Minute), run, "", false, 0)
	for hist.HasNext() {
		ev, err := hist.Next()
		require.NoError(t, err)
		if ev.GetWorkflowExecutionUpdateAcceptedEventAttributes() != nil {
			n++
		}
	}
	return n
}

func refused(t *testing.T, err error, reason string) {
	t.Helper()
	var re *flowclient.RefusedError
	require.True(t, errors.As(err, &re), "want a refusal, got %v", err)
	assert.Contains(t, re.Reason, reason)
}

func TestShipExampleQuorumInputRequestChangesAndKeyedSignal(t *testing.T) {
	ctx := ctxT(t, 3*time.Minute)
	c := shared.client
	run, err := c.Start(ctx, "ship", examples.ShipInput{Version: "9.9.1"}, core.StartOptions{})
	require.NoError(t, err)
	d := eventually(t, c, run.ID, "waits for release notes", waitingFor("input:release-notes"))
	assert.Equal(t, runs.StatusAwaitingInput, d.Status)

	// Bad answers are refused at once and leave no trace.
	_, err = c.Answer(ctx, flowclient.AnswerRequest{Run: run.ID, Name: "release-notes", Data: json.RawMessage(`{"summary":"short","risk":"extreme"}`), By: "alice"})
	refused(t, err, "does not match the schema")
	_, err = c.Answer(ctx, flowclient.AnswerRequest{Run: run.ID, Name: "release-notes", Data: json.RawMessage(`{"summary":"Fixes the login bug for good","risk":"low"}`), By: "mallory"})
	refused(t, err, `"mallory" is not among the assignees`)
	assert.Equal(t, 0, updateEvents(t, run.ID), "refused answers are not in history")
	ans, err := c.Answer(ctx, flowclient.AnswerRequest{Run: run.ID, Name: "release-notes", Data: json.RawMessage(`{"summary":"Fixes the login bug for good","risk":"low"}`), By: "carol"})
	require.NoError(t, err)
	assert.Equal(t, "carol", ans.By)

	d = eventually(t, c, run.ID, "waits for approval", waitingFor("approval:ship"))
	assert.Equal(t, runs.StatusAwaitingApproval, d.Status)
	res, err := c.Vote(ctx, run.ID, approval.Vote{Gate: "ship", Kind: approval.RequestChanges, By: "bob", Comment: "mention the migration"})
	require.NoError(t, err)
	assert.Equal(t, approval.VoteStatus("changes_requested"), res.Status)

	// Round two: the prompt carries the comment.
	d = eventually(t, c, run.ID, "asks for notes again", waitingFor("input:release-notes"))
	require.Len(t, d.State.Inputs, 2)
	assert.Contains(t, d.State.Inputs[1].Request.Prompt, "changes requested by bob: mention the migration")
	_, err = c.Answer(ctx, flowclient.AnswerRequest{Run: run.ID, Name: "release-notes", Data: json.RawMessage(`{"summary":"Fixes login; run the migration first","risk":"medium"}`), By: "carol"})
	require.NoError(t, err)
	eventually(t, c, run.ID, "waits for approval again", waitingFor("approval:ship"))

	res, err = c.Vote(ctx, run.ID, approval.Vote{Gate: "ship", Kind: approval.Approve, By: "alice"})
	require.NoError(t, err)
	assert.Equal(t, VoteSummary{"open", 1, 2}, summary(res), "one vote of two keeps waiting")
	res, err = c.Vote(ctx, run.ID, approval.Vote{Gate: "ship", Kind: approval.Approve, By: "alice"})
	require.NoError(t, err)
	assert.Equal(t, VoteSummary{"duplicate", 1, 2}, summary(res), "the same voter twice counts once")
	before := updateEvents(t, run.ID)
	_, err = c.Vote(ctx, run.ID, approval.Vote{Gate: "ship", Kind: approval.Approve, By: "mallory"})
	refused(t, err, "mallory may not decide")
	assert.Equal(t, before, updateEvents(t, run.ID), "an outsider's vote leaves nothing in history")
	res, err = c.Vote(ctx, run.ID, approval.Vote{Gate: "ship", Kind: approval.Approve, By: "bob"})
	require.NoError(t, err)
	assert.Equal(t, approval.VoteStatus("approved"), res.Status)
	_, err = c.Vote(ctx, run.ID, approval.Vote{Gate: "ship", Kind: approval.Reject, By: "carol", Comment: "too late"})
	refused(t, err, "already closed")

	d = eventually(t, c, run.ID, "waits for the deploy signal", waitingFor("signal:deploy-done/9.9.1"))
	assert.Equal(t, runs.StatusWaitingSignal, d.Status)
	_, err = c.Signal(ctx, "", signals.Envelope{Name: "deploy-done", Key: "9.9.1", Payload: json.RawMessage(`{"environment":"prod","url":"https://example.test"}`)})
	require.NoError(t, err)
	d, err = c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	var out examples.ShipOutput
	require.NoError(t, json.Unmarshal(d.Result, &out))
	assert.Equal(t, 2, out.Rounds)
	assert.Equal(t, approval.Approved, out.Decision.Outcome)
	assert.Equal(t, []string{"alice", "bob"}, []string{out.Decision.Votes[0].By, out.Decision.Votes[1].By})
	assert.Equal(t, "prod", out.Deployed.Environment)
	assert.Equal(t, "medium", out.Notes.Risk)
	assert.Empty(t, d.State.Waiting)
}

type VoteSummary struct {
	Status              string
	Approvals, Required int
}

func summary(r approval.VoteResult) VoteSummary {
	return VoteSummary{string(r.Status), r.Approvals, r.Required}
}

func TestVoteBeforeTheGateIsReachedIsApplied(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	c := shared.client
	run, err := c.Start(ctx, "test.earlygate", nil, core.StartOptions{})
	require.NoError(t, err)
	res, err := c.Vote(ctx, run.ID, approval.Vote{Gate: "gate", Kind: approval.Approve, By: "alice", Comment: "early"})
	require.NoError(t, err)
	assert.Equal(t, approval.VoteStatus("queued"), res.Status)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	var dec approval.Decision
	require.NoError(t, json.Unmarshal(d.Result, &dec))
	assert.Equal(t, approval.Approved, dec.Outcome)
	assert.Equal(t, "alice", dec.By)
}

func TestEarlyVoteFromSomeoneNotAllowedIsRefusedWhenTheGateOpens(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	c := shared.client
	run, err := c.Start(ctx, "test.earlygate", nil, core.StartOptions{})
	require.NoError(t, err)
	_, err = c.Vote(ctx, run.ID, approval.Vote{Gate: "gate", Kind: approval.Approve, By: "mallory"})
	require.NoError(t, err, "the gate's rules are not known before it opens")
	d := eventually(t, c, run.ID, "the gate opens", waitingFor("approval:gate"))
	require.Len(t, d.State.Gates, 1)
	require.Len(t, d.State.Gates[0].Refused, 1)
	assert.Contains(t, d.State.Gates[0].Refused[0].Reason, "mallory may not decide")
	_, err = c.Vote(ctx, run.ID, approval.Vote{Gate: "gate", Kind: approval.Reject, By: "alice", Comment: "no"})
	require.NoError(t, err)
	d, err = c.Wait(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusRejected, d.Status)
	assert.Contains(t, d.Error, "rejected by alice: no")
}

func TestApprovalDeadlineWithEachOnTimeoutPolicy(t *testing.T) {
	cases := []struct {
		in     testflows.TimedGateInput
		status runs.Status
		check  func(t *testing.T, d *runs.Description)
	}{
		{testflows.TimedGateInput{OnTimeout: approval.RejectOnTimeout}, runs.StatusFailed, func(t *testing.T, d *runs.Description) {
			assert.Contains(t, d.Error, "timed out")
		}},
		{testflows.TimedGateInput{OnTimeout: approval.ApproveOnTimeout}, runs.StatusCompleted, func(t *testing.T, d *runs.Description) {
			assert.Equal(t, `"approved"`, string(d.Result))
		}},
		{testflows.TimedGateInput{OnTimeout: approval.RejectOnTimeout, Handle: true}, runs.StatusCompleted, func(t *testing.T, d *runs.Description) {
			assert.Equal(t, `"handled: timed_out"`, string(d.Result), "the handler may handle a timeout")
		}},
		{testflows.TimedGateInput{OnTimeout: approval.FailOnTimeout, Handle: true}, runs.StatusFailed, func(t *testing.T, d *runs.Description) {
			assert.Contains(t, d.Error, "timed out", "fail fails the run even when the handler handles it")
		}},
	}
	for _, tc := range cases {
		name := string(tc.in.OnTimeout)
		if tc.in.Handle {
			name += "-handled"
		}
		t.Run(name, func(t *testing.T) {
			d := runFlow(t, "test.timedgate", tc.in)
			assert.Equal(t, tc.status, d.Status, d.Error)
			require.Len(t, d.State.Gates, 1)
			require.NotNil(t, d.State.Gates[0].Decision)
			assert.True(t, d.State.Gates[0].Decision.Expired)
			tc.check(t, d)
		})
	}
}

func TestSignalSentBeforeTheWaitIsDeliveredOnceEvenWhenRepeated(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	c := shared.client
	run, err := c.Start(ctx, "test.pings", nil, core.StartOptions{})
	require.NoError(t, err)
	for i := 0; i < 2; i++ {
		_, err = c.Signal(ctx, run.ID, signals.Envelope{Name: "ping", ID: "ping-1", Payload: json.RawMessage(`{"n":7}`)})
		require.NoError(t, err)
	}
	_, err = c.Signal(ctx, run.ID, signals.Envelope{Name: "ping", ID: "ping-bad", Payload: json.RawMessage(`{"n":"seven"}`)})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.Equal(t, "[7]", string(d.Result), "delivered once; the second wait timed out")
	require.NotEmpty(t, d.State.Refused, "the bad payload was recorded")
	assert.Contains(t, d.State.Refused[0].Reason, "ping-bad")
}

func TestKeyedSignalReachesTwoWaitingRunsAndALaterOne(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	c := shared.client
	key := "k-" + strings.ReplaceAll(time.Now().Format("150405.000"), ".", "")
	var found []string
	for i := 0; i < 2; i++ {
		r, err := c.Start(ctx, "test.keyed", testflows.KeyedInput{Key: key}, core.StartOptions{})
		require.NoError(t, err)
		found = append(found, r.ID)
		eventually(t, c, r.ID, "waits on the key", waitingFor("signal:go/"+key))
	}
	// A run waits only after its subscription reached the mailbox, so the mailbox has it
	// before the post below.
	_, err := c.Signal(ctx, "", signals.Envelope{Name: "go", Key: key, Payload: json.RawMessage(`{"n":3}`)})
	require.NoError(t, err)
	for _, id := range found {
		d, err := c.Wait(ctx, id)
		require.NoError(t, err)
		require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
		assert.Equal(t, `{"n":3}`, string(d.Result))
	}
	late, err := c.Start(ctx, "test.keyed", testflows.KeyedInput{Key: key}, core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, late.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.Equal(t, `{"n":3}`, string(d.Result), "the mailbox kept the signal for a run that waits later")
}

func TestVoteSentAsASignalFollowsTheSameRules(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	c := shared.client
	run, err := c.Start(ctx, "test.earlygate", nil, core.StartOptions{})
	require.NoError(t, err)
	eventually(t, c, run.ID, "the gate opens", waitingFor("approval:gate"))
	require.NoError(t, shared.tc.SignalWorkflow(ctx, run.ID, "", protocol.SignalApproval, approval.Vote{Gate: "gate", Kind: "approve", By: "mallory"}))
	d := eventually(t, c, run.ID, "the refusal is recorded", func(d *runs.Description) bool { return len(d.State.Refused) == 1 })
	assert.Contains(t, d.State.Refused[0].Reason, "mallory may not decide")
	require.NoError(t, shared.tc.SignalWorkflow(ctx, run.ID, "", protocol.SignalApproval, approval.Vote{Gate: "gate", Kind: "approve", By: "alice"}))
	d, err = c.Wait(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, d.Status)
}

// Runs waiting for people survive a worker restart: a new worker picks them up and they
// complete after the decisions.
func TestRunsWaitingForPeopleSurviveAWorkerRestart(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	queue := "people-restart"
	opts := flow.WorkerOptions{TaskQueue: queue, Directory: examples.Directory(), StopTimeout: time.Second}
	w1 := flow.NewWorker(shared.tc, opts, append(examples.All(), testflows.All()...)...)
	require.NoError(t, w1.Start())
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue, Identity: "tester"})
	gate, err := c.Start(ctx, "test.earlygate", nil, core.StartOptions{})
	require.NoError(t, err)
	ship, err := c.Start(ctx, "ship", examples.ShipInput{Version: "7.0.0"}, core.StartOptions{})
	require.NoError(t, err)
	eventually(t, c, gate.ID, "gate open", waitingFor("approval:gate"))
	eventually(t, c, ship.ID, "input asked", waitingFor("input:release-notes"))
	w1.Stop()

	w2 := flow.NewWorker(shared.tc, opts, append(examples.All(), testflows.All()...)...)
	require.NoError(t, w2.Start())
	defer w2.Stop()
	_, err = c.Vote(ctx, gate.ID, approval.Vote{Gate: "gate", Kind: approval.Approve, By: "alice"})
	require.NoError(t, err)
	_, err = c.Answer(ctx, flowclient.AnswerRequest{Run: ship.ID, Name: "release-notes", Data: json.RawMessage(`{"summary":"After the restart","risk":"low"}`), By: "bob"})
	require.NoError(t, err)
	eventually(t, c, ship.ID, "approval asked", waitingFor("approval:ship"))
	for _, by := range []string{"alice", "carol"} {
		_, err = c.Vote(ctx, ship.ID, approval.Vote{Gate: "ship", Kind: approval.Approve, By: by})
		require.NoError(t, err)
	}
	eventually(t, c, ship.ID, "deploy awaited", waitingFor("signal:deploy-done/7.0.0"))
	_, err = c.Signal(ctx, "", signals.Envelope{Name: "deploy-done", Key: "7.0.0", Payload: json.RawMessage(`{"environment":"prod"}`)})
	require.NoError(t, err)
	for _, id := range []string{gate.ID, ship.ID} {
		d, err := c.Wait(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, runs.StatusCompleted, d.Status, "%s: %s", id, d.Error)
	}
}
