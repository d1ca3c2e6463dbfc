package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/devauth"
	"github.com/gateflow/gateflow/internal/devserver"
	"github.com/gateflow/gateflow/internal/logging"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/runs"
	"github.com/gateflow/gateflow/signals"
)

// forgedKeysFlow asks alice or mallory for notes, then waits for alice's approval.
var forgedKeysFlow = flow.Define("test.forged.keys", func(ctx *flow.Context, _ struct{}) (string, error) {
	notes, err := flow.Input[signedNotes](ctx, "notes", signals.InputRequest{Prompt: "Notes?", Assignees: []string{"alice", "mallory"}})
	if err != nil {
		return "", err
	}
	d, err := ctx.Approval("ship", approval.Request{Approvers: []string{"alice"}})
	if err != nil {
		return "", err
	}
	return notes.Summary + " / " + d.By, nil
})

// forgery is one of mallory's payloads of issue 31: her own "by" beside alice's spelled
// with other capitals (or given twice).
type forgery struct {
	signal bool
	name   string
	data   string
}

var forgeries = []forgery{
	{false, protocol.UpdateApproval, `{"gate":"ship","vote":"approve","by":"mallory","By":"alice"}`},
	{false, protocol.UpdateApproval, `{"gate":"ship","vote":"approve","by":"mallory","by":"alice"}`},
	{false, protocol.UpdateInput, `{"name":"notes","data":{"summary":"forged"},"by":"mallory","BY":"alice"}`},
	{false, protocol.UpdateBudget, `{"to":"1000000","by":"mallory","By":"alice"}`},
	{false, protocol.UpdatePause, `{"action":"pause","by":"mallory","By":"alice"}`},
	{false, protocol.UpdateCancel, `{"by":"mallory","By":"alice","reason":"forged"}`},
	{true, protocol.SignalApproval, `{"gate":"ship","vote":"reject","by":"mallory","By":"alice","comment":"no"}`},
	{true, protocol.SignalCancel, `{"by":"mallory","By":"alice","reason":"forged"}`},
	{true, protocol.SignalName, `{"name":"deploy-done","id":"s1","sender":"mallory","Sender":"alice"}`},
}

func rawJSON(data string) converter.RawValue {
	return converter.NewRawValue(&commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(data)})
}

// send sends f to run with tc: an Update waits for its outcome.
func (f forgery) send(ctx context.Context, tc client.Client, run string) error {
	if f.signal {
		return tc.SignalWorkflow(ctx, run, "", f.name, rawJSON(f.data))
	}
	h, err := tc.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: run, UpdateName: f.name,
		Args: []any{rawJSON(f.data)}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		return err
	}
	return h.Get(ctx, nil)
}

// TestForgedCaseVariantKeysRefusedByTheAuthorizer is issue 31's first hole against a
// server with gateflow's Authorizer (what flow-worker --dev --auth runs): mallory, with her
// own valid token, sends every decision and signal with her "by" and alice's "By". Each
// is refused by the server, naming the key; nothing of them is in the run's history, and
// the gate is still open with no vote.
func TestForgedCaseVariantKeysRefusedByTheAuthorizer(t *testing.T) {
	t.Parallel()
	key, _, err := devauth.LoadOrCreate(filepath.Join(t.TempDir(), "key.json"))
	require.NoError(t, err)
	now := time.Now()
	mint := func(sub string, perms ...string) string {
		tok, err := key.Mint(devauth.Token{Subject: sub, Permissions: perms, TTL: time.Hour}, now)
		require.NoError(t, err)
		return tok
	}
	srv, err := devserver.Start(devserver.Options{Auth: &devserver.Auth{Key: key.Public(), KeyID: key.ID,
		Token: mint("server", devauth.SystemScope+":"+devauth.RoleAdmin)}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Stop() })
	dialAs := func(token string) client.Client {
		c, err := client.Dial(client.Options{HostPort: srv.FrontendAddress(), Namespace: srv.Namespace(),
			Credentials: client.NewAPIKeyStaticCredentials(token), Logger: logging.NewSDKLogger(os.Stderr, "error"),
			ConnectionOptions: client.ConnectionOptions{TLSDisabled: true}})
		require.NoError(t, err)
		t.Cleanup(c.Close)
		return c
	}
	wc := dialAs(mint("worker", srv.Namespace()+":"+devauth.RoleWorker))
	mallory := dialAs(mint("mallory"))

	queue := "forged-keys"
	w := flow.NewWorker(wc, flow.WorkerOptions{TaskQueue: queue, StopTimeout: 2 * time.Second}, forgedKeysFlow)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	c := flowclient.New(mallory, flowclient.Options{TaskQueue: queue, Identity: "mallory"})
	ctx := ctxT(t, 2*time.Minute)
	run := "forged-keys-1"
	_, err = c.Start(ctx, forgedKeysFlow.Name(), json.RawMessage(`{}`), core.StartOptions{ID: run})
	require.NoError(t, err)
	waitStatus(t, c, run, runs.StatusAwaitingInput)

	// The server refuses with PermissionDenied, the Authorizer's reason naming the key. The
	// answer is sent while the run waits for it; the others once it waits at the gate.
	denied := func(err error, what string) {
		t.Helper()
		var pd *serviceerror.PermissionDenied
		if assert.True(t, errors.As(err, &pd), "%s: %v", what, err) {
			assert.Contains(t, pd.Reason, "cannot be read one way only: ", what)
			assert.Regexp(t, `json key "(By|BY|by|Sender)": (not "(by|sender)": keys are case-sensitive|duplicate key)`, pd.Reason, what)
		}
	}
	denied(forgeries[2].send(ctx, mallory, run), forgeries[2].data)
	_, err = c.Answer(ctx, flowclient.AnswerRequest{Run: run, Name: "notes", Data: json.RawMessage(`{"summary":"mine"}`)})
	require.NoError(t, err, "mallory may answer as herself")
	waitStatus(t, c, run, runs.StatusAwaitingApproval)
	for _, f := range forgeries {
		denied(f.send(ctx, mallory, run), f.name+" "+f.data)
	}
	// The same vote without alice's key passes the server and is the run's to refuse:
	// mallory is no approver.
	err = forgery{false, protocol.UpdateApproval, `{"gate":"ship","vote":"approve","by":"mallory"}`}.send(ctx, mallory, run)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "mallory")
	var pd *serviceerror.PermissionDenied
	assert.False(t, errors.As(err, &pd), "%v", err)

	d, err := c.Describe(ctx, run)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusAwaitingApproval, d.Status, "the gate is still open")
	assert.Empty(t, d.State.Refused, "nothing reached the run")
	assert.Equal(t, 1, countEventsOf(t, ctx, mallory, run, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED), "only mallory's own answer is in history")
	assert.Zero(t, countEventsOf(t, ctx, mallory, run, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED), "no forged Signal is in history")
	assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, statusOf(t, ctx, mallory, run))
}

// TestForgedCaseVariantKeysRefusedByTheRun sends the same forgeries to a run on a server
// without gateflow's Authorizer: the run decodes every decision strictly, so each Update
// is rejected before its Validator (nothing in history) and each Signal is dropped (its
// event is in history, as every Signal is, but nothing acts on it: the gate stays open
// with no vote, the run is not cancelled).
func TestForgedCaseVariantKeysRefusedByTheRun(t *testing.T) {
	t.Parallel()
	queue := fmt.Sprintf("forged-run-%d", time.Now().UnixNano())
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, StopTimeout: 2 * time.Second}, forgedKeysFlow)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue, Identity: "mallory"})
	ctx := ctxT(t, 2*time.Minute)
	run := queue + "-run"
	_, err := c.Start(ctx, forgedKeysFlow.Name(), json.RawMessage(`{}`), core.StartOptions{ID: run})
	require.NoError(t, err)
	waitStatus(t, c, run, runs.StatusAwaitingInput)
	require.ErrorContains(t, forgeries[2].send(ctx, shared.tc, run), `json key "BY": not "by"`)
	_, err = c.Answer(ctx, flowclient.AnswerRequest{Run: run, Name: "notes", Data: json.RawMessage(`{"summary":"mine"}`)})
	require.NoError(t, err)
	waitStatus(t, c, run, runs.StatusAwaitingApproval)
	for _, f := range forgeries {
		err := f.send(ctx, shared.tc, run)
		if f.signal {
			require.NoError(t, err, "a Signal is not checked before it enters history")
			continue
		}
		require.Error(t, err, "%s %s", f.name, f.data)
		assert.Contains(t, err.Error(), "unable to decode the input", "%s %s", f.name, f.data)
	}
	// mallory's genuine vote as a Signal after the forged ones: once the run has refused it
	// (she is no approver), it has read the forged ones before it, and kept none.
	require.NoError(t, shared.tc.SignalWorkflow(ctx, run, "", protocol.SignalApproval, approval.Vote{Gate: "ship", Kind: approval.Approve, By: "mallory"}))
	require.Eventually(t, func() bool {
		d, err := c.Describe(ctx, run)
		return err == nil && d.State != nil && len(d.State.Refused) > 0
	}, 30*time.Second, 100*time.Millisecond)
	d, err := c.Describe(ctx, run)
	require.NoError(t, err)
	require.Len(t, d.State.Refused, 1, "only the genuine vote reached the run")
	assert.Equal(t, "mallory", d.State.Refused[0].By)
	assert.Equal(t, runs.StatusAwaitingApproval, d.Status, "the gate is still open")
	assert.Equal(t, 1, countEventsOf(t, ctx, shared.tc, run, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED), "only the genuine answer is in history")
	assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, statusOf(t, ctx, shared.tc, run), "the forged cancel did nothing")
}

func countEventsOf(t *testing.T, ctx context.Context, tc client.Client, run string, typ enumspb.EventType) int {
	t.Helper()
	n := 0
	it := tc.GetWorkflowHistory(ctx, run, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		if e.GetEventType() == typ {
			n++
		}
	}
	return n
}

func statusOf(t *testing.T, ctx context.Context, tc client.Client, run string) enumspb.WorkflowExecutionStatus {
	t.Helper()
	d, err := tc.DescribeWorkflowExecution(ctx, run, "")
	require.NoError(t, err)
	return d.GetWorkflowExecutionInfo().GetStatus()
}
