package flowctl

import (
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gateflow/gateflow/flow"
)

func (a *app) workflowsCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "workflows",
		Aliases: []string{"wf"},
		Short:   "List the workflows the workers of the task queue serve",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			cat, err := c.Workflows(cmd.Context())
			if err != nil {
				return err
			}
			if a.output == "json" {
				return printJSON(a.stdout, cat)
			}
			t := newTable(a.stdout, "NAME", "CATEGORY", "VERSION", "INPUT", "DESCRIPTION")
			for _, w := range cat.Workflows {
				t.row(w.Name, orDash(w.Category), orDash(w.Version), inputFields(w.InputSchema), orDash(w.Description))
			}
			return t.flush()
		},
	}
}

// inputFields summarises an input schema: an object's fields, e.g. "{name, tags}", or
// the JSON type.
func inputFields(s *flow.Schema) string {
	if s == nil || s.Type == "" {
		return "any"
	}
	if s.Type != "object" || s.Properties == nil {
		return s.Type
	}
	f := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		f = append(f, k)
	}
	sort.Strings(f)
	return "{" + strings.Join(f, ", ") + "}"
}
