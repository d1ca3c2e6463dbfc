package flowctl

import (
	"encoding/json"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"
)

func (a *app) workflowsCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "workflows",
		Aliases: []string{"wf"},
		Short:   "List the workflows the workers of the task queue serve",
		Args:    cobra.NoArgs,
		RunE: a.runE(nil, func(x call) (view, error) {
			cat, err := x.c.Workflows(x.ctx)
			if err != nil {
				return view{}, err
			}
			return view{value: cat, text: func(w io.Writer) error {
				t := newTable(w, "NAME", "CATEGORY", "VERSION", "INPUT", "DESCRIPTION")
				for _, wf := range cat.Workflows {
					t.row(wf.Name, orDash(wf.Category), orDash(wf.Version), inputFields(wf.InputSchema), orDash(wf.Description))
				}
				return t.flush()
			}}, nil
		}),
	}
}

// inputFields summarises a flow's input schema (a JSON Schema document): an object's
// fields, e.g. "{name, tags}", or the JSON type, "any" when anything goes.
func inputFields(raw json.RawMessage) string {
	var doc struct {
		schemaNode
		Defs map[string]schemaNode `json:"$defs"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &doc) != nil {
		return "any"
	}
	n := doc.schemaNode
	if def, ok := doc.Defs[strings.TrimPrefix(n.Ref, "#/$defs/")]; ok && n.Ref != "" {
		n = def
	}
	typ := n.jsonType()
	switch {
	case typ == "":
		return "any"
	case typ != "object" || (n.Properties == nil && string(n.AdditionalProperties) != "false"):
		return typ // a map, or an object of any members
	}
	f := make([]string, 0, len(n.Properties))
	for k := range n.Properties {
		f = append(f, k)
	}
	sort.Strings(f)
	return "{" + strings.Join(f, ", ") + "}"
}

// schemaNode is what inputFields reads of a schema.
type schemaNode struct {
	Type       json.RawMessage            `json:"type"`
	Ref        string                     `json:"$ref"`
	Properties map[string]json.RawMessage `json:"properties"`
	// AdditionalProperties is false for a struct, which takes its own members only.
	AdditionalProperties json.RawMessage `json:"additionalProperties"`
}

// jsonType is the node's type other than "null" ("" when it has none or several).
func (n schemaNode) jsonType() string {
	var one string
	if json.Unmarshal(n.Type, &one) == nil {
		return one
	}
	var many []string
	_ = json.Unmarshal(n.Type, &many)
	var types []string
	for _, t := range many {
		if t != "null" {
			types = append(types, t)
		}
	}
	if len(types) == 1 {
		return types[0]
	}
	return ""
}
