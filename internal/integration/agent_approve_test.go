package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/auth"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/decisions"
	"github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/runs"
	"github.com/gateflow/gateflow/signals"
)

// approveDeployArgs are the arguments of the deploy tool that needs approval.
type approveDeployArgs struct {
	Env      string `json:"env"`
	Replicas int    `json:"replicas,omitempty"`
}

// deployedMu guards deployed, the deploy tool's side effect: the environments it deployed.
var (
	deployedMu sync.Mutex
	deployed   []approveDeployArgs
)

// ApproveDeploy is the activity tool that needs approval.
func ApproveDeploy(_ context.Context, in approveDeployArgs) (string, error) {
	deployedMu.Lock()
	defer deployedMu.Unlock()
	deployed = append(deployed, in)
	return "deployed " + in.Env, nil
}

func deployedSoFar() []approveDeployArgs {
	deployedMu.Lock()
	defer deployedMu.Unlock()
	return append([]approveDeployArgs(nil), deployed...)
}

var agentApproveFlow = flow.Define("test.agent.approve", func(ctx *flow.Context, prompt string) (string, error) {
	res, err := ctx.AgentLoop("triage", flow.AgentLoop{
		Agent: activities.Agent{Prompt: prompt, Model: "gpt-4o-mini"},
		Tools: []flow.Tool{flow.ActivityTool("deploy", ApproveDeploy, flow.ToolDescription("deploys the service"),
			flow.ToolApproval(approval.Request{Approvers: []string{"alice", "bob"}}))},
	})
	return res.Text, err
})

// TestAgentLoopToolApproval: on the real server, with signed decisions required, the
// loop waits at the deploy tool's gate; flowctl approvals lists it with the arguments;
// unsigned and forged decisions are refused; alice's signed rejection goes back to the
// model as the tool's result and the loop goes on; at the second call an edit her proof
// does not cover and an edit that does not fit the tool are refused, and her signed
// approval with edits runs the tool with them. Only her two decisions enter history.
func TestAgentLoopToolApproval(t *testing.T) {
	deployedMu.Lock()
	deployed = nil
	deployedMu.Unlock()
	dir := t.TempDir()
	ctl := func(queue string, args ...string) result { t.Helper(); return flowctlRunIn(t, queue, "", args...) }
	for _, who := range []string{"alice", "bob"} {
		r := ctl("x", "keys", "new", who+"-1", "--owner", who, "--out", filepath.Join(dir, who+".key"))
		require.Equal(t, 0, r.code, r.stderr)
	}
	r := ctl("x", "keys", "directory", filepath.Join(dir, "alice.key.pub"), filepath.Join(dir, "bob.key.pub"))
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "directory.json"), []byte(r.stdout), 0o644))
	directory, err := auth.LoadDirectory(filepath.Join(dir, "directory.json"))
	require.NoError(t, err)
	key := func(who string) string { return filepath.Join(dir, who+".key") }

	srv := startLoopProvider(t, []loopTurn{
		{text: "prod looks broken; redeploying it", calls: [][2]string{{"deploy", `{"env":"prod","replicas":3}`}}, in: 100, out: 10},
		{calls: [][2]string{{"deploy", `{"env":"prod","replicas":1}`}}, in: 200, out: 10},
		{text: "redeployed", in: 300, out: 10},
	})
	queue := uniqueQueue("agent-approve")
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, StopTimeout: time.Second,
		Auth:      &auth.Policy{Required: true, Directory: directory},
		Providers: map[string]llm.Provider{llm.ProviderOpenAI: llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: "sk-test"})}},
		agentApproveFlow)
	w.RegisterActivity(ApproveDeploy, "")
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})
	ctx := ctxT(t, 3*time.Minute)

	run, err := c.Start(ctx, agentApproveFlow.Name(), "the checkout service is down", core.StartOptions{ID: queue + "-run"})
	require.NoError(t, err)
	waitStatus(t, c, run.ID, runs.StatusAwaitingApproval)
	assert.Empty(t, deployedSoFar(), "the tool waits for its approval")

	// flowctl approvals lists the gate with the call's arguments: truncated in the table,
	// whole in -o json.
	var listed runs.PendingGate
	require.Eventually(t, func() bool {
		r := ctl(queue, "approvals", "-o", "json")
		var gates []runs.PendingGate
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &gates) != nil {
			return false
		}
		for _, g := range gates {
			if g.Run == run.ID {
				listed = g
				return true
			}
		}
		return false
	}, 30*time.Second, 200*time.Millisecond, "flowctl approvals lists the tool's gate")
	assert.Equal(t, "triage/deploy", listed.Gate)
	assert.Equal(t, "deploy", listed.Tool)
	assert.JSONEq(t, `{"env":"prod","replicas":3}`, string(listed.Arguments))
	assert.Equal(t, "prod looks broken; redeploying it", listed.Reason)
	assert.Equal(t, `Run tool deploy with {"env":"prod","replicas":3}?`, listed.Message)
	r = ctl(queue, "approvals")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)^RUN\s+GATE\s+VOTES\s+WHO MAY DECIDE\s+VOTED\s+DEADLINE\s+TOOL\s+ARGUMENTS\s+MESSAGE$`, r.stdout)
	assert.Regexp(t, `(?m)^`+run.ID+`\s+triage/deploy\s+0/1\s+alice, bob\s+-\s+none\s+deploy\s+\{"env":"prod","replicas":3\}\s+Run tool deploy`, r.stdout)

	refused := func(r result, want string) {
		t.Helper()
		assert.Equal(t, flowctl.ExitRefused, r.code, "stdout %s stderr %s", r.stdout, r.stderr)
		assert.Contains(t, r.stderr, want)
	}
	// Unsigned, and forged (bob's genuine proof sent as alice's vote): refused.
	refused(ctl(queue, "reject", run.ID, "triage/deploy", "--as", "alice", "--reason", "not prod"), "no proof: this run accepts signed decisions only")
	alice, err := auth.LoadKey(key("alice"))
	require.NoError(t, err)
	bob, err := auth.LoadKey(key("bob"))
	require.NoError(t, err)
	sign := func(k auth.Key, v approval.Vote) string {
		t.Helper()
		d, err := decisions.Vote("default", run.ID, v)
		require.NoError(t, err)
		d.FirstRunID = firstRunID(t, ctx, run.ID)
		tok, err := auth.Sign(k, d, auth.SignOptions{})
		require.NoError(t, err)
		return tok
	}
	rawVote := func(v approval.Vote) error {
		h, err := shared.tc.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: run.ID, UpdateName: protocol.UpdateApproval,
			Args: []any{v}, WaitForStage: client.WorkflowUpdateStageCompleted})
		if err != nil {
			return err
		}
		return h.Get(ctx, nil)
	}
	reject := approval.Vote{Gate: "triage/deploy", Kind: approval.Reject, By: "alice", Comment: "not prod"}
	bobs := reject
	bobs.By = "bob"
	forged := reject
	forged.Proof = sign(bob, bobs)
	assert.ErrorContains(t, rawVote(forged), "key bob-1 belongs to bob, the decision claims alice")

	// alice's signed rejection: the model gets the refusal and calls again.
	ok := ctl(queue, "--signing-key", key("alice"), "reject", run.ID, "triage/deploy", "--reason", "not prod")
	require.Equal(t, 0, ok.code, ok.stderr)
	require.Eventually(t, func() bool { return len(srv.requests()) >= 2 }, 30*time.Second, 100*time.Millisecond)
	second := srv.requests()[1]
	assert.Contains(t, second, "The call of tool deploy was refused by people and did not run: alice rejected it: not prod.")
	assert.Contains(t, second, `"role":"tool"`)
	assert.Empty(t, deployedSoFar(), "a rejected call does not run")

	// The second call waits at triage/deploy#2. An edit alice's proof does not cover (she
	// signed the approval without it), and an edit that does not fit the tool: refused.
	require.Eventually(t, func() bool {
		d, err := c.Describe(ctx, run.ID)
		return err == nil && d.State != nil && len(d.State.Gates) == 2
	}, 30*time.Second, 100*time.Millisecond)
	approve := approval.Vote{Gate: "triage/deploy#2", Kind: approval.Approve, By: "alice"}
	smuggled := approve
	smuggled.Proof = sign(alice, approve)
	smuggled.Arguments = json.RawMessage(`{"env":"prod","replicas":50}`)
	assert.ErrorContains(t, rawVote(smuggled), "decision refused (mismatch)")
	refused(ctl(queue, "--signing-key", key("alice"), "approve", run.ID, "triage/deploy#2", "--arguments", `{"env":"staging","force":true}`),
		"alice's edited arguments do not fit tool deploy")
	refused(ctl(queue, "--signing-key", key("alice"), "reject", run.ID, "triage/deploy#2", "--as", "bob"), "you are authenticated as alice")

	// alice approves with edits, signed: the tool runs once, with them.
	ok = ctl(queue, "--signing-key", key("alice"), "approve", run.ID, "triage/deploy#2", "--arguments", `{"env":"staging","replicas":2}`)
	require.Equal(t, 0, ok.code, ok.stderr)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.Equal(t, []approveDeployArgs{{Env: "staging", Replicas: 2}}, deployedSoFar())
	reqs := srv.requests()
	require.Len(t, reqs, 3)
	assert.Contains(t, reqs[2], "deployed staging")
	assert.Contains(t, reqs[2], "alice edited the arguments before the call")

	var ids []string
	for _, s := range d.State.Steps {
		ids = append(ids, s.ActivityID+" "+string(s.Status))
	}
	assert.Equal(t, []string{"triage completed", "triage/turn-1 completed", "triage/approve-deploy failed", "triage/turn-2 completed",
		"triage/approve-deploy#2 completed", "triage/deploy completed", "triage/turn-3 completed"}, ids)
	require.Len(t, d.State.Gates, 2)
	votes := d.State.Gates[1].Votes
	require.Len(t, votes, 1)
	require.NotNil(t, votes[0].Verified)
	assert.Equal(t, "alice-1", votes[0].Verified.KeyID)
	assert.JSONEq(t, `{"env":"staging","replicas":2}`, string(votes[0].Arguments))

	// Only alice's two signed decisions entered history; flowctl audit verifies them again,
	// the edits' hash included.
	assert.Equal(t, 2, countHistoryEvents(t, ctx, run.ID, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED))
	r = ctl(queue, "audit", run.ID)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)vote triage/deploy\s+alice\s+\S+\s+update\s+signature alice-1\s+accepted$`, r.stdout)
	assert.Regexp(t, `(?m)vote triage/deploy#2\s+alice\s+\S+\s+update\s+signature alice-1\s+accepted$`, r.stdout)
}

var agentInputFlow = flow.Define("test.agent.input", func(ctx *flow.Context, prompt string) (string, error) {
	res, err := ctx.AgentLoop("triage", flow.AgentLoop{
		Agent: activities.Agent{Prompt: prompt, Model: "gpt-4o-mini"},
		Tools: []flow.Tool{flow.InputTool("ask_human", signals.InputRequest{Prompt: "The triage agent asks:", Assignees: []string{"alice"}})},
	})
	return res.Text, err
})

// TestAgentLoopInputTool: the model asks a question through the input tool; the run waits
// for input showing it; alice answers with flowctl input, and the answer is the tool's
// result in the provider's next request.
func TestAgentLoopInputTool(t *testing.T) {
	srv := startLoopProvider(t, []loopTurn{
		{calls: [][2]string{{"ask_human", `{"question":"May I restart the checkout database?"}`}}, in: 100, out: 10},
		{text: "restarting it", in: 200, out: 10},
	})
	queue := uniqueQueue("agent-input")
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, StopTimeout: time.Second,
		Providers: map[string]llm.Provider{llm.ProviderOpenAI: llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: "sk-test"})}},
		agentInputFlow)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})
	ctx := ctxT(t, 2*time.Minute)

	run, err := c.Start(ctx, agentInputFlow.Name(), "checkout is slow", core.StartOptions{ID: queue + "-run"})
	require.NoError(t, err)
	waitStatus(t, c, run.ID, runs.StatusAwaitingInput)
	d, err := c.Describe(ctx, run.ID)
	require.NoError(t, err)
	require.Len(t, d.State.Inputs, 1)
	assert.Equal(t, "ask_human", d.State.Inputs[0].Name)
	assert.Equal(t, "The triage agent asks:\n\nMay I restart the checkout database?", d.State.Inputs[0].Request.Prompt)

	r := flowctlRunIn(t, queue, "", "input", run.ID, "ask_human", "--as", "bob", "--data", `"no"`)
	assert.Equal(t, flowctl.ExitRefused, r.code, "bob is not asked: %s %s", r.stdout, r.stderr)
	r = flowctlRunIn(t, queue, "", "input", run.ID, "ask_human", "--as", "alice", "--data", `"yes, during the maintenance window"`)
	require.Equal(t, 0, r.code, r.stderr)
	d, err = c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	reqs := srv.requests()
	require.Len(t, reqs, 2)
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal([]byte(reqs[1]), &body))
	last := body.Messages[len(body.Messages)-1]
	assert.Equal(t, "tool", last.Role)
	assert.Contains(t, fmt.Sprint(last.Content), "yes, during the maintenance window")
	assert.False(t, strings.Contains(reqs[0], "maintenance"), "the first request knew nothing of it")
}
