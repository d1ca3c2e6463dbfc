package flowctl

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
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
	d.FirstRunID = "first-1"
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
	hc := historyClient{events: []*historypb.HistoryEvent{started(t0, "first-1"), version, pin, runVersion(t0), accepted(3, t0.Add(time.Minute), "u1", vote),
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

func started(at time.Time, firstRun string) *historypb.HistoryEvent {
	return &historypb.HistoryEvent{EventId: 1, EventTime: timestamppb.New(at), EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
		Attributes: &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{WorkflowExecutionStartedEventAttributes: &historypb.WorkflowExecutionStartedEventAttributes{
			FirstExecutionRunId: firstRun, OriginalExecutionRunId: firstRun}}}
}

// runVersion is the marker of runs whose decisions must bind the run (run_auth.go).
func runVersion(at time.Time) *historypb.HistoryEvent {
	return &historypb.HistoryEvent{EventTime: timestamppb.New(at), EventType: enumspb.EVENT_TYPE_MARKER_RECORDED,
		Attributes: &historypb.HistoryEvent_MarkerRecordedEventAttributes{MarkerRecordedEventAttributes: &historypb.MarkerRecordedEventAttributes{
			MarkerName: "Version", Details: map[string]*commonpb.Payloads{"change-id": {Payloads: []*commonpb.Payload{mustPayload("gateflow.auth.run")}}}}}}
}

func mustPayload(v any) *commonpb.Payload {
	p, err := converter.GetDefaultDataConverter().ToPayload(v)
	if err != nil {
		panic(err)
	}
	return p
}

// TestAuditRunBinding: on a run that requires proofs bound to it, a proof signed for an
// earlier run with the same workflow ID is invalid; on a run pinned before decisions bound
// the run, a proof that binds only the workflow ID verifies and is reported as not bound
// to a run. A payload recorded before payloads were decoded strictly (mallory's "by" beside
// alice's "By") is listed as invalid, claiming no one, rather than failing the audit.
func TestAuditRunBinding(t *testing.T) {
	alice, err := auth.NewKey("alice-1", "alice")
	require.NoError(t, err)
	dir, err := auth.NewDirectory(alice.Public())
	require.NoError(t, err)
	policy := auth.Policy{Required: true, Directory: dir}
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	vote := approval.Vote{Gate: "ship", Kind: approval.Approve, By: "alice"}
	d, err := decisions.Vote("default", "b3", vote)
	require.NoError(t, err)
	d.FirstRunID = "first-old"
	oldRun := vote
	oldRun.Proof, err = auth.Sign(alice, d, auth.SignOptions{Now: t0})
	require.NoError(t, err)
	unbound := vote
	unbound.Proof = unboundProof(t, alice, d, t0)

	pinned := func(bound bool, events ...*historypb.HistoryEvent) []*historypb.HistoryEvent {
		out := []*historypb.HistoryEvent{started(t0, "first-new"),
			{EventTime: timestamppb.New(t0), EventType: enumspb.EVENT_TYPE_MARKER_RECORDED, Attributes: &historypb.HistoryEvent_MarkerRecordedEventAttributes{MarkerRecordedEventAttributes: &historypb.MarkerRecordedEventAttributes{
				MarkerName: "Version", Details: map[string]*commonpb.Payloads{"change-id": {Payloads: []*commonpb.Payload{mustPayload("gateflow.auth")}}}}}},
			{EventTime: timestamppb.New(t0), EventType: enumspb.EVENT_TYPE_MARKER_RECORDED, Attributes: &historypb.HistoryEvent_MarkerRecordedEventAttributes{MarkerRecordedEventAttributes: &historypb.MarkerRecordedEventAttributes{
				MarkerName: "SideEffect", Details: map[string]*commonpb.Payloads{"data": {Payloads: []*commonpb.Payload{mustPayload(policy)}}}}}}}
		if bound {
			out = append(out, runVersion(t0))
		}
		return append(out, events...)
	}
	accepted := func(data string) *historypb.HistoryEvent {
		return &historypb.HistoryEvent{EventTime: timestamppb.New(t0), EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED,
			Attributes: &historypb.HistoryEvent_WorkflowExecutionUpdateAcceptedEventAttributes{WorkflowExecutionUpdateAcceptedEventAttributes: &historypb.WorkflowExecutionUpdateAcceptedEventAttributes{
				AcceptedRequest: &updatepb.Request{Meta: &updatepb.Meta{UpdateId: data}, Input: &updatepb.Input{Name: protocol.UpdateApproval,
					Args: &commonpb.Payloads{Payloads: []*commonpb.Payload{{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(data)}}}}}}}}
	}
	asJSON := func(v approval.Vote) string {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return string(b)
	}
	a := &app{namespace: "default"}

	got, err := a.audit(t.Context(), historyClient{events: pinned(true, accepted(asJSON(oldRun)), accepted(asJSON(unbound)),
		accepted(`{"gate":"ship","vote":"approve","by":"mallory","By":"alice"}`))}, "b3")
	require.NoError(t, err)
	require.Len(t, got, 3)
	assert.Equal(t, "invalid", got[0].Verified)
	assert.Contains(t, got[0].Reason, `the token signs run "first-old" of "b3", not "first-new": another run with the same workflow ID`)
	assert.Equal(t, "invalid", got[1].Verified)
	assert.Contains(t, got[1].Reason, "signed before decisions bound the run")
	assert.Equal(t, "invalid", got[2].Verified)
	assert.Contains(t, got[2].Reason, `malformed payload: decode update gateflow.approval: `)
	assert.Contains(t, got[2].Reason, `json key "By": not "by"`)
	assert.Empty(t, got[2].By, "a payload read two ways claims no one")

	got, err = a.audit(t.Context(), historyClient{events: pinned(false, accepted(asJSON(unbound)), accepted(asJSON(oldRun)))}, "b3")
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, "signature", got[0].Verified, "runs pinned before the binding accepted such proofs")
	require.NotNil(t, got[0].Proof)
	assert.True(t, got[0].Proof.Unbound)
	assert.Contains(t, got[0].Reason, "not bound to a run")
	assert.Equal(t, "invalid", got[1].Verified, "a proof that binds another run is refused on any run")
}

// unboundProof signs d as clients did before decisions bound the run: no first run ID.
func unboundProof(t *testing.T, k auth.Key, d auth.Decision, at time.Time) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: jose.JSONWebKey{Key: k.Private, KeyID: k.ID}},
		(&jose.SignerOptions{}).WithType("JWT"))
	require.NoError(t, err)
	c := map[string]any{"ns": d.Namespace, "run": d.Run, "target": d.Target, "kind": d.Kind, "payload_sha256": d.PayloadSHA256,
		"sub": d.By, "aud": auth.Audience(d.Namespace), "iat": at.Unix(), "exp": at.Add(time.Minute).Unix(), "nonce": "n1"}
	tok, err := jwt.Signed(signer).Claims(c).Serialize()
	require.NoError(t, err)
	return tok
}
