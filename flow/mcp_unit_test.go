package flow

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/mcptools"
	"github.com/gateflow/gateflow/runs"
)

type mcpIn struct {
	Call  activities.MCPCall
	Allow bool
}

// mcpFlow makes one MCP step and returns its result's text and whether it was an error.
var mcpFlow = Define("unit/mcp", func(ctx *Context, in mcpIn) (mcptools.Result, error) {
	var opts []StepOption
	if in.Allow {
		opts = append(opts, AllowFailure())
	}
	res, err := ctx.MCP("tool", in.Call, opts...)
	if in.Allow && err != nil {
		return res, nil
	}
	return res, err
})

// fakeMCP answers MCP calls as the triage example server would, logging them.
func fakeMCP(env *testsuite.TestWorkflowEnvironment) *callLog[activities.MCPCall] {
	l := &callLog[activities.MCPCall]{}
	env.RegisterActivityWithOptions(func(_ context.Context, in activities.MCPCall) (mcptools.Result, error) {
		l.add(in)
		if in.Tool != "lookup_runbook" {
			return mcptools.Result{}, temporal.NewNonRetryableApplicationError("unknown tool", activities.MCPProtocolErrorType, nil)
		}
		var args struct{ Service string }
		_ = json.Unmarshal(in.Args, &args)
		if args.Service != "checkout" {
			res := mcptools.Result{Text: "no runbook for " + args.Service, IsError: true}
			if in.FailOnError {
				return res, temporal.NewNonRetryableApplicationError("mcp tool lookup_runbook of server triage failed: "+res.Text, activities.MCPToolErrorType, nil, res)
			}
			return res, nil
		}
		return mcptools.Result{Text: "runbook of checkout"}, nil
	}, activity.RegisterOptions{Name: activities.MCPCallActivity})
	return l
}

func runMCP(t *testing.T, in mcpIn) (*testsuite.TestWorkflowEnvironment, *callLog[activities.MCPCall]) {
	t.Helper()
	env := newUnitEnv(t, runConfig{mcpServers: []string{"triage"}}, mcpFlow)
	calls := fakeMCP(env)
	env.ExecuteWorkflow(mcpFlow.Name(), in)
	require.True(t, env.IsWorkflowCompleted())
	return env, calls
}

func TestMCPStepCallsTheTool(t *testing.T) {
	env, calls := runMCP(t, mcpIn{Call: activities.MCPCall{Server: "triage", Tool: "lookup_runbook", Args: json.RawMessage(`{"service":"checkout"}`)}})
	require.NoError(t, env.GetWorkflowError())
	var res mcptools.Result
	require.NoError(t, env.GetWorkflowResult(&res))
	assert.Equal(t, "runbook of checkout", res.Text)
	s := stepByName(t, queryState(t, env), "tool")
	assert.Equal(t, runs.KindMCP, s.Kind)
	assert.Equal(t, runs.StepCompleted, s.Status)
	assert.Contains(t, s.Output, "runbook of checkout")
	require.Len(t, calls.all(), 1)
	assert.True(t, calls.all()[0].FailOnError, "a step fails on a tool error unless it allows failure")
}

func TestMCPStepToolErrorFailsTheStep(t *testing.T) {
	env, calls := runMCP(t, mcpIn{Call: activities.MCPCall{Server: "triage", Tool: "lookup_runbook", Args: json.RawMessage(`{"service":"billing"}`)}})
	require.Error(t, env.GetWorkflowError())
	assert.ErrorContains(t, env.GetWorkflowError(), "no runbook for billing")
	s := stepByName(t, queryState(t, env), "tool")
	assert.Equal(t, runs.StepFailed, s.Status)
	assert.Contains(t, s.Error, "no runbook for billing")
	assert.Len(t, calls.all(), 1, "a tool error is not retried")
}

func TestMCPStepAllowFailureReturnsTheToolError(t *testing.T) {
	env, calls := runMCP(t, mcpIn{Allow: true, Call: activities.MCPCall{Server: "triage", Tool: "lookup_runbook", Args: json.RawMessage(`{"service":"billing"}`)}})
	require.NoError(t, env.GetWorkflowError())
	var res mcptools.Result
	require.NoError(t, env.GetWorkflowResult(&res))
	assert.True(t, res.IsError)
	assert.Equal(t, "no runbook for billing", res.Text)
	require.Len(t, calls.all(), 1)
	assert.False(t, calls.all()[0].FailOnError)
}

func TestMCPStepRefusedBeforeDispatch(t *testing.T) {
	tests := []struct {
		name string
		call activities.MCPCall
		want string
	}{
		{"unknown server", activities.MCPCall{Server: "docs", Tool: "search"}, `no MCP server "docs" on this worker (declared: triage)`},
		{"no tool", activities.MCPCall{Server: "triage"}, "the tool is empty"},
		{"args not an object", activities.MCPCall{Server: "triage", Tool: "lookup_runbook", Args: json.RawMessage(`"checkout"`)}, "must be a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, calls := runMCP(t, mcpIn{Call: tt.call})
			assert.ErrorContains(t, env.GetWorkflowError(), tt.want)
			assert.Equal(t, runs.StepFailed, stepByName(t, queryState(t, env), "tool").Status)
			assert.Empty(t, calls.all(), "not dispatched")
		})
	}
}
