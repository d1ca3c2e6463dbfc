package interp

import (
	"cmp"
	"encoding/json"
	"fmt"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/flow"
)

// toolOf makes one tool of an agent step: an MCP tool (flow.MCPTool), a flow run as a
// child (flowTool), or what agentTool makes (action, shell, http).
func (r *runner) toolOf(t agentToolWith) (flow.Tool, error) {
	switch {
	case t.MCP != "":
		tool := flow.MCPTool(t.MCP, t.Tool, toolOptions(t)...)
		if t.Name != "" {
			tool.Name = t.Name
		}
		return tool, nil
	case t.Flow != "":
		return r.flowTool(t)
	}
	return agentTool(t)
}

// flowInputSchemas is a registry that knows the input schemas of Go flows
// (flowdef.StaticRegistry built from a worker's or a catalog's registries).
type flowInputSchemas interface {
	FlowInputSchema(name string) (json.RawMessage, bool)
}

// toolOptions are the description and fatal options of a tool.
func toolOptions(t agentToolWith) []flow.ToolOption {
	var opts []flow.ToolOption
	if t.Description != "" {
		opts = append(opts, flow.ToolDescription(t.Description))
	}
	if t.Fatal {
		opts = append(opts, flow.ToolFatal())
	}
	return opts
}

// flowTool is a tool running the flow t.Flow (a definition or a Go flow) as a child,
// made by flow.FlowTool over a stand-in for the flow (the workers serving it run it; the
// child is started by name, as ChildByName does): the model's arguments (a JSON object)
// are its input, its output what the model receives, and its cap what the loop's cost
// cap leaves. Its schema is `parameters:`, else the definition's `inputs` when the
// registry has the definition, or the Go flow's input schema when the registry knows it
// (a worker's or a catalog's registries), else any object; its name the flow's made
// model-safe unless `name:` gives one, as for a Go flow.
func (r *runner) flowTool(t agentToolWith) (flow.Tool, error) {
	standIn := flow.Define(t.Flow, func(*flow.Context, map[string]any) (json.RawMessage, error) {
		return nil, fmt.Errorf("flow %s runs on the workers serving it: this stand-in only starts it as a child", t.Flow)
	})
	tool := flow.FlowTool(standIn, toolOptions(t)...)
	tool.Name = cmp.Or(t.Name, tool.Name)
	tool.Parameters = json.RawMessage(`{"type":"object"}`)
	if s, ok := r.opts.registry.(flowInputSchemas); ok && r.opts.registry.HasGoFlow(t.Flow) {
		if schema, known := s.FlowInputSchema(t.Flow); known {
			tool.Parameters = schema
		}
	} else if reg := r.opts.registry; reg != nil && !reg.HasGoFlow(t.Flow) {
		if def, err := reg.LoadDefinition(t.Flow); err == nil {
			if !def.Inputs.IsZero() {
				tool.Parameters = def.Inputs.JSON
			}
			if t.Description == "" && def.Description != "" {
				tool.Description = def.Description
			}
		}
	}
	if t.Parameters != nil {
		schema, err := json.Marshal(t.Parameters)
		if err != nil {
			return flow.Tool{}, fmt.Errorf("parameters: %w", err)
		}
		tool.Parameters = schema
	}
	return tool, nil
}

// mcpReads are the MCP resources among `reads:` (mappings with the key mcp), which
// seedMessages leaves out.
func mcpReads(reads any) ([]activities.MCPRead, error) {
	var out []activities.MCPRead
	for i, v := range listOf(reads) {
		m, ok := mcpReadOf(v)
		if !ok {
			continue
		}
		server, _ := m["mcp"].(string)
		uri, _ := m["uri"].(string)
		if server == "" || uri == "" {
			return nil, fmt.Errorf("with.reads[%d]: an mcp read needs mcp: <server> and uri: <URI>", i)
		}
		out = append(out, activities.MCPRead{Server: server, URI: uri})
	}
	return out, nil
}

// mcpReadOf is v as an MCP read: a mapping with the key mcp.
func mcpReadOf(v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	_, has := m["mcp"]
	return m, has
}
