package flow

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkpb "go.temporal.io/api/sdk/v1"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/runs"
)

// uiJSON finds the payload the details show for the Web UI's "Send an Update" of update.
var uiJSON = regexp.MustCompile("\\*Send an Update\\* `([a-z.]+)` with `(\\{[^`]*\\})`")

// TestWebUIPayloadFromTheDetailsDecidesTheGate pastes what the details show into the
// approval Update, as a person does in the Web UI: left as shown (no name) it is refused,
// with the name filled in it counts, as an unverified vote.
func TestWebUIPayloadFromTheDetailsDecidesTheGate(t *testing.T) {
	env := newPeopleEnv(t, gateFlow)
	var details string
	shown := map[string]any{}
	named := map[string]any{}
	env.RegisterDelayedCallback(func() {
		details = currentDetails(t, env)
		m := uiJSON.FindStringSubmatch(details)
		require.NotNil(t, m, "the details show an Update to send:\n%s", details)
		assert.Equal(t, protocol.UpdateApproval, m[1])
		require.NoError(t, json.Unmarshal([]byte(m[2]), &shown))
		require.NoError(t, json.Unmarshal([]byte(m[2]), &named))
		named["by"] = "alice"
	}, time.Minute)
	asShown := updateAt(env, 2*time.Minute, protocol.UpdateApproval, &shown)
	withName := updateAt(env, 3*time.Minute, protocol.UpdateApproval, &named)
	out := runGate(t, env, gateIn{Req: approval.Request{Message: "Ship it?", Approvers: []string{"alice"}, Timeout: time.Hour}})

	assert.Contains(t, details, uiIdentityNote)
	assert.ErrorContains(t, asShown.refusal(t), "a vote needs an identity")
	assert.Equal(t, approval.VoteStatus(approval.Approved), withName.vote(t).Status)
	assert.Equal(t, approval.Approved, out.Decision.Outcome)
	st := queryState(t, env)
	require.Len(t, st.Gates, 1)
	require.Len(t, st.Gates[0].Votes, 1)
	assert.Equal(t, "alice", st.Gates[0].Votes[0].By)
	assert.Nil(t, st.Gates[0].Votes[0].Verified, "a vote from the Web UI is unverified")
}

// TestDetailsOfSignedOnlyRunsOfferNoWebUIPayload: where signed decisions are required the
// UI (which cannot sign) gets no payload, and the details say why.
func TestDetailsOfSignedOnlyRunsOfferNoWebUIPayload(t *testing.T) {
	t0 := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	g, err := approval.Open("ship", approval.Request{Message: "ok?"}, t0)
	require.NoError(t, err)
	st := &runs.State{ID: "r", Workflow: "w", Status: runs.StatusAwaitingApproval, Waiting: []string{"approval:ship"}, Gates: []*approval.Gate{g}}
	assert.Contains(t, detailsMarkdown(st, t0), uiLinePrefix)
	st.Auth = &runs.Auth{Required: true}
	md := detailsMarkdown(st, t0)
	assert.NotContains(t, md, uiLinePrefix)
	assert.NotContains(t, md, uiIdentityNote)
	assert.Contains(t, md, uiSignedOnlyNote)
	assert.Contains(t, md, "`flowctl approve r ship`")
}

// TestDetailsCommandsCarryTheRunsTaskQueue: a run served on a queue other than flowctl's
// default shows commands with --task-queue.
func TestDetailsCommandsCarryTheRunsTaskQueue(t *testing.T) {
	env := newUnitEnv(t, runConfig{directory: peopleDir, baseQueue: "team-a"}, gateFlow)
	var during string
	env.RegisterDelayedCallback(func() { during = currentDetails(t, env) }, time.Minute)
	voteAt(env, 2*time.Minute, approve("alice"))
	runGate(t, env, gateIn{Req: approval.Request{Message: "Ship it?", Approvers: []string{"alice"}, Timeout: time.Hour}})
	assert.Contains(t, during, "`flowctl --namespace default-test-namespace --task-queue team-a approve ")
	assert.Equal(t, "flowctl input r x", withConn("flowctl input r x", ""))
	assert.Equal(t, "other", withConn("other", "--task-queue q"))
}

// TestRunHandlersAreDescribed: every Update and Signal a waiting run listens to has a
// description, which the Web UI lists in "Send an Update" and "Send a Signal".
func TestRunHandlersAreDescribed(t *testing.T) {
	env := newPeopleEnv(t, gateFlow)
	var md sdkpb.WorkflowMetadata
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow("__temporal_workflow_metadata")
		require.NoError(t, err)
		require.NoError(t, v.Get(&md))
	}, time.Minute)
	voteAt(env, 2*time.Minute, approve("alice"))
	runGate(t, env, gateIn{Req: approval.Request{Message: "Ship it?", Approvers: []string{"alice"}}})

	described := func(defs []*sdkpb.WorkflowInteractionDefinition) map[string]string {
		out := map[string]string{}
		for _, d := range defs {
			out[d.GetName()] = d.GetDescription()
			assert.NotEmpty(t, d.GetDescription(), "%s has a description", d.GetName())
		}
		return out
	}
	updates := described(md.GetDefinition().GetUpdateDefinitions())
	signals := described(md.GetDefinition().GetSignalDefinitions())
	for _, u := range []string{protocol.UpdateApproval, protocol.UpdateInput, protocol.UpdateBudget, protocol.UpdatePause, protocol.UpdateCancel} {
		assert.Contains(t, updates, u)
	}
	for _, s := range []string{protocol.SignalApproval, protocol.SignalName, protocol.SignalCancel} {
		assert.Contains(t, signals, s)
	}
	assert.Contains(t, updates[protocol.UpdateApproval], `{"gate": "ship", "vote": "approve", "by": "alice"`)
}
