package flow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/internal/display"
	"github.com/gateflow/gateflow/internal/toolname"
	"github.com/gateflow/gateflow/mcptools"
	"github.com/gateflow/gateflow/runs"
)

// maxReadBytes bounds the text of one MCP resource an agent loop reads (AgentLoop.Reads)
// as it goes into the conversation; more is cut with a marker.
const maxReadBytes = 16 << 10

// mcpToolRef is the MCP tool a Tool made by MCPTool calls.
type mcpToolRef struct {
	server, tool string
}

// MCPTool is the tool tool of the MCP server server declared on the worker
// (WorkerOptions.MCPServers), for an agent loop. Before turn 1 the loop reads the
// catalogs of the servers its MCP tools name, once, as the step tools
// (gateflow.mcp.catalog, recorded: a replay never asks a server again); the model sees
// the tool's description (unless ToolDescription gives one) and input schema as the
// server lists them. A server the worker does not declare, or a tool the server does not
// list, fails the agent step before any turn. Each call runs as a step named after the
// tool (gateflow.mcp.call); arguments that do not fit the recorded schema, and a result
// the tool marks as an error, go back to the model as tool errors (the latter fails the
// step of a fatal tool). The model receives the result's text. The tool's name is the
// MCP tool's, made model-safe; set Tool.Name for another.
func MCPTool(server, tool string, opts ...ToolOption) Tool {
	ref := &mcpToolRef{server: server, tool: tool}
	t := Tool{Name: toolname.From(tool), Parameters: json.RawMessage(`{"type":"object"}`), mcp: ref}
	switch {
	case strings.TrimSpace(server) == "":
		t.err = fmt.Errorf("mcp tool %q: the server is empty", tool)
	case strings.TrimSpace(tool) == "":
		t.err = fmt.Errorf("mcp tool of server %s: the tool is empty", server)
	}
	for _, o := range opts {
		if o != nil {
			o(&t)
		}
	}
	t.Run = ref.run(nil)
	return t
}

// run is the Run of the MCP tool; with its listing, the arguments are checked against
// the listed input schema first.
func (r *mcpToolRef) run(listed *mcptools.Tool) func(*Context, string, json.RawMessage) (string, error) {
	return func(ctx *Context, step string, args json.RawMessage) (string, error) {
		if len(bytes.TrimSpace(args)) == 0 {
			args = json.RawMessage("{}")
		}
		if listed != nil {
			if err := listed.ValidateArgs(args); err != nil {
				return "", &toolArgumentsError{Tool: step, Err: err}
			}
		}
		res, err := ctx.MCP(step, activities.MCPCall{Server: r.server, Tool: r.tool, Args: args})
		if err != nil {
			return "", err
		}
		if res.IsError {
			return "", fmt.Errorf("mcp tool %s of server %s failed: %s", r.tool, r.server, res.Text)
		}
		return res.Text, nil
	}
}

// prepare runs what an agent loop does before turn 1: it reads the catalogs of the MCP
// servers its tools name and the MCP resources of its Reads.
func (l *agentRun) prepare() error {
	if err := l.resolveMCPTools(); err != nil {
		return err
	}
	return l.readResources()
}

// mcpServers are the servers the loop's MCP tools name, sorted, once each.
func (l *agentRun) mcpServers() []string {
	var servers []string
	for _, t := range l.a.Tools {
		if t.mcp != nil {
			servers = append(servers, t.mcp.server)
		}
	}
	slices.Sort(servers)
	return slices.Compact(servers)
}

// checkMCPServer is why the worker cannot serve the MCP server: it does not declare it.
func (l *agentRun) checkMCPServer(server string) error {
	known := l.c.run.setup.mcpServers
	if slices.Contains(known, server) {
		return nil
	}
	list := "none"
	if len(known) > 0 {
		list = strings.Join(known, ", ")
	}
	return fmt.Errorf("agent %s: no MCP server %q on this worker (declared: %s)", l.s.name, server, list)
}

// resolveMCPTools reads the catalogs of the loop's MCP servers as the step tools and
// gives each MCP tool the description and schema listed, and a Run that checks the
// arguments against that schema.
func (l *agentRun) resolveMCPTools() error {
	servers := l.mcpServers()
	if len(servers) == 0 {
		return nil
	}
	for _, s := range servers {
		if err := l.checkMCPServer(s); err != nil {
			return err
		}
	}
	var cat mcptools.Catalog
	p := l.sub.dispatch(call{name: "tools", kind: runs.KindMCP, activity: activities.MCPCatalogActivity,
		args: []any{activities.MCPCatalog{Servers: servers}}, opts: l.sub.options(nil),
		nonRetryable: []string{activities.MCPProtocolErrorType},
		summary:      "tools of mcp servers " + strings.Join(servers, ", ")})
	if err := l.sub.settle(p, &cat, describeCatalog(&cat)); err != nil {
		return err
	}
	tools := slices.Clone(l.a.Tools)
	for i, t := range tools {
		if t.mcp == nil {
			continue
		}
		listed, err := lookupMCPTool(&cat, t.mcp)
		if err != nil {
			return fmt.Errorf("agent %s: tool %s: %w", l.s.name, t.Name, err)
		}
		if t.Description == "" {
			t.Description = listed.Description
		}
		t.Parameters, t.Run, t.check = listed.InputSchema, t.mcp.run(&listed), mcpArgsCheck(t.Name, listed)
		tools[i] = t
		l.byName[t.Name] = t
	}
	var err error
	if l.tools, err = llmTools(tools); err != nil {
		return err
	}
	return l.turn(nil).Validate()
}

// mcpArgsCheck checks arguments against the listed tool's input schema (an approver's
// edits of a call, agent_approve.go).
func mcpArgsCheck(name string, listed mcptools.Tool) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		if err := listed.ValidateArgs(raw); err != nil {
			return &toolArgumentsError{Tool: name, Err: err}
		}
		return nil
	}
}

// lookupMCPTool finds the tool in the catalog, or says what its server has.
func lookupMCPTool(cat *mcptools.Catalog, r *mcpToolRef) (mcptools.Tool, error) {
	if t, ok := cat.Lookup(r.server, r.tool); ok {
		return t, nil
	}
	listed, _ := cat.Tools(r.server)
	names := make([]string, len(listed))
	for i, t := range listed {
		names[i] = t.Name
	}
	has := "no tools"
	if len(names) > 0 {
		has = "tools " + strings.Join(names, ", ")
	}
	return mcptools.Tool{}, fmt.Errorf("mcp server %q has no tool %q (it has %s)", r.server, r.tool, has)
}

func describeCatalog(cat *mcptools.Catalog) func() outcome {
	return func() outcome {
		parts := make([]string, len(cat.Servers))
		for i, s := range cat.Servers {
			parts[i] = fmt.Sprintf("%s: %d tools", s.Server, len(s.Tools))
		}
		return outcome{output: display.Preview(strings.Join(parts, "; "), 200)}
	}
}

// readResources reads each of the loop's Reads as the step read-<n> and adds it to the
// conversation as a user message.
func (l *agentRun) readResources() error {
	for i, rd := range l.a.Reads {
		var invalid error
		switch {
		case strings.TrimSpace(rd.Server) == "" || strings.TrimSpace(rd.URI) == "":
			invalid = fmt.Errorf("agent %s: read %d: want a server and a URI, got server %q, uri %q", l.s.name, i+1, rd.Server, rd.URI)
		default:
			invalid = l.checkMCPServer(rd.Server)
		}
		var rc mcptools.ResourceContent
		p := l.sub.dispatch(call{name: fmt.Sprintf("read-%d", i+1), kind: runs.KindMCP, activity: activities.MCPReadActivity,
			args: []any{rd}, opts: l.sub.options(nil), invalid: invalid,
			nonRetryable: []string{activities.MCPProtocolErrorType},
			summary:      fmt.Sprintf("read %s of mcp server %s", rd.URI, rd.Server)})
		if err := l.sub.settle(p, &rc, func() outcome { return outcome{output: display.Preview(rc.Text, 200)} }); err != nil {
			return err
		}
		l.msgs = append(l.msgs, llm.UserMessage(readMessage(rd, rc)))
	}
	return nil
}

// readMessage is the user message of a resource read: its text labelled with its URI,
// bounded by maxReadBytes.
func readMessage(rd activities.MCPRead, rc mcptools.ResourceContent) string {
	text, cut := rc.Text, 0
	if len(text) > maxReadBytes {
		n := maxReadBytes
		for n > 0 && !utf8.RuneStart(text[n]) {
			n--
		}
		text, cut = text[:n], len(text)-n
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Resource %s (MCP server %s):\n%s", rd.URI, rd.Server, text)
	if cut > 0 { // (text the server's pool cut already ends with its own marker)
		fmt.Fprintf(&b, "\n…[cut: %d more bytes over the %d-byte limit]", cut, maxReadBytes)
	}
	return b.String()
}
