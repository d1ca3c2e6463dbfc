package mcptools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool is one tool of an MCP server as the server lists it. Schemas are canonical JSON
// (object keys sorted), so the same listing always marshals to the same bytes.
type Tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	Annotations  *Annotations    `json:"annotations,omitempty"`
}

// Annotations are the server's hints about a tool. They are hints: a client must not
// trust them from a server it does not trust.
type Annotations struct {
	Title       string `json:"title,omitempty"`
	ReadOnly    bool   `json:"read_only,omitempty"`
	Destructive *bool  `json:"destructive,omitempty"`
	Idempotent  bool   `json:"idempotent,omitempty"`
	OpenWorld   *bool  `json:"open_world,omitempty"`
}

// Destructive reports whether the tool may make destructive changes, with the protocol's
// defaults: a tool without annotations, or not read-only without a destructive hint, may.
func (t Tool) Destructive() bool {
	a := t.Annotations
	switch {
	case a == nil:
		return true
	case a.ReadOnly:
		return false
	case a.Destructive == nil:
		return true
	default:
		return *a.Destructive
	}
}

// ReadOnly reports whether the server says the tool changes nothing.
func (t Tool) ReadOnly() bool { return t.Annotations != nil && t.Annotations.ReadOnly }

// ValidateArgs checks a call's arguments against the tool's input schema. Empty args stand
// for the empty object.
func (t Tool) ValidateArgs(args json.RawMessage) error {
	var schema jsonschema.Schema
	if err := json.Unmarshal(t.InputSchema, &schema); err != nil {
		return fmt.Errorf("tool %q: input schema: %w", t.Name, err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		return fmt.Errorf("tool %q: input schema: %w", t.Name, err)
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return fmt.Errorf("tool %q: arguments are not JSON: %w", t.Name, err)
	}
	if err := resolved.Validate(v); err != nil {
		return fmt.Errorf("tool %q: arguments: %w", t.Name, err)
	}
	return nil
}

// toolFromMCP converts a listed tool, canonicalising its schemas.
func toolFromMCP(m *mcp.Tool) (Tool, error) {
	t := Tool{Name: m.Name, Title: m.Title, Description: m.Description}
	var err error
	if t.InputSchema, err = canonicalJSON(m.InputSchema); err != nil {
		return Tool{}, fmt.Errorf("tool %q: input schema: %w", m.Name, err)
	}
	if t.InputSchema == nil {
		t.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	if t.OutputSchema, err = canonicalJSON(m.OutputSchema); err != nil {
		return Tool{}, fmt.Errorf("tool %q: output schema: %w", m.Name, err)
	}
	if a := m.Annotations; a != nil {
		t.Annotations = &Annotations{
			Title:       a.Title,
			ReadOnly:    a.ReadOnlyHint,
			Destructive: a.DestructiveHint,
			Idempotent:  a.IdempotentHint,
			OpenWorld:   a.OpenWorldHint,
		}
	}
	return t, nil
}

// canonicalJSON marshals v (a decoded value or raw JSON) with object keys sorted and
// numbers kept as written; nil stays nil.
func canonicalJSON(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	raw, ok := v.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			return nil, err
		}
	}
	if string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, err
	}
	return json.Marshal(generic)
}

// Catalog is the tools of a set of servers as listed at one moment: what a workflow
// records at step start so that replay never asks a server again. Servers and their
// tools are sorted by name, so equal catalogs marshal to equal bytes.
type Catalog struct {
	Servers []ServerTools `json:"servers"`
}

// ServerTools is one server's tools in a Catalog.
type ServerTools struct {
	Server string `json:"server"`
	Tools  []Tool `json:"tools"`
}

// Add sets the tools of a server, replacing what the catalog held for it, and keeps the
// catalog sorted. Two tools with one name are an error.
func (c *Catalog) Add(server string, tools []Tool) error {
	sorted := slices.Clone(tools)
	slices.SortFunc(sorted, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
	for i := 1; i < len(sorted); i++ {
		if sorted[i].Name == sorted[i-1].Name {
			return fmt.Errorf("mcp server %q lists tool %q twice", server, sorted[i].Name)
		}
	}
	if sorted == nil {
		sorted = []Tool{}
	}
	i, found := slices.BinarySearchFunc(c.Servers, server, func(s ServerTools, name string) int {
		return strings.Compare(s.Server, name)
	})
	if found {
		c.Servers[i].Tools = sorted
		return nil
	}
	c.Servers = slices.Insert(c.Servers, i, ServerTools{Server: server, Tools: sorted})
	return nil
}

// Tools returns the tools recorded for a server.
func (c *Catalog) Tools(server string) ([]Tool, bool) {
	for _, s := range c.Servers {
		if s.Server == server {
			return s.Tools, true
		}
	}
	return nil, false
}

// Lookup finds one tool of one server.
func (c *Catalog) Lookup(server, tool string) (Tool, bool) {
	tools, _ := c.Tools(server)
	i, found := slices.BinarySearchFunc(tools, tool, func(t Tool, name string) int {
		return strings.Compare(t.Name, name)
	})
	if !found {
		return Tool{}, false
	}
	return tools[i], true
}

// ErrUnknownTool is returned by Catalog.ValidateCall for a tool the catalog does not hold.
var ErrUnknownTool = errors.New("unknown tool")

// ValidateCall checks that the catalog holds the tool and that args fit its input schema.
func (c *Catalog) ValidateCall(server, tool string, args json.RawMessage) error {
	t, ok := c.Lookup(server, tool)
	if !ok {
		return fmt.Errorf("mcp server %q: %w %q", server, ErrUnknownTool, tool)
	}
	return t.ValidateArgs(args)
}
