package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/auth"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/runs"
	"github.com/gateflow/gateflow/signals"
)

type signedNotes struct {
	Summary string `json:"summary"`
}

// signedFlow asks alice or bob for notes, then for one approval.
var signedFlow = flow.Define("test.auth.signed", func(ctx *flow.Context, _ struct{}) (string, error) {
	notes, err := flow.Input[signedNotes](ctx, "notes", signals.InputRequest{Prompt: "Notes?", Assignees: []string{"alice", "bob"}})
	if err != nil {
		return "", err
	}
	d, err := ctx.Approval("go", approval.Request{Approvers: []string{"alice", "bob"}})
	if err != nil {
		return "", err
	}
	return notes.Summary + " / " + d.By, nil
})

// TestSignedDecisionsRefuseForgeries runs a worker that requires signed decisions (the key
// directory made with flowctl keys) and tries the forgeries of issue 16 from the outside:
// flowctl without a key, flowctl signing for someone else, a key not in the directory, raw
// SDK Updates with another person's proof, an expired proof and a proof for another run,
// and a Signal vote. Each is refused and leaves no accepted Update in history; alice's
// genuine signed answer and vote count, recorded as verified with her key.
func TestSignedDecisionsRefuseForgeries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctl := func(queue string, args ...string) result {
		t.Helper()
		return flowctlRunIn(t, queue, "", args...)
	}
	for _, who := range []string{"alice", "bob", "mallory"} {
		r := ctl("x", "keys", "new", who+"-1", "--owner", who, "--out", filepath.Join(dir, who+".key"))
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stdout, "Key "+who+"-1 of "+who+" written to ")
	}
	r := ctl("x", "keys", "directory", filepath.Join(dir, "alice.key.pub"), filepath.Join(dir, "bob.key"))
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "directory.json"), []byte(r.stdout), 0o644))
	assert.NotContains(t, r.stdout, `"d":`, "the directory holds public keys only")
	directory, err := auth.LoadDirectory(filepath.Join(dir, "directory.json"))
	require.NoError(t, err)

	queue := fmt.Sprintf("auth-%d", time.Now().UnixNano())
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, StopTimeout: 2 * time.Second,
		Auth: &auth.Policy{Required: true, Directory: directory, Rules: map[auth.Kind][]string{auth.KindBudget: {"bob"}, auth.KindCancel: {"creator"}}}}, signedFlow)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})
	ctx := ctxT(t, time.Minute)
	start := func(id, by string) {
		_, err := c.Start(ctx, signedFlow.Name(), json.RawMessage(`{}`), core.StartOptions{ID: id, CreatedBy: by})
		require.NoError(t, err)
	}
	run, other := queue+"-run", queue+"-other"
	start(run, "")
	start(other, "bob")
	waitStatus(t, c, run, runs.StatusAwaitingInput)
	waitStatus(t, c, other, runs.StatusAwaitingInput)

	notes := `{"summary":"signed off"}`
	key := func(who string) string { return filepath.Join(dir, who+".key") }
	refused := func(r result, want string) {
		t.Helper()
		assert.Equal(t, flowctl.ExitRefused, r.code, "stdout %s stderr %s", r.stdout, r.stderr)
		assert.Contains(t, r.stderr, want)
	}
	refused(ctl(queue, "input", run, "notes", "--as", "alice", "--data", notes), "input notes by alice: no proof: this run accepts signed decisions only")
	refused(ctl(queue, "--signing-key", key("bob"), "input", run, "notes", "--as", "alice", "--data", notes), "--as alice: you are authenticated as bob (signing key bob-1)")
	refused(ctl(queue, "--signing-key", key("mallory"), "input", run, "notes", "--data", notes), `key "mallory-1" is not in the run's directory`)

	// Raw SDK Updates: bob's genuine proof sent as alice's answer; alice's proof made for the
	// other run; an expired proof of alice.
	alice, err := auth.LoadKey(key("alice"))
	require.NoError(t, err)
	bob, err := auth.LoadKey(key("bob"))
	require.NoError(t, err)
	proof := func(k auth.Key, runID string, at time.Time) string {
		h, err := auth.PayloadHash(map[string]any{"name": "notes", "data": json.RawMessage(notes), "by": k.Owner})
		require.NoError(t, err)
		tok, err := auth.Sign(k, auth.Decision{Namespace: "default", Run: runID, FirstRunID: firstRunID(t, ctx, runID), Target: "notes", Kind: auth.KindAnswer, PayloadSHA256: h, By: k.Owner}, auth.SignOptions{Now: at})
		require.NoError(t, err)
		return tok
	}
	rawAnswer := func(by, tok string) error {
		h, err := shared.tc.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: run, UpdateName: protocol.UpdateInput,
			Args: []any{map[string]any{"name": "notes", "data": json.RawMessage(notes), "by": by, "proof": tok}}, WaitForStage: client.WorkflowUpdateStageCompleted})
		if err != nil {
			return err
		}
		return h.Get(ctx, nil)
	}
	assert.ErrorContains(t, rawAnswer("alice", proof(bob, run, time.Now())), "key bob-1 belongs to bob, the decision claims alice")
	assert.ErrorContains(t, rawAnswer("alice", proof(alice, other, time.Now())), fmt.Sprintf("the token signs run %q, not %q", other, run))
	assert.ErrorContains(t, rawAnswer("alice", proof(alice, run, time.Now().Add(-time.Hour))), "decision refused (expired)")

	ok := ctl(queue, "--signing-key", key("alice"), "input", run, "notes", "--data", notes)
	require.Equal(t, 0, ok.code, ok.stderr)
	waitStatus(t, c, run, runs.StatusAwaitingApproval)

	// A signed vote sent as a Signal is refused; the gate stays open.
	h, err := auth.PayloadHash(map[string]any{"gate": "go", "vote": approval.Approve, "by": "alice", "comment": ""})
	require.NoError(t, err)
	tok, err := auth.Sign(alice, auth.Decision{Namespace: "default", Run: run, FirstRunID: firstRunID(t, ctx, run), Target: "go", Kind: auth.KindVote, PayloadSHA256: h, By: "alice"}, auth.SignOptions{})
	require.NoError(t, err)
	require.NoError(t, shared.tc.SignalWorkflow(ctx, run, "", protocol.SignalApproval, approval.Vote{Gate: "go", Kind: approval.Approve, By: "alice", Proof: tok}))
	require.Eventually(t, func() bool {
		d, err := c.Describe(ctx, run)
		return err == nil && d.State != nil && len(d.State.Refused) == 1
	}, 20*time.Second, 100*time.Millisecond, "the Signal vote is refused")
	refused(ctl(queue, "approve", run, "go", "--as", "alice"), "vote on go by alice: no proof: this run accepts signed decisions only")

	// A budget raise by someone the rules do not name is refused, however well signed.
	refused(ctl(queue, "--signing-key", key("alice"), "budget", "raise", run, "--to", "5"),
		"budget raise by alice: decision refused (not_allowed): budget decisions are for bob; alice is not among them")

	ok = ctl(queue, "--signing-key", key("alice"), "approve", run, "go")
	require.Equal(t, 0, ok.code, ok.stderr)
	var out string
	require.NoError(t, shared.tc.GetWorkflow(ctx, run, "").Get(ctx, &out))
	assert.Equal(t, "signed off / alice", out)

	d, err := c.Describe(ctx, run)
	require.NoError(t, err)
	require.NotNil(t, d.State)
	assert.Equal(t, &runs.Auth{Required: true, KeyIDs: []string{"alice-1", "bob-1"},
		Rules: map[auth.Kind][]string{auth.KindBudget: {"bob"}, auth.KindCancel: {"creator"}}}, d.State.Auth)
	require.Len(t, d.State.Inputs, 1)
	require.NotNil(t, d.State.Inputs[0].Answer.Verified)
	assert.Equal(t, "alice-1", d.State.Inputs[0].Answer.Verified.KeyID)
	require.Len(t, d.State.Gates, 1)
	require.Len(t, d.State.Gates[0].Votes, 1)
	require.NotNil(t, d.State.Gates[0].Votes[0].Verified)
	assert.Equal(t, "alice-1", d.State.Gates[0].Votes[0].Verified.KeyID)
	require.Len(t, d.State.Refused, 1)
	assert.Contains(t, d.State.Refused[0].Reason, "votes sent as Signals are refused")

	// Only the two genuine decisions entered history as accepted Updates.
	assert.Equal(t, 2, countHistoryEvents(t, ctx, run, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED))

	// flowctl audit verifies them again from history, against the keys the run pinned.
	r = ctl(queue, "audit", run, "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var audit []struct {
		Kind, Target, Via, By, Verified, Outcome string
		ClientIdentity                           string `json:"client_identity"`
		Proof                                    *auth.Verified
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &audit), r.stdout)
	require.Len(t, audit, 3, r.stdout)
	for i, want := range []struct{ kind, target, via, outcome string }{
		{"answer", "notes", "update", "accepted"}, {"vote", "go", "signal", "refused"}, {"vote", "go", "update", "accepted"},
	} {
		assert.Equal(t, want.kind, audit[i].Kind, "entry %d", i)
		assert.Equal(t, want.target, audit[i].Target, "entry %d", i)
		assert.Equal(t, want.via, audit[i].Via, "entry %d", i)
		assert.Equal(t, want.outcome, audit[i].Outcome, "entry %d", i)
		assert.Equal(t, "alice", audit[i].By, "entry %d", i)
		assert.Equal(t, "signature", audit[i].Verified, "entry %d", i)
		require.NotNil(t, audit[i].Proof, "entry %d", i)
		assert.Equal(t, "alice-1", audit[i].Proof.KeyID, "entry %d", i)
		assert.NotEmpty(t, audit[i].ClientIdentity, "entry %d: the client's own (unverified) identity", i)
	}
	r = ctl(queue, "audit", run)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)^AT\s+DECISION\s+BY\s+CLIENT\s+VIA\s+VERIFIED\s+OUTCOME$`, r.stdout)
	assert.Regexp(t, `(?m)vote go\s+alice\s+\S+\s+update\s+signature alice-1\s+accepted$`, r.stdout)

	// Cancelling is a decision too: the run checks the proof and the rule (its creator, bob).
	refused(ctl(queue, "cancel", other, "--as", "bob"), "cancel by bob: no proof: this run accepts signed decisions only")
	refused(ctl(queue, "--signing-key", key("alice"), "cancel", other, "--reason", "mine"),
		"cancel by alice: decision refused (not_allowed): cancel decisions are for creator; alice is not among them")
	assert.Equal(t, 0, countHistoryEvents(t, ctx, other, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED), "refused cancellations leave no trace")
	ok = ctl(queue, "--signing-key", key("bob"), "cancel", other, "--reason", "not needed")
	require.Equal(t, 0, ok.code, ok.stderr)
	assert.Equal(t, "Cancel requested for run "+other+" (as bob, signing key bob-1).\n", ok.stdout)
	waitStatus(t, c, other, runs.StatusCancelled)
	d, err = c.Describe(ctx, other)
	require.NoError(t, err)
	assert.Equal(t, "cancelled by bob: not needed", d.State.Error)
	assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED, describeStatus(t, ctx, other), "cancelled in Temporal's eyes too")
	r = ctl(queue, "audit", other)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)cancel run\s+bob\s+\S+\s+update\s+signature bob-1\s+accepted$`, r.stdout)
}

func describeStatus(t *testing.T, ctx context.Context, run string) enumspb.WorkflowExecutionStatus {
	t.Helper()
	d, err := shared.tc.DescribeWorkflowExecution(ctx, run, "")
	require.NoError(t, err)
	return d.GetWorkflowExecutionInfo().GetStatus()
}

func waitStatus(t *testing.T, c *flowclient.Client, run string, want runs.Status) {
	t.Helper()
	require.Eventually(t, func() bool {
		d, err := c.Describe(context.Background(), run)
		return err == nil && d.Status == want
	}, 30*time.Second, 100*time.Millisecond, "run %s reaches %s", run, want)
}

func countHistoryEvents(t *testing.T, ctx context.Context, run string, typ enumspb.EventType) int {
	t.Helper()
	n := 0
	it := shared.tc.GetWorkflowHistory(ctx, run, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		if e.GetEventType() == typ {
			n++
		}
	}
	return n
}
