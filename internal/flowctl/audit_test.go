package flowctl

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	historypb "go.temporal.io/api/history/v1"
	updatepb "go.temporal.io/api/update/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/auth"
	"github.com/gateflow/gateflow/internal/decisions"
	"github.com/gateflow/gateflow/internal/protocol"
)

// historyClient serves one run's history.
type historyClient struct {
	client.Client
	events []*historypb.HistoryEvent
}

type eventIterator struct{ events []*historypb.HistoryEvent }

func (it *eventIterator) HasNext() bool { return len(it.events) > 0 }
func (it *eventIterator) Next() (*historypb.HistoryEvent, error) {
	e := it.events[0]
	it.events = it.events[1:]
	return e, nil
}

func (c historyClient) GetWorkflowHistory(context.Context, string, string, bool, enumspb.HistoryEventFilterType) client.HistoryEventIterator {
	return &eventIterator{events: c.events}
}

func payloads(t *testing.T, v any) *commonpb.Payloads {
	t.Helper()
	p, err := converter.GetDefaultDataConverter().ToPayloads(v)
	require.NoError(t, err)
	return p
}

// TestAuditVerifiesDecisionsFromHistory: audit finds the policy the run pinned (the
// SideEffect after the gateflow.auth version marker), verifies each decision's proof
// again at the time it entered history, and reports Signal votes with the server's
// principal, Updates the handler failed, and proofs that do not verify.
func TestAuditVerifiesDecisionsFromHistory(t *testing.T) {
	alice, err := auth.NewKey("alice-1", "alice")
	require.NoError(t, err)
	dir, err := auth.NewDirectory(alice.Public())
	require.NoError(t, err)
	policy := auth.Policy{Required: true, Directory: dir}
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	vote := approval.Vote{Gate: "ship", Kind: approval.Approve, By: "alice"}
	d, err := decisions.Vote("default", "run-1", vote)
	require.NoError(t, err)
	vote.Proof, err = auth.Sign(alice, d, auth.SignOptions{Now: t0})
	require.NoError(t, err)
	forged := approval.Vote{Gate: "ship", Kind: approval.Reject, By: "alice", Proof: vote.Proof} // alice's proof, another vote

	ev := func(id int64, at time.Time, typ enumspb.EventType) *historypb.HistoryEvent {
		return &historypb.HistoryEvent{EventId: id, EventTime: timestamppb.New(at), EventType: typ}
	}
	version := ev(1, t0, enumspb.EVENT_TYPE_MARKER_RECORDED)
	version.Attributes = &historypb.HistoryEvent_MarkerRecordedEventAttributes{MarkerRecordedEventAttributes: &historypb.MarkerRecordedEventAttributes{
		MarkerName: "Version", Details: map[string]*commonpb.Payloads{"change-id": payloads(t, "gateflow.auth")}}}
	pin := ev(2, t0, enumspb.EVENT_TYPE_MARKER_RECORDED)
	pin.Attributes = &historypb.HistoryEvent_MarkerRecordedEventAttributes{MarkerRecordedEventAttributes: &historypb.MarkerRecordedEventAttributes{
		MarkerName: "SideEffect", Details: map[string]*commonpb.Payloads{"data": payloads(t, policy)}}}
	accepted := func(id int64, at time.Time, updateID string, v approval.Vote) *historypb.HistoryEvent {
		e := ev(id, at, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED)
		e.Attributes = &historypb.HistoryEvent_WorkflowExecutionUpdateAcceptedEventAttributes{WorkflowExecutionUpdateAcceptedEventAttributes: &historypb.WorkflowExecutionUpdateAcceptedEventAttributes{
			AcceptedRequest: &updatepb.Request{Meta: &updatepb.Meta{UpdateId: updateID, Identity: "123@laptop"},
				Input: &updatepb.Input{Name: protocol.UpdateApproval, Args: payloads(t, v)}}}}
		return e
	}
	failed := ev(5, t0.Add(2*time.Minute), enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED)
	failed.Attributes = &historypb.HistoryEvent_WorkflowExecutionUpdateCompletedEventAttributes{WorkflowExecutionUpdateCompletedEventAttributes: &historypb.WorkflowExecutionUpdateCompletedEventAttributes{
		Meta: &updatepb.Meta{UpdateId: "u2"}, Outcome: &updatepb.Outcome{Value: &updatepb.Outcome_Failure{Failure: &failurepb.Failure{Message: "gate closed"}}}}}
	signal := ev(6, t0.Add(3*time.Minute), enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)
	signal.Principal = &commonpb.Principal{Type: "jwt", Name: "alice"}
	signal.Attributes = &historypb.HistoryEvent_WorkflowExecutionSignaledEventAttributes{WorkflowExecutionSignaledEventAttributes: &historypb.WorkflowExecutionSignaledEventAttributes{
		SignalName: protocol.SignalApproval, Input: payloads(t, approval.Vote{Gate: "ship", Kind: approval.Approve, By: "alice"}), Identity: "tctl"}}
	other := ev(7, t0, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)
	other.Attributes = &historypb.HistoryEvent_WorkflowExecutionSignaledEventAttributes{WorkflowExecutionSignaledEventAttributes: &historypb.WorkflowExecutionSignaledEventAttributes{SignalName: "gateflow.signal"}}

	a := &app{namespace: "default"}
	hc := historyClient{events: []*historypb.HistoryEvent{version, pin, accepted(3, t0.Add(time.Minute), "u1", vote),
		accepted(4, t0.Add(2*time.Minute), "u2", forged), failed, signal, other}}
	got, err := a.audit(t.Context(), hc, "run-1")
	require.NoError(t, err)
	require.Len(t, got, 3, "two Updates and the Signal vote; other signals are no decisions")

	assert.Equal(t, "signature", got[0].Verified)
	require.NotNil(t, got[0].Proof)
	assert.Equal(t, "alice-1", got[0].Proof.KeyID)
	assert.Equal(t, "accepted", got[0].Outcome)
	assert.Equal(t, "123@laptop", got[0].ClientIdentity)

	assert.Equal(t, "invalid", got[1].Verified, "alice's proof does not sign a reject")
	assert.Contains(t, got[1].Reason, "mismatch")
	assert.Equal(t, "failed", got[1].Outcome)
	assert.Equal(t, "gate closed", got[1].Error)

	assert.Equal(t, "signal", got[2].Via)
	assert.Equal(t, "unverified", got[2].Verified)
	assert.Equal(t, "refused", got[2].Outcome, "the run requires proofs: Signal votes are refused")
	assert.Equal(t, "alice", got[2].Principal)

	// Without a pinned policy a proof cannot be checked.
	got, err = a.audit(t.Context(), historyClient{events: []*historypb.HistoryEvent{accepted(3, t0, "u1", vote)}}, "run-1")
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "unverified", got[0].Verified)
	assert.Equal(t, "the run pins no decision policy", got[0].Reason)
}
