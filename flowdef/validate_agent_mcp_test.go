package flowdef

import (
	"testing"
)

// TestValidateAgentMCPAndFlowTools: `mcp:` and `flow:` tools and MCP `reads:` are
// checked against the workers' MCP servers (when known) and flows, each error at its
// line:col.
func TestValidateAgentMCPAndFlowTools(t *testing.T) {
	const head = "name: x\nsteps:\n  - id: a\n    uses: agent\n    with:\n      prompt: p\n"
	known := &StaticRegistry{Actions: []string{"lookup"}, MCPServers: []string{"docs", "triage"}, GoFlows: []string{"restart.service"},
		Definitions: map[string]*Definition{"child": mustParse(t, "child.yaml", "name: child\nsteps:\n  - {id: s, set: {x: 1}}\n")}}
	unknown := &StaticRegistry{GoFlows: []string{"restart.service"}} // MCP servers not known: any passes
	for _, tt := range []struct {
		name, with string
		reg        *StaticRegistry
		want       []string // substrings; empty means valid
	}{
		{"mcp, flow and reads", `      reads:
        - a plain value
        - {mcp: triage, uri: 'runbook://checkout'}
      tools:
        - {mcp: triage, tool: lookup_runbook}
        - {name: deploys, mcp: triage, tool: recent_deploys, description: d, fatal: true}
        - {flow: restart.service}
        - {flow: child, name: run_child, parameters: {type: object, properties: {n: {type: integer}}}}
`, known, nil},
		{"approve an mcp and a flow tool by their derived names", `      approve: [lookup_runbook, restart_service]
      approvers: [alice]
      tools:
        - {mcp: triage, tool: lookup_runbook}
        - {flow: restart.service}
`, known, nil},
		{"approve a tool the step lacks", "      approve: [reboot]\n      approvers: [alice]\n      tools: [{mcp: triage, tool: lookup_runbook}]\n", known,
			[]string{"no tool 'reboot' in this step (hint: one of the step's tools: lookup_runbook)"}},
		{"one mcp read", "      reads: {mcp: docs, uri: 'doc://a'}\n", known, nil},
		{"servers not known", "      reads: [{mcp: anything, uri: 'x://y'}]\n      tools: [{mcp: whatever, tool: t}]\n", unknown, nil},
		{"unknown server", "      tools:\n        - {mcp: triag, tool: lookup_runbook}\n", known,
			[]string{"f.yaml:8:17: step 'a': with.tools[0].mcp: no MCP server 'triag' on the workers (declared: docs, triage) (hint: declare it on the worker (flow-worker --mcp triag=COMMAND|URL) or name a declared one)"}},
		{"no servers at all", "      tools: [{mcp: triage, tool: t}]\n", &StaticRegistry{MCPServers: []string{}},
			[]string{"f.yaml:7:21: step 'a': with.tools[0].mcp: no MCP server 'triage' on the workers (declared: none)"}},
		{"mcp without tool", "      tools: [{mcp: triage}]\n", known, []string{"f.yaml:7:15: step 'a': with.tools[0]: an mcp tool needs a tool name"}},
		{"mcp tool with params", "      tools: [{mcp: triage, tool: t, parameters: {type: object}}]\n", known,
			[]string{"f.yaml:7:50: step 'a': with.tools[0].parameters: parameters is not for mcp tools"}},
		{"tool on an action", "      tools: [{action: lookup, tool: x}]\n", known, []string{"f.yaml:7:38: step 'a': with.tools[0].tool: tool is for mcp tools"}},
		{"mcp and action", "      tools: [{mcp: triage, tool: t, action: lookup}]\n", known,
			[]string{"with.tools[0]: a tool needs exactly one of action, shell, http, input, mcp, flow"}},
		{"templated server", "      tools: [{mcp: '${{ inputs.s }}', tool: t}]\n", known, []string{"with.tools[0].mcp: want an MCP server name"}},
		{"unknown flow", "      tools:\n        - {flow: restart.servise}\n", known,
			[]string{"f.yaml:8:18: step 'a': with.tools[0]: no flow named 'restart.servise'"}},
		{"flow tool params", "      tools: [{flow: child, params: []}]\n", known, []string{"with.tools[0].params: params is for shell and http tools"}},
		{"flow tool parameters not an object", "      tools: [{flow: child, parameters: {type: string}}]\n", known,
			[]string{"with.tools[0].parameters: want an object schema, got type string"}},
		{"two tools one name", "      tools: [{flow: restart.service}, {name: restart_service, mcp: triage, tool: restart_service}]\n", known,
			[]string{"with.tools[1].name: tool 'restart_service' is already with.tools[0]"}},
		{"duplicate derived names", "      tools: [{mcp: triage, tool: t}, {mcp: docs, tool: t}]\n", known,
			[]string{"tool 't' is already with.tools[0]"}},
		{"read of unknown server", "      reads:\n        - {mcp: nope, uri: 'x://y'}\n", known,
			[]string{"f.yaml:8:17: step 'a': with.reads[0].mcp: no MCP server 'nope' on the workers (declared: docs, triage)"}},
		{"read without uri", "      reads: [{mcp: docs}]\n", known, []string{"f.yaml:7:15: step 'a': with.reads[0]: an mcp read needs a uri"}},
		{"read unknown key", "      reads: [{mcp: docs, uri: 'a://b', url: x}]\n", known,
			[]string{"step 'a': unknown field 'url' in with.reads[0] (hint: did you mean 'uri'?)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantErrors(t, validate(t, tt.reg, head+tt.with), tt.want)
		})
	}
}
