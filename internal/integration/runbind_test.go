package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/auth"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/runs"
)

// twoApprovalsFlow waits for two approvals of alice and bob.
var twoApprovalsFlow = flow.Define("test.auth.two", func(ctx *flow.Context, _ struct{}) (string, error) {
	d, err := ctx.Approval("go", approval.Request{Approvers: []string{"alice", "bob"}, Required: 2})
	if err != nil {
		return "", err
	}
	return string(d.Outcome), nil
})

// TestSignedVoteDoesNotReplayOnANewRun is issue 31's third hole: alice signs her approval
// on run b3; her proof is read from b3's history; b3 is cancelled and a new b3 started
// with the same workflow ID. The old proof sent to the new b3 is refused (it binds the
// first run ID of the old one), nothing of it is in the new run's history and the gate is
// still open with no vote; alice's vote signed anew counts.
func TestSignedVoteDoesNotReplayOnANewRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	alice, err := auth.NewKey("alice-1", "alice")
	require.NoError(t, err)
	require.NoError(t, auth.SaveKey(filepath.Join(dir, "alice.key"), alice))
	directory, err := auth.NewDirectory(alice.Public())
	require.NoError(t, err)
	queue := fmt.Sprintf("runbind-%d", time.Now().UnixNano())
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, StopTimeout: 2 * time.Second,
		Auth: &auth.Policy{Required: true, Directory: directory}}, twoApprovalsFlow)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue, Key: &alice})
	ctx := ctxT(t, 2*time.Minute)
	b3 := queue + "-b3"
	start := func() string {
		t.Helper()
		_, err := c.Start(ctx, twoApprovalsFlow.Name(), json.RawMessage(`{}`), core.StartOptions{ID: b3})
		require.NoError(t, err)
		waitStatus(t, c, b3, runs.StatusAwaitingApproval)
		return firstRunID(t, ctx, b3)
	}
	ctl := func(args ...string) result {
		t.Helper()
		return flowctlRunIn(t, queue, "", append([]string{"--signing-key", filepath.Join(dir, "alice.key")}, args...)...)
	}

	firstB3 := start()
	r := ctl("approve", b3, "go")
	require.Equal(t, 0, r.code, r.stderr)
	old := acceptedVotes(t, b3)
	require.Len(t, old, 1)
	require.NotEmpty(t, old[0].Proof, "the signed proof is in b3's history")

	r = ctl("cancel", b3, "--reason", "start over")
	require.Equal(t, 0, r.code, r.stderr)
	require.Eventually(t, func() bool { return statusOf(t, ctx, shared.tc, b3) == enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED },
		30*time.Second, 100*time.Millisecond)
	secondB3 := start()
	require.NotEqual(t, firstB3, secondB3, "a new run with the same workflow ID")

	// The old proof, sent again as it was recorded.
	h, err := shared.tc.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: b3, UpdateName: protocol.UpdateApproval,
		Args: []any{old[0]}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err == nil {
		err = h.Get(ctx, nil)
	}
	require.Error(t, err, "the old proof is refused")
	assert.Contains(t, err.Error(), fmt.Sprintf("decision refused (mismatch): the token signs run %q of %q, not %q: another run with the same workflow ID", firstB3, b3, secondB3))
	assert.Zero(t, countHistoryEvents(t, ctx, b3, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED), "nothing of it is in the new run's history")
	d, err := c.Describe(ctx, b3)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusAwaitingApproval, d.Status)
	require.Len(t, d.State.Gates, 1)
	assert.Empty(t, d.State.Gates[0].Votes, "the gate is still open with no vote")

	// alice's vote signed for the new run counts.
	r = ctl("approve", b3, "go")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "1 of 2")
	votes := acceptedVotes(t, b3)
	require.Len(t, votes, 1)
	assert.NotEqual(t, old[0].Proof, votes[0].Proof)
}

// acceptedVotes are the votes of the accepted gateflow.approval Updates in run's history
// (of its current run), as they were sent.
func acceptedVotes(t *testing.T, run string) []approval.Vote {
	t.Helper()
	var out []approval.Vote
	it := shared.tc.GetWorkflowHistory(t.Context(), run, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		in := e.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetInput()
		if in.GetName() != protocol.UpdateApproval {
			continue
		}
		var v approval.Vote
		require.NoError(t, converter.GetDefaultDataConverter().FromPayload(in.GetArgs().GetPayloads()[0], &v))
		out = append(out, v)
	}
	return out
}

// firstRunID is the first run ID of the run with workflow ID run, which signed decisions
// bind.
func firstRunID(t *testing.T, ctx context.Context, run string) string {
	t.Helper()
	d, err := shared.tc.DescribeWorkflowExecution(ctx, run, "")
	require.NoError(t, err)
	require.NotEmpty(t, d.GetWorkflowExecutionInfo().GetFirstRunId())
	return d.GetWorkflowExecutionInfo().GetFirstRunId()
}
