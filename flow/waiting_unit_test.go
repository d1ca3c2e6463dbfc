package flow

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/searchattr"
	"github.com/gateflow/gateflow/signals"
)

// waitingOf describes what an upsert does to FlowWaiting: "set a,b", "unset" or "" when
// it leaves it alone. An unset is a key with a nil value, which the typed getters do not
// show, so it is read from the attributes' printed form.
func waitingOf(sa temporal.SearchAttributes) string {
	if v, ok := sa.GetKeywordList(searchattr.WaitingKey); ok {
		return "set " + strings.Join(v, ",")
	}
	if strings.Contains(fmt.Sprint(sa), "{{"+searchattr.Waiting+" ") {
		return "unset"
	}
	return ""
}

type saUpsert struct{ Status, Waiting string }

func TestFlowWaitingIsUpsertedWhileTheRunWaits(t *testing.T) {
	var seen callLog[string] // FlowWaiting as the run sees it after each wait
	look := func(ctx *Context) {
		v, ok := workflow.GetTypedSearchAttributes(ctx.Workflow()).GetKeywordList(searchattr.WaitingKey)
		seen.add(fmt.Sprint(v, ok))
	}
	f := Define("people/waits", func(ctx *Context, _ none) (none, error) {
		if _, err := ctx.Approval("ship", approval.Request{Approvers: []string{"alice"}}); err != nil {
			return none{}, err
		}
		look(ctx)
		if _, err := Input[releaseNotes](ctx, "notes", signals.InputRequest{Prompt: "Notes?"}); err != nil {
			return none{}, err
		}
		look(ctx)
		if _, err := WaitSignal[ping](ctx, "ping", "v1", 0); err != nil {
			return none{}, err
		}
		look(ctx)
		return none{}, nil
	})
	env := newPeopleEnv(t, f)
	mockMailbox(env, nil)
	var upserts callLog[saUpsert]
	env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		sa := args.Get(0).(temporal.SearchAttributes)
		status, _ := sa.GetKeyword(searchattr.StatusKey)
		upserts.add(saUpsert{status, waitingOf(sa)})
	}).Return(nil)
	voteAt(env, time.Minute, approve("alice"))
	updateAt(env, 2*time.Minute, protocol.UpdateInput, protocol.InputAnswer{Name: "notes", Data: json.RawMessage(`{"summary":"s","risk":"low"}`), By: "bob"})
	signalAt(env, 3*time.Minute, protocol.SignalName, signals.Envelope{Name: "ping", Key: "v1", ID: "p", Payload: json.RawMessage(`{"n":1}`), Sender: "bob"})
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())

	assert.Equal(t, []saUpsert{
		{"running", ""},
		{"awaiting_approval", "set approval:ship"},
		{"running", "unset"},
		{"awaiting_input", "set input:notes"},
		{"running", "unset"},
		{"waiting_signal", "set signal:ping/v1"},
		{"running", "unset"},
		{"completed", ""},
	}, upserts.all())
	assert.Equal(t, []string{"[] false", "[] false", "[] false"}, seen.all(), "FlowWaiting is gone once each wait ended")
}

func TestFlowWaitingIsNotUpsertedWhenNothingChanged(t *testing.T) {
	// An early vote closes the gate as it opens: no wait, no FlowWaiting.
	env := newPeopleEnv(t, gateFlow)
	var upserts callLog[saUpsert]
	env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		sa := args.Get(0).(temporal.SearchAttributes)
		status, _ := sa.GetKeyword(searchattr.StatusKey)
		upserts.add(saUpsert{status, waitingOf(sa)})
	}).Return(nil)
	voteAt(env, time.Minute, approve("alice"))
	runGate(t, env, gateIn{Req: approval.Request{Approvers: []string{"alice"}}, Before: 10 * time.Minute})
	assert.Equal(t, []saUpsert{{"running", ""}, {"sleeping", ""}, {"running", ""}, {"completed", ""}}, upserts.all())
}

func TestDetailsMarkdownWaitingForPeople(t *testing.T) {
	t0 := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	open, err := approval.Open("ship", approval.Request{Message: "Ship v1.4\nto prod? | now", Approvers: []string{"alice", "group:release"},
		Required: 2, Timeout: 2 * time.Hour, OnTimeout: approval.ApproveOnTimeout}, t0)
	require.NoError(t, err)
	_, err = open.Apply(approval.Vote{Gate: "ship", Kind: approval.Approve, By: "alice", At: t0}, nil)
	require.NoError(t, err)
	anyone, err := approval.Open("anyone", approval.Request{Message: "ok?"}, t0)
	require.NoError(t, err)
	closed, err := approval.Open("closed", approval.Request{Message: "done"}, t0)
	require.NoError(t, err)
	_, err = closed.Apply(approval.Vote{Gate: "closed", Kind: approval.Approve, By: "bob", At: t0}, nil)
	require.NoError(t, err)

	notes, err := signals.NewInput("notes", signals.InputRequest{Prompt: "Release\nnotes?", Assignees: []string{"carol", "group:writers"}, Timeout: 30 * time.Minute}, t0)
	require.NoError(t, err)
	free, err := signals.NewInput("free", signals.InputRequest{Prompt: "Anything?"}, t0)
	require.NoError(t, err)
	answered, err := signals.NewInput("answered", signals.InputRequest{Prompt: "Done?"}, t0)
	require.NoError(t, err)
	_, err = answered.Accept("bob", json.RawMessage(`1`), t0, nil)
	require.NoError(t, err)

	deadline := t0.Add(time.Hour)
	st := &runs.State{
		ID: "run-7", Workflow: "release", Status: runs.StatusAwaitingApproval, Attempt: 1, MaxAttempts: 1,
		Waiting: []string{"approval:anyone", "approval:ship", "input:free", "input:notes", "signal:deploy-done/v1.2"},
		Gates:   []*approval.Gate{closed, open, anyone},
		Inputs:  []*signals.Input{answered, notes, free},
		SignalWaits: []*signals.Wait{
			{Name: "deploy-done", Key: "v1.2", Since: t0, Deadline: &deadline},
			{Name: "got", Since: t0, Received: &signals.Envelope{Name: "got", ID: "x", Sender: "bob"}},
		},
	}
	want := "**release** — awaiting_approval\n\nCost **$0.0000**\n\n" +
		"**Waiting for people**\n\n" +
		"- **Approval `ship`**: Ship v1.4 to prod? \\| now — 1 of 2 approvals from alice, group:release, until 2025-06-01T11:00:00Z (then approve). Voted: alice approve. " +
		"Answer: `flowctl approve run-7 ship` (or `reject`, `request-changes --comment ...`)\n" +
		"  - Web UI: *Send an Update* `gateflow.approval` with `{\"gate\":\"ship\",\"vote\":\"approve\",\"by\":\"\"}` " +
		"(vote: `approve`, `reject` or `request_changes`, which needs a `comment`)\n" +
		"- **Approval `anyone`**: ok? — 0 of 1 approvals from anyone, no deadline (then reject). " +
		"Answer: `flowctl approve run-7 anyone` (or `reject`, `request-changes --comment ...`)\n" +
		"  - Web UI: *Send an Update* `gateflow.approval` with `{\"gate\":\"anyone\",\"vote\":\"approve\",\"by\":\"\"}` " +
		"(vote: `approve`, `reject` or `request_changes`, which needs a `comment`)\n" +
		"- **Input `notes`**: Release notes? — from carol, group:writers, until 2025-06-01T09:30:00Z. Answer: `flowctl input run-7 notes --data '{...}'`\n" +
		"  - Web UI: *Send an Update* `gateflow.input` with `{\"name\":\"notes\",\"data\":{},\"by\":\"\"}` (data: your answer, as its schema asks)\n" +
		"- **Input `free`**: Anything? — from anyone, no deadline. Answer: `flowctl input run-7 free --data '{...}'`\n" +
		"  - Web UI: *Send an Update* `gateflow.input` with `{\"name\":\"free\",\"data\":{},\"by\":\"\"}` (data: your answer, as its schema asks)\n" +
		"- **Signal `deploy-done`** key `v1.2`, until 2025-06-01T10:00:00Z. Send: `flowctl signal deploy-done --key v1.2 --data '{...}'`\n" +
		"\n" + uiIdentityNote + "\n\n" +
		"No steps yet.\n"
	assert.Equal(t, want, detailsMarkdown(st, t0.Add(time.Minute)))

	st.ID = ""
	assert.Contains(t, detailsMarkdown(st, t0), "`flowctl approve RUN ship`", "a placeholder when the run's ID is not known")

	done := &runs.State{Workflow: "release", Status: runs.StatusRunning, Gates: []*approval.Gate{closed}, Inputs: []*signals.Input{answered},
		SignalWaits: []*signals.Wait{st.SignalWaits[1]}}
	assert.NotContains(t, detailsMarkdown(done, t0), "Waiting for people", "nothing open, no section")
}

func TestDetailsOfAWaitingRunNameTheRunAndTheCommand(t *testing.T) {
	env := newPeopleEnv(t, gateFlow)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "release-42"})
	var during, after string
	env.RegisterDelayedCallback(func() { during = currentDetails(t, env) }, time.Minute)
	voteAt(env, 2*time.Minute, approve("alice"))
	env.RegisterDelayedCallback(func() { after = currentDetails(t, env) }, 3*time.Minute)
	runGate(t, env, gateIn{Req: approval.Request{Message: "Ship it?", Approvers: []string{"alice"}, Timeout: time.Hour}, After: 10 * time.Minute})
	start := queryState(t, env).StartedAt
	assert.Contains(t, during, "**people/gate** — awaiting_approval")
	assert.Contains(t, during, "**Waiting for people**\n\n- **Approval `ship`**: Ship it? — 0 of 1 approvals from alice, until "+
		start.Add(time.Hour).UTC().Format(time.RFC3339)+" (then reject). Answer: `flowctl --namespace default-test-namespace approve release-42 ship`",
		"the command names the run's namespace, not flowctl's default")
	assert.Contains(t, during, "\n  - Web UI: *Send an Update* `gateflow.approval` with `{\"gate\":\"ship\",\"vote\":\"approve\",\"by\":\"\"}`")
	assert.Contains(t, during, "counts as **unverified**")
	assert.Contains(t, during, "| ship | approval | running |")
	assert.NotContains(t, after, "Waiting for people")
	assert.Contains(t, after, "| ship | approval | completed | 1 | 2m0s | - | approved by alice |")
}
