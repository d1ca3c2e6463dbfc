package flow

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/mcptools"
	"github.com/gateflow/gateflow/runs"
)

// triageCatalog is what the example triage server lists: lookup_runbook, its argument
// a required service.
func triageCatalog() mcptools.Catalog {
	var c mcptools.Catalog
	_ = c.Add("triage", []mcptools.Tool{
		{Name: "lookup_runbook", Description: "Returns the runbook of a service as text.",
			InputSchema: json.RawMessage(`{"additionalProperties":false,"properties":{"service":{"type":"string"}},"required":["service"],"type":"object"}`)},
		{Name: "restart_service", Description: "Restarts a service.", InputSchema: json.RawMessage(`{"type":"object"}`)},
	})
	return c
}

// fakeMCPServer serves the MCP activities as the triage server would, logging catalog
// reads and resource reads (fakeMCP logs the calls).
type fakeMCPServer struct {
	catalogs *callLog[activities.MCPCatalog]
	reads    *callLog[activities.MCPRead]
	calls    *callLog[activities.MCPCall]
	resource string
}

func newFakeMCPServer(env *testsuite.TestWorkflowEnvironment, resource string) *fakeMCPServer {
	f := &fakeMCPServer{catalogs: &callLog[activities.MCPCatalog]{}, reads: &callLog[activities.MCPRead]{}, resource: resource}
	env.RegisterActivityWithOptions(func(_ context.Context, in activities.MCPCatalog) (mcptools.Catalog, error) {
		f.catalogs.add(in)
		return triageCatalog(), nil
	}, activity.RegisterOptions{Name: activities.MCPCatalogActivity})
	env.RegisterActivityWithOptions(func(_ context.Context, in activities.MCPRead) (mcptools.ResourceContent, error) {
		f.reads.add(in)
		return mcptools.ResourceContent{URI: in.URI, Text: f.resource}, nil
	}, activity.RegisterOptions{Name: activities.MCPReadActivity})
	f.calls = fakeMCP(env)
	return f
}

func runMCPLoop(t *testing.T, a AgentLoop, servers []string, resource string,
	script func(int, activities.AgentTurn) (activities.AgentTurnResult, error)) (*testsuite.TestWorkflowEnvironment, *fakeMCPServer, *callLog[activities.AgentTurn], string) {
	t.Helper()
	f := loopFlow(a)
	env := newUnitEnv(t, runConfig{mcpServers: servers}, f)
	srv := newFakeMCPServer(env, resource)
	turns := mockTurns(env, script)
	env.ExecuteWorkflow(f.Name(), none{})
	require.True(t, env.IsWorkflowCompleted())
	var out string
	if env.GetWorkflowError() == nil {
		require.NoError(t, env.GetWorkflowResult(&out))
	}
	return env, srv, turns, out
}

func TestMCPToolReadsTheCatalogOnceAndCallsTheTool(t *testing.T) {
	a := AgentLoop{Agent: activities.Agent{Prompt: "triage checkout", Model: "m"},
		Tools: hostTools(MCPTool("triage", "lookup_runbook"))}
	env, srv, turns, out := runMCPLoop(t, a, []string{"triage"}, "", func(n int, _ activities.AgentTurn) (activities.AgentTurnResult, error) {
		switch n {
		case 1:
			return turnAnswer("", toolCall("c1", "lookup_runbook", `{"service":"checkout"}`),
				toolCall("c2", "lookup_runbook", `{"svc":"checkout"}`),
				toolCall("c3", "lookup_runbook", `{"service":"payments"}`)), nil
		case 2:
			return turnAnswer("", toolCall("c4", "lookup_runbook", `{"service":"checkout"}`)), nil
		}
		return turnAnswer("restart it"), nil
	})
	require.NoError(t, env.GetWorkflowError())
	assert.Contains(t, out, "restart it (3 turns, 4 calls")
	require.Len(t, srv.catalogs.all(), 1, "one catalog read per loop, not per turn")
	assert.Equal(t, []string{"triage"}, srv.catalogs.all()[0].Servers)

	all := turns.all()
	require.Len(t, all, 3)
	tool := all[0].Tools[2]
	assert.Equal(t, "lookup_runbook", tool.Name)
	assert.Equal(t, "Returns the runbook of a service as text.", tool.Description, "the description comes from the server")
	assert.JSONEq(t, string(triageCatalog().Servers[0].Tools[0].InputSchema), string(tool.Parameters), "so does the schema")

	msgs := all[1].Messages
	require.Len(t, msgs, 5)
	assert.Equal(t, llm.ToolResult("c1", "runbook of checkout", false), msgs[2])
	assert.True(t, msgs[3].IsError, "arguments that do not fit the schema are a tool error")
	assert.Contains(t, msgs[3].Text, "svc")
	assert.True(t, msgs[4].IsError, "a tool that answers isError is a tool error")
	assert.Contains(t, msgs[4].Text, "no runbook for payments")

	calls := srv.calls.all()
	require.Len(t, calls, 3, "the call whose arguments did not fit was not made")
	for _, c := range calls {
		assert.False(t, c.FailOnError, "a non-fatal tool's error goes to the model")
	}
	var ids []string
	for _, s := range queryState(t, env).Steps {
		ids = append(ids, s.ActivityID)
	}
	assert.Equal(t, []string{"triage", "triage/tools", "triage/turn-1", "triage/lookup_runbook",
		"triage/lookup_runbook#2", "triage/turn-2", "triage/lookup_runbook#3", "triage/turn-3"}, ids)
	assert.Equal(t, runs.KindMCP, stepByName(t, queryState(t, env), "tools").Kind)
}

func TestMCPToolFatalErrorFailsTheStep(t *testing.T) {
	a := AgentLoop{Agent: activities.Agent{Prompt: "triage", Model: "m"},
		Tools: []Tool{MCPTool("triage", "lookup_runbook", ToolFatal())}}
	env, srv, turns, _ := runMCPLoop(t, a, []string{"triage"}, "", func(n int, _ activities.AgentTurn) (activities.AgentTurnResult, error) {
		if n == 1 {
			return turnAnswer("", toolCall("c1", "lookup_runbook", `{"service":"payments"}`)), nil
		}
		return turnAnswer("never"), nil
	})
	require.Error(t, env.GetWorkflowError())
	assert.Contains(t, env.GetWorkflowError().Error(), "no runbook for payments")
	assert.Len(t, turns.all(), 1)
	require.Len(t, srv.calls.all(), 1)
	assert.True(t, srv.calls.all()[0].FailOnError)
}

func TestMCPToolUnknownFailsBeforeTurnOne(t *testing.T) {
	tests := []struct {
		name     string
		tool     Tool
		servers  []string
		want     string
		catalogs int
	}{
		{"unknown tool", MCPTool("triage", "reboot_world"), []string{"triage"},
			`tool reboot_world: mcp server "triage" has no tool "reboot_world" (it has tools lookup_runbook, restart_service)`, 1},
		{"unknown server", MCPTool("docs", "search"), []string{"triage"},
			`no MCP server "docs" on this worker (declared: triage)`, 0},
		{"no servers", MCPTool("docs", "search"), nil, `no MCP server "docs" on this worker (declared: none)`, 0},
		{"empty server", MCPTool("", "search"), []string{"triage"}, `mcp tool "search": the server is empty`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := AgentLoop{Agent: activities.Agent{Prompt: "triage", Model: "m"}, Tools: []Tool{tt.tool}}
			env, srv, turns, _ := runMCPLoop(t, a, tt.servers, "", func(int, activities.AgentTurn) (activities.AgentTurnResult, error) {
				return turnAnswer("never"), nil
			})
			require.Error(t, env.GetWorkflowError())
			assert.Contains(t, env.GetWorkflowError().Error(), tt.want)
			assert.Empty(t, turns.all(), "no turn was made")
			assert.Len(t, srv.catalogs.all(), tt.catalogs)
			assert.Equal(t, runs.StepFailed, stepByName(t, queryState(t, env), "triage").Status)
		})
	}
}

func TestAgentLoopReadsMCPResourcesBeforeTurnOne(t *testing.T) {
	big := strings.Repeat("é", maxReadBytes) // 2 bytes a rune: over the bound
	for _, tt := range []struct {
		name, resource, want string
		cut                  bool
	}{
		{"small", "# Checkout\nrestart it", "Resource runbook://checkout (MCP server triage):\n# Checkout\nrestart it", false},
		{"bounded", big, "Resource runbook://checkout (MCP server triage):\n", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := AgentLoop{Agent: activities.Agent{Prompt: "triage checkout", Model: "m"},
				Reads: []activities.MCPRead{{Server: "triage", URI: "runbook://checkout"}, {Server: "triage", URI: "runbook://payments"}}}
			env, srv, turns, out := runMCPLoop(t, a, []string{"triage"}, tt.resource, func(int, activities.AgentTurn) (activities.AgentTurnResult, error) {
				return turnAnswer("ok"), nil
			})
			require.NoError(t, env.GetWorkflowError())
			assert.Contains(t, out, "ok (1 turns")
			assert.Len(t, srv.reads.all(), 2)
			all := turns.all()
			require.Len(t, all, 1)
			msgs := all[0].Messages
			require.Len(t, msgs, 3, "the prompt, then one message per read")
			assert.Equal(t, llm.RoleUser, msgs[1].Role)
			assert.True(t, strings.HasPrefix(msgs[1].Text, tt.want), msgs[1].Text[:min(len(msgs[1].Text), 120)])
			assert.Contains(t, msgs[2].Text, "Resource runbook://payments")
			if tt.cut {
				assert.Less(t, len(msgs[1].Text), maxReadBytes+200, "the read is bounded")
				assert.Contains(t, msgs[1].Text, "more bytes over the 16384-byte limit]")
			}
			st := queryState(t, env)
			assert.Equal(t, runs.KindMCP, stepByName(t, st, "read-1").Kind)
			assert.Equal(t, runs.KindMCP, stepByName(t, st, "read-2").Kind)
		})
	}
}

func TestAgentLoopReadOfUnknownServerFails(t *testing.T) {
	a := AgentLoop{Agent: activities.Agent{Prompt: "triage", Model: "m"},
		Reads: []activities.MCPRead{{Server: "docs", URI: "doc://x"}}}
	env, srv, turns, _ := runMCPLoop(t, a, []string{"triage"}, "", func(int, activities.AgentTurn) (activities.AgentTurnResult, error) {
		return turnAnswer("never"), nil
	})
	require.Error(t, env.GetWorkflowError())
	assert.Contains(t, env.GetWorkflowError().Error(), `no MCP server "docs" on this worker (declared: triage)`)
	assert.Empty(t, srv.reads.all())
	assert.Empty(t, turns.all())
}

func TestMCPToolName(t *testing.T) {
	tool := MCPTool("triage", "ops.restart/now", ToolDescription("mine"))
	assert.Equal(t, "ops_restart_now", tool.Name, "made model-safe")
	assert.Equal(t, "mine", tool.Description)
	assert.NoError(t, tool.err)
	assert.NotNil(t, tool.Run)
	assert.ErrorContains(t, MCPTool("triage", " ").err, "the tool is empty")
}

type restartArgs struct {
	Service string `json:"service"`
	Force   bool   `json:"force,omitempty"`
}

type restartOut struct {
	Restarted string `json:"restarted"`
	Healthy   int    `json:"healthy"`
}

var restartChild = Define("unit/restart.child", func(_ *Context, in restartArgs) (restartOut, error) {
	return restartOut{Restarted: in.Service, Healthy: 3}, nil
}, Description("Restarts a service and says how many instances are healthy."))

func TestFlowToolRunsTheFlowAsAChildStep(t *testing.T) {
	tool := FlowTool(restartChild)
	require.NoError(t, tool.err)
	assert.Equal(t, "unit_restart_child", tool.Name, "the flow's name, made model-safe")
	assert.Equal(t, "Restarts a service and says how many instances are healthy.", tool.Description)
	assert.JSONEq(t, string(toolSchema(reflect.TypeFor[restartArgs]())), string(tool.Parameters), "the schema of I, as for ActivityTool")

	a := AgentLoop{Agent: activities.Agent{Prompt: "restart checkout", Model: "m"}, Tools: []Tool{tool}}
	f := loopFlow(a)
	env := newUnitEnv(t, runConfig{}, f, restartChild)
	turns := mockTurns(env, func(n int, _ activities.AgentTurn) (activities.AgentTurnResult, error) {
		if n == 1 {
			return turnAnswer("", toolCall("c1", "unit_restart_child", `{"service":"checkout"}`),
				toolCall("c2", "unit_restart_child", `{"service":"checkout","reboot":true}`)), nil
		}
		return turnAnswer("done"), nil
	})
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	all := turns.all()
	require.Len(t, all, 2)
	msgs := all[1].Messages
	require.Len(t, msgs, 4)
	assert.Equal(t, llm.ToolResult("c1", `{"restarted":"checkout","healthy":3}`, false), msgs[2], "the child's output, as JSON")
	assert.True(t, msgs[3].IsError, "an unknown member is a tool error")
	assert.Contains(t, msgs[3].Text, "reboot")

	st := queryState(t, env)
	var kinds []string
	for _, s := range st.Steps {
		kinds = append(kinds, s.ActivityID+" "+string(s.Kind))
	}
	assert.Equal(t, []string{"triage agent", "triage/turn-1 agent", "triage/unit_restart_child child", "triage/turn-2 agent"}, kinds,
		"one child step per call whose arguments fit, nested under the agent step")
}

func TestFlowToolRefusesInputsThatAreNotObjects(t *testing.T) {
	for _, tool := range []Tool{
		FlowTool(Define("unit/str", func(_ *Context, s string) (string, error) { return s, nil })),
		FlowTool(Define("unit/list", func(_ *Context, s []int) (int, error) { return len(s), nil })),
		FlowTool[restartArgs, restartOut](nil),
	} {
		assert.Error(t, tool.err, tool.Name)
		_, err := llmTools([]Tool{tool})
		assert.Error(t, err, "the agent step fails before any turn")
	}
	m := FlowTool(Define("unit/map", func(_ *Context, in map[string]any) (int, error) { return len(in), nil }))
	assert.NoError(t, m.err, "a map is an object")
}

// Over generated loops: the catalog is read exactly once per loop, whatever the turns
// and calls; a call whose arguments do not fit the recorded schema never reaches the
// server; every call gets exactly one result, an error exactly when its arguments did
// not fit or the tool answered isError, in the model's order.
func TestMCPToolCallsOverGeneratedLoops(t *testing.T) {
	kinds := []struct{ args, result string }{
		{`{"service":"checkout"}`, "runbook of checkout"},     // fits, answers
		{`{"svc":"checkout"}`, ""},                            // does not fit the schema
		{`{"service":7}`, ""},                                 // does not fit either
		{`{"service":"payments"}`, "no runbook for payments"}, // fits, answers isError
	}
	r := rand.New(rand.NewPCG(33, 1))
	for c := range 40 {
		nTurns := 1 + r.IntN(4)
		script := make([][]int, nTurns-1) // the kinds of each turn's calls; the last turn answers
		wantCalls := 0
		for i := range script {
			for range 1 + r.IntN(3) {
				k := r.IntN(len(kinds))
				script[i] = append(script[i], k)
				if k == 0 || k == 3 {
					wantCalls++
				}
			}
		}
		a := AgentLoop{Agent: activities.Agent{Prompt: "triage", Model: "m"}, MaxTurns: 5,
			Tools: []Tool{MCPTool("triage", "lookup_runbook"), MCPTool("triage", "restart_service")}}
		env, srv, turns, _ := runMCPLoop(t, a, []string{"triage"}, "", func(n int, _ activities.AgentTurn) (activities.AgentTurnResult, error) {
			if n > len(script) {
				return turnAnswer("done"), nil
			}
			var calls []llm.ToolCall
			for j, k := range script[n-1] {
				calls = append(calls, toolCall(fmt.Sprintf("c%d_%d", n, j), "lookup_runbook", kinds[k].args))
			}
			return turnAnswer("", calls...), nil
		})
		require.NoError(t, env.GetWorkflowError(), "case %d", c)
		require.Len(t, srv.catalogs.all(), 1, "case %d: one catalog read per loop", c)
		require.Len(t, srv.calls.all(), wantCalls, "case %d: only calls that fit reach the server", c)
		all := turns.all()
		require.Len(t, all, nTurns, "case %d", c)
		last := all[len(all)-1].Messages
		var results []llm.Message
		for _, m := range last {
			if m.Role == llm.RoleTool {
				results = append(results, m)
			}
		}
		i := 0
		for n, ks := range script {
			for j, k := range ks {
				require.Less(t, i, len(results), "case %d", c)
				m := results[i]
				assert.Equal(t, fmt.Sprintf("c%d_%d", n+1, j), m.ToolCallID, "case %d: results in the model's order", c)
				assert.Equal(t, k != 0, m.IsError, "case %d: call %d/%d (%s): %s", c, n+1, j, kinds[k].args, m.Text)
				if kinds[k].result != "" {
					assert.Contains(t, m.Text, kinds[k].result, "case %d", c)
				}
				i++
			}
		}
		assert.Len(t, results, i, "case %d: one result per call", c)
	}
}

// A flow tool's child is capped by what the loop's MaxBudgetUSD leaves (and the run's cap).
func TestFlowToolChildCapIsWhatTheLoopLeaves(t *testing.T) {
	for _, tt := range []struct {
		name, loopCap, runCap, wantCap string
	}{
		{"the loop's cap", "1", "", "0.75"},
		{"the loop's cap under a larger run cap", "1", "2", "0.75"},
		{"without a loop cap, the run's", "0", "2", "1.75"},
		{"the loop's cap under a run cap", "0.4", "0.5", "0.15"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := AgentLoop{Agent: activities.Agent{Prompt: "restart", Model: "m", MaxBudgetUSD: dec(tt.loopCap)},
				Tools: []Tool{FlowTool(restartChild)}}
			f := loopFlow(a)
			env := newUnitEnv(t, runConfig{}, f, restartChild)
			memos := &childMemos{}
			env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{memos}})
			if tt.runCap != "" {
				startWith(t, env, protocol.RunOptions{MaxCostUSD: tt.runCap})
			}
			mockTurns(env, func(n int, _ activities.AgentTurn) (activities.AgentTurnResult, error) {
				if n == 1 {
					return turnAnswer("", toolCall("c1", "unit_restart_child", `{"service":"checkout"}`)), nil
				}
				return turnAnswer("done"), nil
			})
			env.ExecuteWorkflow(f.Name(), none{})
			require.NoError(t, env.GetWorkflowError())
			require.Len(t, memos.memos.all(), 1, "the child ran")
			pi, ok := memos.memos.all()[0][protocol.MemoParent].(parentInfo)
			require.True(t, ok)
			assertUSD(t, tt.wantCap, dec(pi.CapUSD), "the child's cap")
		})
	}
}

// An MCP tool that needs approval: the gate shows the call; an approver's edits are
// checked against the schema the server listed, and the tool runs with the edits.
func TestMCPToolApprovalEditsCheckedAgainstTheListedSchema(t *testing.T) {
	a := AgentLoop{Agent: activities.Agent{Prompt: "triage", Model: "m"},
		Tools: []Tool{MCPTool("triage", "lookup_runbook", ToolApproval(approval.Request{Approvers: []string{"alice"}}))}}
	f := loopFlow(a)
	env := newUnitEnv(t, runConfig{mcpServers: []string{"triage"}}, f)
	srv := newFakeMCPServer(env, "")
	turns := mockTurns(env, func(n int, _ activities.AgentTurn) (activities.AgentTurnResult, error) {
		if n == 1 {
			return turnAnswer("read it", toolCall("c1", "lookup_runbook", `{"service":"payments"}`)), nil
		}
		return turnAnswer("done"), nil
	})
	bad := voteAt(env, time.Minute, approval.Vote{Gate: "triage/lookup_runbook", Kind: approval.Approve, By: "alice",
		Arguments: json.RawMessage(`{"svc":"checkout"}`)})
	good := voteAt(env, 2*time.Minute, approval.Vote{Gate: "triage/lookup_runbook", Kind: approval.Approve, By: "alice",
		Arguments: json.RawMessage(`{"service":"checkout"}`)})
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	assert.ErrorContains(t, bad.refusal(t), "alice's edited arguments do not fit tool lookup_runbook")
	assert.Equal(t, approval.VoteStatus(approval.Approved), good.vote(t).Status)
	calls := srv.calls.all()
	require.Len(t, calls, 1)
	assert.JSONEq(t, `{"service":"checkout"}`, string(calls[0].Args), "the tool ran once, with the edits")
	all := turns.all()
	require.Len(t, all, 2)
	last := all[1].Messages[len(all[1].Messages)-1]
	assert.False(t, last.IsError)
	assert.Contains(t, last.Text, "runbook of checkout")
}
