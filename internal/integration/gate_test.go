package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/gates"
	"github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/internal/integration/testflows"
	"github.com/gateflow/gateflow/internal/protocol"
)

// statusServer answers {"status": ...}: "pending" until request number flipAt, then final.
func statusServer(t *testing.T, flipAt int32, final string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		status := "pending"
		if n.Add(1) >= flipAt && flipAt > 0 {
			status = final
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status":%q}`, status)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// gateEvents lists, in order, the poll activities scheduled ("poll") and the timers
// started ("timer") in the run's history.
func gateEvents(t *testing.T, run string) []string {
	t.Helper()
	var out []string
	hist := shared.tc.GetWorkflowHistory(ctxT(t, time.Minute), run, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for hist.HasNext() {
		ev, err := hist.Next()
		require.NoError(t, err)
		switch {
		case ev.GetActivityTaskScheduledEventAttributes() != nil:
			if ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == protocol.GatePollActivity {
				out = append(out, "poll")
			}
		case ev.GetTimerStartedEventAttributes() != nil:
			out = append(out, "timer")
		}
	}
	return out
}

func gateStepOf(t *testing.T, d *runs.Description, name string) runs.Step {
	t.Helper()
	require.NotNil(t, d.State)
	for _, s := range d.State.Steps {
		if s.Name == name && s.Kind == runs.KindGate {
			require.NotNil(t, s.Gate)
			return s
		}
	}
	t.Fatalf("no gate step %s in %+v", name, d.State.Steps)
	return runs.Step{}
}

func TestGateHTTPApprovesAfterThreePolls(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	c := shared.client
	srv, hits := statusServer(t, 3, "green")
	run, err := c.Start(ctx, testflows.HTTPGate.Name(), testflows.GateInput{URL: srv.URL, Interval: time.Second}, core.StartOptions{})
	require.NoError(t, err)
	w := eventually(t, c, run.ID, "waits at the gate", waitingFor("gate:ready/http"))
	assert.Equal(t, runs.StatusAwaitingGate, w.Status)

	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	var res gates.Result
	require.NoError(t, json.Unmarshal(d.Result, &res))
	assert.Equal(t, gates.OutcomeApproved, res.Outcome)
	assert.Equal(t, "http", res.By)
	assert.Equal(t, `status is "green"`, res.Comment)
	assert.Equal(t, 3, res.Polls)
	assert.Equal(t, int32(3), hits.Load())

	// Three poll activities with a durable timer between each two: not one long activity.
	assert.Equal(t, []string{"poll", "timer", "poll", "timer", "poll"}, gateEvents(t, run.ID))

	s := gateStepOf(t, d, "ready")
	assert.Equal(t, runs.StepCompleted, s.Status)
	assert.Equal(t, 3, s.Gate.Polls)
	assert.Equal(t, gates.OutcomeApproved, s.Gate.Decision)
	assert.Equal(t, `approved by http after 3 polls: status is "green"`, s.Detail(200))
	assert.GreaterOrEqual(t, s.DurationMS, int64(2000), "two sleeps of a second")
	assert.Empty(t, d.State.Waiting)
}

func TestGateHTTPRejectEndsWithTheReason(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	c := shared.client
	srv, _ := statusServer(t, 2, "red")
	run, err := c.Start(ctx, testflows.HTTPGate.Name(), testflows.GateInput{URL: srv.URL, Interval: time.Second}, core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusRejected, d.Status)
	assert.Equal(t, `gate ready: rejected by http after 2 polls: status is "red"`, d.Error)
	s := gateStepOf(t, d, "ready")
	assert.Equal(t, runs.StepFailed, s.Status)
	assert.Equal(t, gates.OutcomeRejected, s.Gate.Decision)
	assert.Equal(t, `status is "red"`, s.Gate.Reason)
	assert.Equal(t, []string{"poll", "timer", "poll"}, gateEvents(t, run.ID))
}

func TestGateTimeoutFollowsOnTimeout(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	c := shared.client
	in := testflows.GateInput{Command: "echo not yet; exit 3", Interval: time.Second, Timeout: 2500 * time.Millisecond}

	// The default fails the step timed_out.
	run, err := c.Start(ctx, testflows.CommandGate.Name(), in, core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusFailed, d.Status)
	s := gateStepOf(t, d, "script")
	assert.Equal(t, runs.StepTimedOut, s.Status)
	assert.Equal(t, gates.OutcomeTimedOut, s.Gate.Decision)
	// Polls at about 0s, 1s and 2s (fewer on a slow machine), the deadline at 2.5s.
	polls := s.Gate.Polls
	assert.True(t, polls == 2 || polls == 3, "polls: %d", polls)
	assert.Equal(t, fmt.Sprintf("gate script: timed out after 2.5s (%d polls) without a decision; last poll: not yet", polls), d.Error)
	events := gateEvents(t, run.ID)
	scheduled := 0
	for i, e := range events {
		assert.Equal(t, []string{"poll", "timer"}[i%2], e, "polls and timers alternate: %v", events)
		if e == "poll" {
			scheduled++
		}
	}
	assert.Equal(t, polls, scheduled, "one activity per poll: %v", events)
	assert.GreaterOrEqual(t, s.DurationMS, int64(2500))

	// Continue goes on without a decision; approve approves at the deadline.
	for on, want := range map[gates.OnTimeout]gates.Outcome{gates.ContinueOnTimeout: gates.OutcomeTimedOut, gates.ApproveOnTimeout: gates.OutcomeApproved} {
		in.OnTimeout = on
		run, err := c.Start(ctx, testflows.CommandGate.Name(), in, core.StartOptions{})
		require.NoError(t, err)
		d, err := c.Wait(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, runs.StatusCompleted, d.Status, "%s: %s", on, d.Error)
		var res gates.Result
		require.NoError(t, json.Unmarshal(d.Result, &res))
		assert.Equal(t, want, res.Outcome, on)
		assert.Equal(t, gates.TimeoutActor, res.By, on)
		assert.Equal(t, runs.StepCompleted, gateStepOf(t, d, "script").Status, on)
	}
}

func TestGateManualDecisionEndsThePollingEarly(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	c := shared.client
	srv, _ := statusServer(t, 0, "")

	// Without AllowManual a vote is refused and leaves no trace.
	strict, err := c.Start(ctx, testflows.HTTPGate.Name(), testflows.GateInput{URL: srv.URL, Interval: time.Second, Timeout: 3 * time.Second,
		OnTimeout: gates.ContinueOnTimeout}, core.StartOptions{})
	require.NoError(t, err)
	eventually(t, c, strict.ID, "waits at the gate", waitingFor("gate:ready/http"))
	_, err = c.Vote(ctx, strict.ID, approval.Vote{Gate: "ready", Kind: approval.Approve, By: "alice"})
	refused(t, err, "it does not allow a manual decision")
	assert.Equal(t, 0, updateEvents(t, strict.ID))

	// With it, an approval during a long sleep ends the gate at once and says who decided.
	start := time.Now()
	run, err := c.Start(ctx, testflows.HTTPGate.Name(), testflows.GateInput{URL: srv.URL, Interval: time.Minute, AllowManual: true}, core.StartOptions{})
	require.NoError(t, err)
	w := eventually(t, c, run.ID, "polled once and sleeps", func(d *runs.Description) bool {
		// Polls counts the poll in flight too: the message says its answer is in (and the
		// sleep until the next one started in the same workflow task).
		g := gateStepOf(t, d, "ready").Gate
		return waitingFor("gate:ready/http")(d) && g.Polls == 1 && g.Message != ""
	})
	assert.Equal(t, runs.StatusAwaitingGate, w.Status)
	r := flowctlRun(t, "", "show", run.ID)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `gate ready: http, 1 poll every 1m0s, no deadline, last: status is "pending"`)
	assert.Contains(t, r.stdout, sharedHint("flowctl approve "+run.ID+" ready"))
	res, err := c.Vote(ctx, run.ID, approval.Vote{Gate: "ready", Kind: approval.Approve, By: "alice", Comment: "checked by hand"})
	require.NoError(t, err)
	assert.Equal(t, approval.VoteStatus(approval.Approved), res.Status)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.Less(t, time.Since(start), 30*time.Second, "the vote woke the one-minute sleep")
	var out gates.Result
	require.NoError(t, json.Unmarshal(d.Result, &out))
	assert.Equal(t, gates.OutcomeApproved, out.Outcome)
	assert.Equal(t, "alice", out.By)
	assert.True(t, out.Manual)
	assert.Equal(t, 1, out.Polls)
	s := gateStepOf(t, d, "ready")
	assert.Equal(t, "approved by alice (manual) after 1 poll: checked by hand", s.Detail(200))
	assert.Equal(t, []string{"poll", "timer"}, gateEvents(t, run.ID))

	// flowctl reject --reason rejects one, with the reason.
	run, err = c.Start(ctx, testflows.HTTPGate.Name(), testflows.GateInput{URL: srv.URL, Interval: time.Minute, AllowManual: true}, core.StartOptions{})
	require.NoError(t, err)
	eventually(t, c, run.ID, "waits at the gate", waitingFor("gate:ready/http"))
	r = flowctlRun(t, "", "reject", run.ID, "ready", "--as", "bob", "--reason", "release frozen")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "Gate ready is now rejected (as bob, unverified).\n", r.stdout)
	r = flowctlRun(t, "", "approve", run.ID, "ready", "--as", "carol")
	assert.Equal(t, flowctl.ExitRefused, r.code, r.stdout)
	d, err = c.Wait(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusRejected, d.Status)
	assert.Contains(t, d.Error, "gate ready: rejected by bob (manual) after ")
	assert.Contains(t, d.Error, ": release frozen")
	assert.Equal(t, "bob", gateStepOf(t, d, "ready").Gate.By)

	d, err = c.Wait(ctx, strict.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, d.Status, d.Error)
}
