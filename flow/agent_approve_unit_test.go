package flow

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/auth"
	"github.com/gateflow/gateflow/runs"
)

type deployArgs struct {
	Env      string `json:"env"`
	Replicas int    `json:"replicas,omitempty"`
}

// deploys logs the calls of deployTool: the tool's side effect.
var deploys = &callLog[deployArgs]{}

func deployTool(_ context.Context, in deployArgs) (string, error) {
	deploys.add(in)
	return "deployed " + in.Env, nil
}

// approveEnv is a unit env running loopFlow(a) with deployTool registered and the turns
// answered by script; the run's ID is testRun, so votes can be signed for it.
func approveEnv(t *testing.T, cfg runConfig, a AgentLoop, script func(int, activities.AgentTurn) (activities.AgentTurnResult, error)) (*testsuite.TestWorkflowEnvironment, *callLog[activities.AgentTurn], *Flow[none, string]) {
	t.Helper()
	deploys = &callLog[deployArgs]{}
	f := loopFlow(a)
	env := newUnitEnv(t, cfg, f)
	env.SetStartTime(authT0)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: testRun})
	env.RegisterActivity(deployTool)
	env.RegisterActivity(lookupHost)
	return env, mockTurns(env, script), f
}

func approvedDeploy(req approval.Request) AgentLoop {
	return AgentLoop{Agent: activities.Agent{Prompt: "fix prod", Model: "m"},
		Tools: []Tool{ActivityTool("deploy", deployTool, ToolApproval(req)), ActivityTool("lookup", lookupHost)}}
}

func TestToolApprovalRejectThenApproveWithEdits(t *testing.T) {
	req := approval.Request{Approvers: []string{"alice", "bob"}}
	env, turns, f := approveEnv(t, runConfig{}, approvedDeploy(req), func(n int, _ activities.AgentTurn) (activities.AgentTurnResult, error) {
		switch n {
		case 1:
			return turnAnswer("prod is broken: redeploy it", toolCall("c1", "deploy", `{"env":"prod"}`), toolCall("c2", "lookup", `{"host":"a"}`)), nil
		case 2:
			return turnAnswer("then with 3 replicas", toolCall("c3", "deploy", `{"env":"prod","replicas":3}`)), nil
		}
		return turnAnswer("done"), nil
	})
	min := func(m int) time.Duration { return time.Duration(m) * time.Minute }
	open1 := stateAt(t, env, min(1))
	var details string
	env.RegisterDelayedCallback(func() { details = currentDetails(t, env) }, min(1))
	stranger := voteAt(env, min(2), approval.Vote{Gate: "triage/deploy", Kind: approval.Approve, By: "mallory"})
	rejected := voteAt(env, min(3), approval.Vote{Gate: "triage/deploy", Kind: approval.Reject, By: "bob", Comment: "not prod"})
	unknownField := voteAt(env, min(4), approval.Vote{Gate: "triage/deploy#2", Kind: approval.Approve, By: "alice", Arguments: json.RawMessage(`{"env":"prod","force":true}`)})
	wrongType := voteAt(env, min(5), approval.Vote{Gate: "triage/deploy#2", Kind: approval.Approve, By: "alice", Arguments: json.RawMessage(`{"env":5}`)})
	rejectEdits := voteAt(env, min(6), approval.Vote{Gate: "triage/deploy#2", Kind: approval.Reject, By: "alice", Arguments: json.RawMessage(`{"env":"x"}`)})
	open2 := stateAt(t, env, min(7))
	edited := voteAt(env, min(8), approval.Vote{Gate: "triage/deploy#2", Kind: approval.Approve, By: "alice", Arguments: json.RawMessage(`{"env":"staging","replicas":1}`)})

	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())

	// The first gate shows the call, its arguments and the model's reason.
	require.Len(t, open1.Gates, 1)
	g := open1.Gates[0]
	assert.Equal(t, "triage/deploy", g.Name)
	require.NotNil(t, g.Request.Tool)
	assert.Equal(t, "deploy", g.Request.Tool.Name)
	assert.JSONEq(t, `{"env":"prod"}`, string(g.Request.Tool.Arguments))
	assert.Equal(t, "prod is broken: redeploy it", g.Request.Tool.Reason)
	assert.Equal(t, `Run tool deploy with {"env":"prod"}?`, g.Request.Message)
	assert.Contains(t, g.Request.Details, "```json\n{\n  \"env\": \"prod\"\n}\n```")
	assert.Contains(t, g.Request.Details, "> prod is broken: redeploy it")
	assert.Contains(t, open1.Waiting, "approval:triage/deploy")
	assert.Contains(t, details, "**Approval `triage/deploy`**")
	assert.Contains(t, details, "  - Tool `deploy`, arguments `{\"env\":\"prod\"}`; an approval may edit them (`--arguments JSON`)")

	assert.ErrorContains(t, stranger.refusal(t), "mallory may not decide")
	assert.Equal(t, approval.VoteStatus(approval.Rejected), rejected.vote(t).Status)
	assert.ErrorContains(t, unknownField.refusal(t), `approval triage/deploy#2: alice's edited arguments do not fit tool deploy:`)
	assert.ErrorContains(t, unknownField.refusal(t), `force`)
	assert.ErrorContains(t, wrongType.refusal(t), `alice's edited arguments do not fit tool deploy`)
	assert.ErrorContains(t, rejectEdits.refusal(t), "only an approval may edit them")
	require.Len(t, open2.Gates, 2)
	assert.Empty(t, open2.Gates[1].Votes, "refused edits leave the gate open and untouched")
	assert.Equal(t, approval.VoteStatus(approval.Approved), edited.vote(t).Status)

	// Rejected: the tool did not run, the model was told who refused and why; the other
	// call of the turn ran. Approved with edits: it ran once, with the edits.
	assert.Equal(t, []deployArgs{{Env: "staging", Replicas: 1}}, deploys.all())
	all := turns.all()
	require.Len(t, all, 3)
	res := all[1].Messages[2:]
	require.Len(t, res, 2)
	assert.Equal(t, llm.ToolResult("c1", "The call of tool deploy was refused by people and did not run: bob rejected it: not prod.", true), res[0])
	assert.Equal(t, llm.ToolResult("c2", `"ip-a"`, false), res[1])
	last := all[2].Messages[len(all[2].Messages)-1]
	assert.Equal(t, "c3", last.ToolCallID)
	assert.False(t, last.IsError)
	assert.Equal(t, "\"deployed staging\"\n\n(alice edited the arguments before the call; the tool ran with {\"env\":\"staging\",\"replicas\":1})", last.Text)

	st := queryState(t, env)
	var ids []string
	for _, s := range st.Steps {
		ids = append(ids, s.ActivityID+" "+string(s.Status))
	}
	assert.Equal(t, []string{"triage completed", "triage/turn-1 completed", "triage/approve-deploy failed", "triage/lookup completed",
		"triage/turn-2 completed", "triage/approve-deploy#2 completed", "triage/deploy completed", "triage/turn-3 completed"}, ids)
	for _, s := range st.Steps {
		if s.ActivityID == "triage/approve-deploy#2" {
			assert.Equal(t, `approved by alice; arguments edited by alice: {"env":"staging","replicas":1}`, s.Output)
		}
	}
}

// TestToolApprovalTimeoutAndFail: a deadline with reject tells the model; one with fail
// fails the agent step.
func TestToolApprovalTimeoutAndFail(t *testing.T) {
	script := func(n int, _ activities.AgentTurn) (activities.AgentTurnResult, error) {
		if n == 1 {
			return turnAnswer("", toolCall("c1", "deploy", `{"env":"prod"}`)), nil
		}
		return turnAnswer("gave up"), nil
	}
	env, turns, f := approveEnv(t, runConfig{}, approvedDeploy(approval.Request{Timeout: time.Hour}), script)
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	assert.Empty(t, deploys.all())
	assert.Contains(t, turns.all()[1].Messages[2].Text, "nobody approved it in time (the approval timed out)")

	env, _, f = approveEnv(t, runConfig{}, approvedDeploy(approval.Request{Timeout: time.Hour, OnTimeout: approval.FailOnTimeout}), script)
	env.ExecuteWorkflow(f.Name(), none{})
	require.Error(t, env.GetWorkflowError())
	assert.Empty(t, deploys.all())
	assert.Equal(t, runs.StepFailed, stepByName(t, queryState(t, env), "triage").Status)
}

// voteCase is one generated vote at the tool's gate.
type voteCase struct {
	by     string
	kind   approval.VoteKind
	edit   string // "" none, else the arguments sent
	valid  bool   // the edit fits the tool
	proof  string // "none", "good", or "plain" (signed without the edits)
	minute int
}

// TestToolApprovalProperty: over many generated vote sequences (approve, reject, edits
// valid and not, proofs genuine, missing or not covering the edits, with proofs required
// or not, quorum 1 or 2), the tool runs iff the gate was approved, once, with exactly the
// edits of the last counted approval that made some (else the model's arguments).
func TestToolApprovalProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 2))
	k := newAuthKeys(t, false)
	people := []string{"alice", "bob", "mallory"} // mallory may not decide
	seen := map[string]int{}
	for c := range 120 {
		required := r.IntN(2) == 0
		quorum := 1 + r.IntN(2)
		var votes []voteCase
		for i := range 1 + r.IntN(5) {
			v := voteCase{by: people[r.IntN(3)], kind: approval.Approve, proof: "none", minute: i + 1}
			if r.IntN(4) == 0 {
				v.kind = approval.Reject
			}
			if v.kind == approval.Approve && r.IntN(2) == 0 {
				v.valid = r.IntN(3) > 0
				v.edit = fmt.Sprintf(`{"env":"e%d-%d","replicas":%d}`, c, i, r.IntN(9))
				if !v.valid {
					v.edit = fmt.Sprintf(`{"env":"e%d","bogus":%d}`, c, i)
				}
			}
			if v.by != "mallory" {
				v.proof = []string{"none", "good", "good", "plain"}[r.IntN(4)]
			}
			votes = append(votes, v)
		}
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			policy := *k.policy
			policy.Required = required
			seen[checkVoteSequence(t, k, &policy, quorum, votes)]++
		})
	}
	for _, kind := range []string{"not approved", "approved", "approved with edits"} {
		assert.GreaterOrEqual(t, seen[kind], 10, "the generated cases cover %q: %v", kind, seen)
	}
}

func keyOf(k authKeys, by string) auth.Key {
	if by == "alice" {
		return k.alice
	}
	return k.bob
}

// checkVoteSequence runs one case and returns what it expected ("not approved",
// "approved", "approved with edits").
func checkVoteSequence(t *testing.T, k authKeys, pol *auth.Policy, quorum int, votes []voteCase) string {
	t.Helper()
	req := approval.Request{Approvers: []string{"alice", "bob"}, Required: quorum, Timeout: time.Hour}
	env, _, f := approveEnv(t, runConfig{auth: pol}, approvedDeploy(req), func(n int, _ activities.AgentTurn) (activities.AgentTurnResult, error) {
		if n == 1 {
			return turnAnswer("", toolCall("c1", "deploy", `{"env":"prod"}`)), nil
		}
		return turnAnswer("done"), nil
	})
	// The model: what the run must make of the votes.
	approvals := map[string]bool{}
	var lastEdit string
	outcome := ""
	for _, v := range votes {
		vote := approval.Vote{Gate: "triage/deploy", Kind: v.kind, By: v.by}
		if v.edit != "" {
			vote.Arguments = json.RawMessage(v.edit)
		}
		at := authT0.Add(time.Duration(v.minute) * time.Minute)
		switch v.proof {
		case "good":
			vote = signedVote(t, keyOf(k, v.by), testRun, vote, at)
		case "plain":
			plain := vote
			plain.Arguments = nil
			vote.Proof = signedVote(t, keyOf(k, v.by), testRun, plain, at).Proof
		}
		voteAt(env, time.Duration(v.minute)*time.Minute, vote)
		covered := v.proof == "good" || (v.proof == "plain" && v.edit == "") // the proof signs what the vote says
		accepted := outcome == "" && v.by != "mallory" && (v.edit == "" || v.valid) &&
			(covered || (v.proof == "none" && !pol.Required))
		if !accepted {
			continue
		}
		if v.kind == approval.Reject {
			outcome = "rejected"
			continue
		}
		if approvals[v.by] {
			continue // a repeat: kept as a duplicate, its edits do not count
		}
		approvals[v.by] = true
		if v.edit != "" {
			lastEdit = v.edit
		}
		if len(approvals) >= quorum {
			outcome = "approved"
		}
	}
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	ran := deploys.all()
	desc := fmt.Sprintf("votes %+v, quorum %d, required %v", votes, quorum, pol.Required)
	if outcome != "approved" {
		assert.Empty(t, ran, desc)
		return "not approved"
	}
	require.Len(t, ran, 1, desc)
	want := deployArgs{Env: "prod"}
	if lastEdit != "" {
		want = deployArgs{}
		require.NoError(t, json.Unmarshal([]byte(lastEdit), &want))
	}
	assert.Equal(t, want, ran[0], desc)
	if lastEdit != "" {
		return "approved with edits"
	}
	return "approved"
}

// TestToolApprovalParallelCallsAndTwoLoops: two calls of the tool in one turn wait at
// their own gates side by side, decided in any order, their results in the model's order;
// a second loop of the same name in the run does not reuse the first one's gate names.
func TestToolApprovalParallelCallsAndTwoLoops(t *testing.T) {
	deploys = &callLog[deployArgs]{}
	a := approvedDeploy(approval.Request{})
	f := Define("unit/agent-approve-twice", func(ctx *Context, _ none) (string, error) {
		for range 2 {
			if _, err := ctx.AgentLoop("triage", a); err != nil {
				return "", err
			}
		}
		return "", nil
	})
	env := newUnitEnv(t, runConfig{}, f)
	env.RegisterActivity(deployTool)
	env.RegisterActivity(lookupHost)
	turns := mockTurns(env, func(n int, in activities.AgentTurn) (activities.AgentTurnResult, error) {
		if n == 1 && in.Messages[0].Text == "fix prod" && len(in.Messages) == 1 {
			return turnAnswer("", toolCall("c1", "deploy", `{"env":"a"}`), toolCall("c2", "deploy", `{"env":"b"}`)), nil
		}
		return turnAnswer("done"), nil
	})
	min := func(m int) time.Duration { return time.Duration(m) * time.Minute }
	open := stateAt(t, env, min(1))
	second := voteAt(env, min(2), approval.Vote{Gate: "triage/deploy#2", Kind: approval.Approve, By: "alice", Arguments: json.RawMessage(`{"env":"b2"}`)})
	first := voteAt(env, min(3), approval.Vote{Gate: "triage/deploy", Kind: approval.Reject, By: "bob"})
	third := voteAt(env, min(4), approval.Vote{Gate: "triage/deploy#3", Kind: approval.Approve, By: "alice"})
	fourth := voteAt(env, min(5), approval.Vote{Gate: "triage/deploy#4", Kind: approval.Approve, By: "alice"})
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())

	require.Len(t, open.Gates, 2, "both calls wait at once")
	assert.Equal(t, []string{"approval:triage/deploy", "approval:triage/deploy#2"}, open.Waiting)
	second.vote(t)
	first.vote(t)
	third.vote(t)
	fourth.vote(t)
	assert.ElementsMatch(t, []deployArgs{{Env: "b2"}, {Env: "a"}, {Env: "b"}}, deploys.all())
	all := turns.all()
	res := all[1].Messages[2:]
	require.Len(t, res, 2)
	assert.Equal(t, "c1", res[0].ToolCallID)
	assert.True(t, res[0].IsError)
	assert.Equal(t, "c2", res[1].ToolCallID)
	assert.Contains(t, res[1].Text, "deployed b2")
	var names []string
	for _, g := range queryState(t, env).Gates {
		names = append(names, g.Name)
	}
	assert.Equal(t, []string{"triage/deploy", "triage/deploy#2", "triage/deploy#3", "triage/deploy#4"}, names)
}
