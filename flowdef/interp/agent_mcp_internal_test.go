package interp

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/flowdef"
)

// A flow tool's name, description and schema: given, else from the definition, else
// derived from the flow's name (as flow.FlowTool derives it) and any object.
func TestFlowToolOfADefinitionOrAGoFlow(t *testing.T) {
	child, err := flowdef.Parse("c.yaml", []byte("name: restart.child\ndescription: Restarts a service.\n"+
		"inputs: {type: object, required: [service], properties: {service: {type: string}}}\nsteps:\n  - {id: s, set: {x: 1}}\n"))
	require.NoError(t, err)
	reg := &flowdef.StaticRegistry{GoFlows: []string{"go.flow", "typed.flow"},
		InputSchemas: map[string]json.RawMessage{"typed.flow": json.RawMessage(`{"type":"object","required":["n"]}`)}, Definitions: map[string]*flowdef.Definition{"restart.child": child}}
	r := &runner{opts: options{registry: reg}}
	for _, tt := range []struct {
		name               string
		with               agentToolWith
		wantName, wantDesc string
		wantSchema         string
	}{
		{"definition", agentToolWith{Flow: "restart.child"}, "restart_child", "Restarts a service.",
			`{"properties":{"service":{"type":"string"}},"required":["service"],"type":"object"}`},
		{"given", agentToolWith{Flow: "restart.child", Name: "rs", Description: "mine", Fatal: true,
			Parameters: map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "integer"}}}},
			"rs", "mine", `{"type":"object","properties":{"x":{"type":"integer"}}}`},
		{"go flow", agentToolWith{Flow: "go.flow"}, "go_flow", "Runs the flow go.flow and returns its output.", `{"type":"object"}`},
		{"go flow with a known schema", agentToolWith{Flow: "typed.flow"}, "typed_flow", "Runs the flow typed.flow and returns its output.", `{"type":"object","required":["n"]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := r.toolOf(tt.with)
			require.NoError(t, err)
			assert.Equal(t, tt.wantName, tool.Name)
			assert.Equal(t, tt.wantDesc, tool.Description)
			assert.JSONEq(t, tt.wantSchema, string(tool.Parameters))
			assert.Equal(t, tt.with.Fatal, tool.Fatal)
			assert.NotNil(t, tool.Run)
		})
	}
	m, err := r.toolOf(agentToolWith{MCP: "triage", Tool: "lookup.runbook", Description: "d"})
	require.NoError(t, err)
	assert.Equal(t, "lookup_runbook", m.Name, "an MCP tool's name, made model-safe")
	assert.Equal(t, "d", m.Description)
	m, err = r.toolOf(agentToolWith{MCP: "triage", Tool: "lookup_runbook", Name: "book"})
	require.NoError(t, err)
	assert.Equal(t, "book", m.Name)
}

func TestMCPReadsAmongReads(t *testing.T) {
	reads, err := mcpReads([]any{"plain", map[string]any{"a": 1}, map[string]any{"mcp": "triage", "uri": "runbook://x"}})
	require.NoError(t, err)
	require.Len(t, reads, 1)
	assert.Equal(t, "triage", reads[0].Server)
	assert.Equal(t, "runbook://x", reads[0].URI)
	msgs, err := seedMessages(agentWith{Reads: []any{"plain", map[string]any{"mcp": "triage", "uri": "runbook://x"}}})
	require.NoError(t, err)
	require.Len(t, msgs, 1, "the MCP read is not a seed message")
	assert.Equal(t, "plain", msgs[0].Text)
	_, err = mcpReads(map[string]any{"mcp": "triage"})
	assert.ErrorContains(t, err, "needs mcp: <server> and uri: <URI>")
}
