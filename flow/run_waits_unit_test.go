package flow

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/runs"
	"github.com/gateflow/gateflow/signals"
)

// The two cases in one run: a branch waits at an approval gate while the handler
// sleeps, then waits for a signal. The run shows awaiting_approval all along (it used to
// show sleeping, then running and waiting_signal), and waiting_signal only once the gate
// has closed.
func TestBranchAtAnApprovalKeepsTheRunAwaitingApproval(t *testing.T) {
	f := branchWaits
	env := newPeopleEnv(t, f)
	upserts := statusUpserts(env)
	sleeping := stateAt(t, env, time.Minute)
	afterSleep := stateAt(t, env, 3*time.Minute)
	vote := voteAt(env, 4*time.Minute, approval.Vote{Gate: "ship", Kind: approval.Approve, By: "alice"})
	signalOnly := stateAt(t, env, 5*time.Minute)
	signalAt(env, 6*time.Minute, protocol.SignalName, signals.Envelope{Name: "deployed", ID: "d-1", Payload: json.RawMessage(`"v1"`), Sender: "bob"})
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, approval.VoteStatus(approval.Approved), vote.vote(t).Status)

	assert.Equal(t, runs.StatusAwaitingApproval, sleeping.Status, "a gate open in a branch while the handler sleeps")
	assert.Equal(t, []string{"approval:ship"}, sleeping.Waiting)
	assert.Equal(t, runs.StatusAwaitingApproval, afterSleep.Status, "after the sleep, while the handler waits for a signal")
	assert.Equal(t, []string{"approval:ship", "signal:deployed"}, afterSleep.Waiting)
	assert.Equal(t, runs.StatusWaitingSignal, signalOnly.Status, "the gate closed: the signal is what is left")
	assert.Equal(t, []string{"signal:deployed"}, signalOnly.Waiting)
	// The handler sleeps before the branch's coroutine opens the gate; the signal ends the
	// last wait, then the handler ends.
	assert.Equal(t, []string{"running", "sleeping", "awaiting_approval", "waiting_signal", "running", "completed"}, dedupe(upserts.all()),
		"FlowStatus follows the open waits, never the last one alone")
}

// branchWaits waits at the approval ship in a branch while the handler sleeps, then
// waits for the signal deployed.
var branchWaits = Define("unit/branch-waits", func(ctx *Context, _ none) (string, error) {
	gate := ctx.Go("review", func(bc *Context) error {
		_, err := bc.Approval("ship", approval.Request{Approvers: []string{"alice"}})
		return err
	})
	if err := ctx.Sleep("cool-down", 2*time.Minute); err != nil {
		return "", err
	}
	got, err := WaitSignal[string](ctx, "deployed", "", 0)
	if err != nil {
		return "", err
	}
	_, err = gate.Get(ctx)
	return got, err
})

// A run recorded before waitStatusChange (its version is DefaultVersion) keeps the status
// of its last wait, so its FlowStatus upserts, commands of its history, replay unchanged;
// a run that never has two waits at once asks for no version at all.
func TestRunRecordedBeforeTheWaitPrecedenceReplaysAsBefore(t *testing.T) {
	env := newPeopleEnv(t, branchWaits)
	asked := 0
	env.OnGetVersion(waitStatusChange, workflow.DefaultVersion, 1).Return(func(string, workflow.Version, workflow.Version) workflow.Version {
		asked++
		return workflow.DefaultVersion
	})
	upserts := statusUpserts(env)
	voteAt(env, 4*time.Minute, approval.Vote{Gate: "ship", Kind: approval.Approve, By: "alice"})
	signalAt(env, 6*time.Minute, protocol.SignalName, signals.Envelope{Name: "deployed", ID: "d-1", Payload: json.RawMessage(`"v1"`), Sender: "bob"})
	env.ExecuteWorkflow(branchWaits.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, []string{"running", "sleeping", "awaiting_approval", "running", "waiting_signal", "running", "completed"}, dedupe(upserts.all()))
	assert.Equal(t, 1, asked, "asked once, when the two ways first disagree")

	single := Define("unit/one-wait", func(ctx *Context, _ none) (string, error) {
		if err := ctx.Sleep("cool-down", time.Minute); err != nil {
			return "", err
		}
		_, err := ctx.Approval("ship", approval.Request{Approvers: []string{"alice"}})
		return "", err
	})
	env = newPeopleEnv(t, single)
	asked = 0
	env.OnGetVersion(waitStatusChange, workflow.DefaultVersion, 1).Return(func(string, workflow.Version, workflow.Version) workflow.Version {
		asked++
		return 1
	})
	voteAt(env, 2*time.Minute, approval.Vote{Gate: "ship", Kind: approval.Approve, By: "alice"})
	env.ExecuteWorkflow(single.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	assert.Zero(t, asked, "one wait at a time: both ways agree, no marker")
}

// A paused run with an open gate shows paused (someone stopped the whole run: it ranks
// first) and still waits for the gate: FlowWaiting keeps approval:GATE, which is what
// Client.Approvals lists by. Resumed, it is awaiting_approval again.
func TestPausedRunWithAnOpenGateKeepsWaitingForIt(t *testing.T) {
	f := Define("unit/paused-gate", func(ctx *Context, _ none) (string, error) {
		_, err := ctx.Approval("ship", approval.Request{Approvers: []string{"alice"}})
		return "", err
	})
	env := newPeopleEnv(t, f)
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	updateAt(env, time.Minute, protocol.UpdatePause, protocol.RunPause{Action: protocol.ControlPause, By: "bob"})
	paused := stateAt(t, env, 2*time.Minute)
	updateAt(env, 3*time.Minute, protocol.UpdatePause, protocol.RunPause{Action: protocol.ControlResume, By: "bob"})
	resumed := stateAt(t, env, 4*time.Minute)
	voteAt(env, 5*time.Minute, approval.Vote{Gate: "ship", Kind: approval.Approve, By: "alice"})
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, runs.StatusPaused, paused.Status)
	assert.Equal(t, []string{"approval:ship", "resume"}, paused.Waiting)
	assert.Equal(t, runs.StatusAwaitingApproval, resumed.Status)
	assert.Equal(t, []string{"approval:ship"}, resumed.Waiting)
}

// dedupe drops consecutive repeats.
func dedupe(in []string) []string {
	var out []string
	for _, s := range in {
		if s != "" && (len(out) == 0 || out[len(out)-1] != s) {
			out = append(out, s)
		}
	}
	return out
}
