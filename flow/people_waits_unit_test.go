// People in the loop where it is easy to get wrong: approvals kept across run attempts,
// the Web UI details listing only open waits with commands that work, gate names trimmed,
// keyed waits leaving their mailbox when the run is cancelled, unresolvable approver groups.

package flow

import (
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/signals"
)

// TestRetryKeepsGrantedApprovals: DESIGN.md maps run-level retry to "an attempt loop
// inside the wrapper that keeps granted approvals and spent cost": a run whose later step
// failed does not ask people to approve again (here nobody would, and a second gate would
// time out).
func TestRetryKeepsGrantedApprovals(t *testing.T) {
	f := Define("people/retry-after-approval", func(ctx *Context, _ none) (none, error) {
		if _, err := ctx.Approval("ship", approval.Request{Approvers: []string{"alice"}, Timeout: time.Hour}); err != nil {
			return none{}, err
		}
		cmd := "deploy"
		if ctx.Attempt() == 1 {
			cmd = "deploy-fails"
		}
		_, err := ctx.Shell("deploy", activities.Shell{Command: cmd})
		return none{}, err
	}, MaxAttempts(2))
	env := newPeopleEnv(t, f)
	mockShell(env, deployShell)
	voteAt(env, time.Minute, approve("alice"))
	env.ExecuteWorkflow(f.Name(), none{})
	require.True(t, env.IsWorkflowCompleted())
	assert.NoError(t, env.GetWorkflowError(), "the second attempt keeps alice's approval")
	st := queryState(t, env)
	assert.Equal(t, 2, st.Attempt)
	assert.Equal(t, runs.StatusCompleted, st.Status)
}

// TestDetailsListOnlyOpenWaits: the Web UI's "Waiting for people" lists only the waits
// that are open: not inputs or signal waits that timed out or were cancelled, nor gates
// left open by a cancellation (runs.State.Waiting, which flowctl show checks, agrees).
func TestDetailsListOnlyOpenWaits(t *testing.T) {
	t.Run("timed out", func(t *testing.T) {
		f := Define("people/timeouts-handled", func(ctx *Context, _ none) (none, error) {
			_, _ = Input[releaseNotes](ctx, "notes", signals.InputRequest{Prompt: "Notes?", Timeout: time.Hour})
			_, _ = WaitSignal[ping](ctx, "ping", "", time.Hour)
			return none{}, nil
		})
		env := newPeopleEnv(t, f)
		env.ExecuteWorkflow(f.Name(), none{})
		require.NoError(t, env.GetWorkflowError())
		st := queryState(t, env)
		require.Equal(t, runs.StatusCompleted, st.Status)
		require.Empty(t, st.Waiting)
		assert.NotContains(t, currentDetails(t, env), "Waiting for people")
	})
	t.Run("cancelled", func(t *testing.T) {
		env := newPeopleEnv(t, gateFlow)
		env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
		env.ExecuteWorkflow(gateFlow.Name(), gateIn{Req: approval.Request{Approvers: []string{"alice"}}})
		require.True(t, env.IsWorkflowCompleted())
		st := queryState(t, env)
		require.Equal(t, runs.StatusCancelled, st.Status)
		assert.NotContains(t, currentDetails(t, env), "Waiting for people")
	})
}

// TestDetailsSignalCommandOfAnUnkeyedWaitNamesTheRun: for a wait without a key, the
// details suggest a `flowctl signal` command with --run and the run's ID (flowctl and
// flowclient.Client.Signal refuse one with neither --run nor --key).
func TestDetailsSignalCommandOfAnUnkeyedWaitNamesTheRun(t *testing.T) {
	env := newPeopleEnv(t, pingsFlow)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "run-9"})
	var during string
	env.RegisterDelayedCallback(func() { during = currentDetails(t, env) }, time.Minute)
	signalAt(env, 2*time.Minute, protocol.SignalName, pingEnvelope("p", `{"n":1}`))
	env.ExecuteWorkflow(pingsFlow.Name(), pingsIn{First: time.Hour})
	require.NoError(t, env.GetWorkflowError())
	assert.Contains(t, during, "- **Signal `ping`**")
	assert.Contains(t, during, "--run run-9", "the suggested command reaches this run")
}

// TestVoteGateNameIsTrimmed: the approval package trims a vote's gate name (Vote.normalize,
// Inbox.Add, Inbox.Take), and the run looks the gate up by the trimmed name too: a vote for
// "ship " while the gate "ship" is open counts for it (it is not filed in the Inbox as an
// early vote that would never count, or count for a later gate of the same name).
func TestVoteGateNameIsTrimmed(t *testing.T) {
	env := newPeopleEnv(t, gateFlow)
	res := voteAt(env, time.Minute, approval.Vote{Gate: "ship ", Kind: approval.Approve, By: "alice"})
	env.ExecuteWorkflow(gateFlow.Name(), gateIn{Req: approval.Request{Approvers: []string{"alice"}, Timeout: time.Hour}, Handle: true})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, approval.VoteStatus("approved"), res.vote(t).Status, "the vote counts for the open gate")
	var out gateOut
	require.NoError(t, env.GetWorkflowResult(&out))
	assert.Equal(t, approval.Approved, out.Decision.Outcome)
	assert.False(t, out.Decision.Expired, "decided by alice, not by the deadline")
}

// TestCancelledKeyedWaitLeavesTheMailbox: a keyed WaitSignal unsubscribes from the mailbox
// on a disconnected context, so a cancelled run leaves it (on the run's own, cancelled,
// context the activity would never be scheduled, and the mailbox would keep a dead
// subscriber until someone posted to the key).
func TestCancelledKeyedWaitLeavesTheMailbox(t *testing.T) {
	env := newPeopleEnv(t, pingsFlow)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "run-c"})
	subs, unsubs := mockMailbox(env, nil)
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
	env.ExecuteWorkflow(pingsFlow.Name(), pingsIn{Key: "v1", First: time.Hour})
	require.True(t, env.IsWorkflowCompleted())
	require.Equal(t, runs.StatusCancelled, queryState(t, env).Status)
	require.Len(t, subs.all(), 1)
	assert.Equal(t, []protocol.MailboxRequest{{Name: "ping", Key: "v1", WorkflowID: "run-c"}}, unsubs.all(), "the cancelled run leaves the mailbox")
}

// TestApprovalWhoseGroupsNobodyCanResolveFails: a gate whose only approvers are groups the
// directory cannot resolve used to open anyway and wait for a vote nobody could cast. It
// fails with the reason; a gate that still has someone to decide opens and records the
// problem.
func TestApprovalWhoseGroupsNobodyCanResolveFails(t *testing.T) {
	env := newPeopleEnv(t, gateFlow)
	env.ExecuteWorkflow(gateFlow.Name(), gateIn{Req: approval.Request{Message: "Ship?", Approvers: []string{"group:nobody"}, Required: 1, Timeout: time.Hour}})
	require.True(t, env.IsWorkflowCompleted())
	err := env.GetWorkflowError()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "approval ship: nobody can decide: resolving group:nobody")
	st := queryState(t, env)
	assert.Equal(t, runs.StepFailed, stepByName(t, st, "ship").Status)
	assert.Empty(t, st.Gates, "no gate was opened")
	assert.Equal(t, runs.StatusFailed, st.Status)
}

func TestApprovalWithAnUnresolvedGroupAndAPersonOpensAndSaysSo(t *testing.T) {
	env := newPeopleEnv(t, gateFlow)
	ok := voteAt(env, time.Minute, approve("alice"))
	out := runGate(t, env, gateIn{Req: approval.Request{Message: "Ship?", Approvers: []string{"alice", "group:nobody"}, Required: 1}})
	assert.Equal(t, approval.Approved, out.Decision.Outcome)
	assert.Equal(t, approval.VoteStatus("approved"), ok.vote(t).Status)
	st := queryState(t, env)
	require.Len(t, st.Problems, 1)
	assert.Contains(t, st.Problems[0], "approval ship: resolving group:nobody")
}

func TestCanDecide(t *testing.T) {
	dir := approval.StaticDirectory{"release": {"carol"}, "empty": {}}
	assert.True(t, canDecide(nil, dir), "anyone")
	assert.True(t, canDecide([]string{"group:nobody", "alice"}, dir))
	assert.True(t, canDecide([]string{"group:release"}, dir))
	assert.False(t, canDecide([]string{"group:nobody"}, dir))
	assert.False(t, canDecide([]string{"group:empty", " group:nobody "}, dir))
}

// TestChangesRequestedIsNotAFailedStep: an approval step closed by a request for changes
// is recorded changes_requested, not failed (it used to show failed in flowctl show).
func TestChangesRequestedIsNotAFailedStep(t *testing.T) {
	f := Define("unit/changes", func(ctx *Context, _ none) (none, error) {
		_, err := ctx.Approval("ship", approval.Request{Approvers: []string{"alice"}})
		return none{}, err
	})
	env := newUnitEnv(t, runConfig{}, f)
	voteAt(env, time.Minute, approval.Vote{Gate: "ship", Kind: approval.RequestChanges, By: "alice", Comment: "more tests"})
	env.ExecuteWorkflow(f.Name(), none{})
	require.Error(t, env.GetWorkflowError())
	s := stepByName(t, queryState(t, env), "ship")
	assert.Equal(t, runs.StepChangesRequested, s.Status)
	assert.Contains(t, s.Error, "more tests")
}
