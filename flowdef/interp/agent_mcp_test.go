package interp_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/flowdef/interp"
	"github.com/gateflow/gateflow/mcptools"
	"github.com/gateflow/gateflow/runs"
	"github.com/gateflow/gateflow/testsuite"
)

const agentMCPYAML = `
name: triage-mcp
steps:
  - id: triage
    uses: agent
    with:
      prompt: "checkout is slow"
      reads:
        - a plain value
        - {mcp: triage, uri: 'runbook://checkout'}
      tools:
        - {mcp: triage, tool: lookup_runbook}
        - {flow: restart-child}
  - {id: done, finish: {output: {answer: "${{ steps.triage.output }}"}}}
`

const restartChildYAML = `
name: restart-child
description: Restarts a service.
inputs: {type: object, required: [service], properties: {service: {type: string}}, additionalProperties: false}
steps:
  - {id: done, finish: {output: {restarted: "${{ inputs.service }}"}}}
`

// An agent step in YAML with an MCP tool, a flow tool and an MCP read: the catalog is read
// once (triage/tools), the read before turn 1 (triage/read-1), the MCP call and the child
// run are steps nested under the agent step, and the flow tool's schema is the child
// definition's inputs.
func TestAgentLoopMCPAndFlowToolsInYAML(t *testing.T) {
	def, child := parse(t, agentMCPYAML), parse(t, restartChildYAML)
	reg := &flowdef.StaticRegistry{MCPServers: []string{"triage"}, Definitions: map[string]*flowdef.Definition{"restart-child": child}}
	require.NoError(t, flowdef.Validate(def, reg))
	env := testsuite.NewEnv(t, flow.WorkerOptions{MCPServers: []mcptools.Server{{Name: "triage", Command: []string{"unused"}}}})
	env.Register(build(t, def, interp.DefaultModel("scripted"), interp.Registry(reg)), build(t, child))
	var cat mcptools.Catalog
	require.NoError(t, cat.Add("triage", []mcptools.Tool{{Name: "lookup_runbook", Description: "Returns the runbook.",
		InputSchema: json.RawMessage(`{"properties":{"service":{"type":"string"}},"required":["service"],"type":"object"}`)}}))
	env.MockActivity(activities.MCPCatalogActivity, cat, nil)
	env.MockActivity(activities.MCPReadActivity, mcptools.ResourceContent{URI: "runbook://checkout", Text: "# checkout\nroll back"}, nil)
	env.MockActivity(activities.MCPCallActivity, mcptools.Result{Text: "runbook of checkout"}, nil)
	env.ScriptAgent(
		llm.ScriptRule{Turn: 1, Match: "roll back", ToolCalls: []llm.ToolCall{{Name: "lookup_runbook", Arguments: json.RawMessage(`{"service":"checkout"}`)}}},
		llm.ScriptRule{Turn: 2, AfterTool: "lookup_runbook", ResultMatch: "runbook of checkout",
			ToolCalls: []llm.ToolCall{{Name: "restart-child", Arguments: json.RawMessage(`{"service":"checkout"}`)}}},
		llm.ScriptRule{Turn: 3, AfterTool: "restart-child", ResultMatch: `"restarted":"checkout"`, Text: "restarted"},
	)
	r := env.Run(def.Name, nil)
	require.NoError(t, r.Err)
	assert.Equal(t, map[string]any{"answer": "restarted"}, output(t, r))
	assert.Equal(t, []string{"triage", "triage/tools", "triage/read-1", "triage/turn-1", "triage/lookup_runbook",
		"triage/turn-2", "triage/restart-child", "triage/turn-3"}, activityIDs(r))
	st, ok := r.Step("restart-child")
	require.True(t, ok)
	assert.Equal(t, runs.KindChild, st.Kind)
	assert.Equal(t, 1, env.Calls("tools"))
	assert.Equal(t, 1, env.Calls("lookup_runbook"))
}
