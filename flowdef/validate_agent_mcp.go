package flowdef

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gateflow/gateflow/internal/toolname"
)

// agentMCPReadKeys are the keys of an MCP resource in an agent step's `reads:`.
var agentMCPReadKeys = []string{"mcp", "uri"}

// mcpServerLister is a Registry that knows the workers' MCP servers (StaticRegistry);
// known is false when it does not (offline checks): then any server name passes.
type mcpServerLister interface {
	MCPServerList() (names []string, known bool)
}

// extTool checks an agent tool of kind mcp (a tool of an MCP server) or flow (a flow run
// as a child) and returns its name, the given one or the derived one; ok is false for the
// other kinds, which tool checks.
func (w withCheck) extTool(path, kind, name string, m map[string]any) (string, bool) {
	if _, has := m["tool"]; has && kind != "mcp" {
		w.add(path+".tool", "tool: names the tool of an MCP server, with mcp: <server>", "tool is for mcp tools")
	}
	switch kind {
	case "mcp":
		for _, key := range []string{"params", "parameters"} {
			if _, has := m[key]; has {
				w.add(path+"."+key, "an mcp tool's description and schema come from its server", "%s is not for mcp tools", key)
			}
		}
		w.str(path+".mcp", m["mcp"])
		w.str(path+".tool", m["tool"])
		server, _ := m["mcp"].(string)
		w.mcpServer(path+".mcp", server)
		tool, _ := m["tool"].(string)
		if strings.TrimSpace(tool) == "" || isTemplate(tool) {
			w.add(path, "add tool: <the tool's name on the server>", "an mcp tool needs a tool name")
		}
		if name == "" {
			name = toolname.From(tool)
		}
		return name, true
	case "flow":
		if _, has := m["params"]; has {
			w.add(path+".params", "a flow tool takes parameters: (a JSON Schema), or the flow's inputs", "params is for shell and http tools")
		}
		w.str(path+".flow", m["flow"])
		flow, _ := m["flow"].(string)
		if isTemplate(flow) {
			w.add(path+".flow", "name a flow definition or a Go flow", "want a flow name, not a template")
		} else {
			w.k.call(w.at(path+".flow"), w.lb+": "+path, flow)
		}
		w.toolParameters(path, m["parameters"])
		if name == "" {
			name = toolname.From(flow)
		}
		return name, true
	}
	return "", false
}

// toolParameters checks the JSON Schema of a tool's arguments: an object schema.
func (w withCheck) toolParameters(path string, params any) {
	if params == nil {
		return
	}
	m := w.mapping(path+".parameters", params)
	if m == nil {
		return
	}
	if t, ok := m["type"]; ok && t != "object" {
		w.add(path+".parameters", "a tool's arguments are an object: type: object", "want an object schema, got type %v", t)
	}
	w.k.schema(Schema{Pos: w.at(path + ".parameters"), JSON: schemaJSON(m)}, w.lb+": "+path+".parameters")
}

// mcpServer checks that server is one of the workers' MCP servers, when they are known.
func (w withCheck) mcpServer(path, server string) {
	if strings.TrimSpace(server) == "" || isTemplate(server) {
		w.add(path, "name one of the worker's MCP servers (flow-worker --mcp NAME=...)", "want an MCP server name")
		return
	}
	reg, ok := w.k.v.reg.(mcpServerLister)
	if !ok {
		return
	}
	known, isKnown := reg.MCPServerList()
	if !isKnown || slices.Contains(known, server) {
		return
	}
	list := "none"
	if len(known) > 0 {
		list = strings.Join(known, ", ")
	}
	w.add(path, fmt.Sprintf("declare it on the worker (flow-worker --mcp %s=COMMAND|URL) or name a declared one", server),
		"no MCP server '%s' on the workers (declared: %s)", server, list)
}

// reads checks `reads:`: a value or a list of values, each a string (or, in a list, any
// value), or an MCP resource {mcp: <server>, uri: <URI>}.
func (w withCheck) reads(v any) {
	l, isList := v.([]any)
	if !isList {
		if m, ok := mcpReadMapping(v); ok {
			w.mcpRead("with.reads", m)
			return
		}
		w.str("with.reads", v)
		return
	}
	for i, e := range l {
		if m, ok := mcpReadMapping(e); ok {
			w.mcpRead(fmt.Sprintf("with.reads[%d]", i), m)
		}
	}
}

// mcpReadMapping is v as an MCP read: a mapping with the key mcp.
func mcpReadMapping(v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	_, has := m["mcp"]
	return m, has
}

// mcpRead checks one MCP resource read: known keys, a declared server and a URI.
func (w withCheck) mcpRead(path string, m map[string]any) {
	w.keys(path, m, agentMCPReadKeys)
	w.str(path+".mcp", m["mcp"])
	w.str(path+".uri", m["uri"])
	server, _ := m["mcp"].(string)
	w.mcpServer(path+".mcp", server)
	if uri, _ := m["uri"].(string); strings.TrimSpace(uri) == "" {
		w.add(path, "add uri: <the resource's URI, such as runbook://checkout>", "an mcp read needs a uri")
	}
}

// extToolName is the name an mcp or flow tool without `name:` gets: its tool's or its
// flow's name made model-safe (as flow.MCPTool and flow.FlowTool name them); "" for
// other tools.
func extToolName(m map[string]any) string {
	if tool, ok := m["tool"].(string); ok && m["mcp"] != nil {
		return toolname.From(tool)
	}
	if flow, ok := m["flow"].(string); ok {
		return toolname.From(flow)
	}
	return ""
}
