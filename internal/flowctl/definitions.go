package flowctl

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/internal/protocol"
)

// validateOptions are the flags of flowctl validate.
type validateOptions struct {
	offline bool
	dir     string
	// actions, providers, gateTypes, goFlows and mcpServers are what --action,
	// --item-provider, --gate-type, --go-flow and --mcp-server add to the registry.
	actions, providers, gateTypes, goFlows, mcpServers []string
}

// fileResult is what flowctl validate reports of one file (-o json prints a list of them).
type fileResult struct {
	File   string      `json:"file"`
	Valid  bool        `json:"valid"`
	Errors []fileError `json:"errors"`
	// Hash is the definition's content hash (flowdef.Definition.Hash), empty when the
	// file does not parse.
	Hash string `json:"hash"`
}

// fileError is one problem of a file, flat for editors and CI.
type fileError struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Col     int    `json:"col"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
}

func (a *app) validateCommand() *cobra.Command {
	var o validateOptions
	cmd := &cobra.Command{
		Use:   "validate FILE...",
		Short: "Validate declarative flow definitions against what the workers serve",
		Long: "validate parses and validates each definition file (YAML or JSON) and prints every\n" +
			"problem of every file, one per line: file:line:col: message (hint: ...).\n\n" +
			"Names (actions, item providers, gate resolvers, Go flows) are checked against the\n" +
			"registries the workers of the task queue publish in its catalog; with --offline,\n" +
			"against the built-ins only (actions shell, http and agent; gate resolvers http and\n" +
			"command; no Go flows), plus what --action, --item-provider, --gate-type and\n" +
			"--go-flow add in either mode. A call to another definition is resolved from the\n" +
			"file's directory (or --dir): <name>.yaml, <name>.yml or <name>.json.\n\n" +
			"Exit status 0 when every file is valid, 2 when one is not.",
		Args: minArgs(1, "FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			base, err := a.validationRegistry(cmd, &o)
			if err != nil {
				return err
			}
			return a.print(validationView(validateFiles(args, base, o.dir)))
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.offline, "offline", false, "do not ask the server: check against the built-ins (and the flags below) only")
	f.StringVar(&o.dir, "dir", "", "directory of the definitions calls refer to (default: each file's own)")
	f.StringSliceVar(&o.actions, "action", nil, "also accept this action name (repeatable, comma-separated)")
	f.StringSliceVar(&o.providers, "item-provider", nil, "also accept this item provider (repeatable)")
	f.StringSliceVar(&o.gateTypes, "gate-type", nil, "also accept this poll gate resolver type (repeatable)")
	f.StringSliceVar(&o.goFlows, "go-flow", nil, "also accept a call to this Go flow (repeatable)")
	f.StringSliceVar(&o.mcpServers, "mcp-server", nil, "also accept this MCP server name (repeatable; with --offline and without it, any server name passes)")
	return cmd
}

// validationRegistry is the registry files are checked against: the catalog's (or the
// built-ins with --offline) and the flags'.
func (a *app) validationRegistry(cmd *cobra.Command, o *validateOptions) (*flowdef.StaticRegistry, error) {
	reg := flowdef.NewStaticRegistry(core.RegistryInfo{}) // the built-ins
	if !o.offline {
		c, err := a.client(cmd.Context())
		if err != nil {
			return nil, fmt.Errorf("%w (validate with --offline to check against the built-ins only)", err)
		}
		if reg, err = c.Registry(cmd.Context()); err != nil {
			if errors.Is(err, core.ErrNoCatalog) {
				return nil, fmt.Errorf("%w (validate with --offline to check against the built-ins only)", err)
			}
			return nil, err
		}
	}
	reg.Actions = append(reg.Actions, o.actions...)
	reg.ItemProviders = append(reg.ItemProviders, o.providers...)
	reg.GateTypes = append(reg.GateTypes, o.gateTypes...)
	reg.GoFlows = append(reg.GoFlows, o.goFlows...)
	if len(o.mcpServers) > 0 {
		reg.MCPServers = append(reg.MCPServers, o.mcpServers...)
	}
	return reg, nil
}

// validateFiles checks each file against base, resolving calls from dir or, when dir is
// empty, from the file's directory (one registry, and so one cache, per directory).
func validateFiles(files []string, base *flowdef.StaticRegistry, dir string) []fileResult {
	byDir := map[string]*flowdef.StaticRegistry{}
	out := make([]fileResult, 0, len(files))
	for _, file := range files {
		d := dir
		if d == "" {
			d = filepath.Dir(file)
		}
		reg, ok := byDir[d]
		if !ok {
			reg = &flowdef.StaticRegistry{Actions: base.Actions, Fallback: base.Fallback, ItemProviders: base.ItemProviders,
				GateTypes: base.GateTypes, GoFlows: base.GoFlows, Services: base.Services, MCPServers: base.MCPServers, Dir: d}
			byDir[d] = reg
		}
		out = append(out, validateFile(file, reg))
	}
	return out
}

func validateFile(file string, reg flowdef.Registry) fileResult {
	r := fileResult{File: file, Errors: []fileError{}}
	data, err := flowdef.ReadFile(file)
	if err != nil {
		r.Errors = append(r.Errors, fileError{File: file, Message: fmt.Sprintf("cannot read the file: %v", rootCause(err))})
		return r
	}
	def, err := flowdef.Check(file, data, reg)
	if def != nil {
		r.Hash = def.Hash()
	}
	if err != nil {
		errs := flowdef.Errors(err)
		if len(errs) == 0 { // not a *ValidationError: keep it, whole
			errs = []flowdef.Error{{Pos: flowdef.Pos{File: file}, Message: err.Error()}}
		}
		for _, e := range errs {
			r.Errors = append(r.Errors, fileError{File: e.Pos.File, Line: e.Pos.Line, Col: e.Pos.Col, Message: e.Message, Hint: e.Hint})
		}
	}
	r.Valid = len(r.Errors) == 0
	return r
}

// validationView is the results (for people, every error of every file, one per line); it
// fails with ExitUsage when a file is invalid.
func validationView(results []fileResult) view {
	v := view{value: results, text: func(w io.Writer) error {
		for _, r := range results {
			if r.Valid {
				fmt.Fprintf(w, "%s: valid (hash %s)\n", r.File, r.Hash)
				continue
			}
			for _, e := range r.Errors {
				fmt.Fprintln(w, flowdef.Error{Pos: flowdef.Pos{File: e.File, Line: e.Line, Col: e.Col},
					Message: e.Message, Hint: e.Hint}.String())
			}
		}
		return nil
	}}
	invalid, count := 0, 0
	for _, r := range results {
		if !r.Valid {
			invalid++
			count += len(r.Errors)
		}
	}
	if invalid > 0 {
		v.err = &exitError{code: ExitUsage, err: fmt.Errorf("%s in %d of %d %s", plural(count, "error"), invalid,
			len(results), pluralWord(len(results), "file"))}
	}
	return v
}

func (a *app) flowsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "flows",
		Short: "List the declarative definitions the workers of the task queue serve",
		Long: "flows lists the definitions (YAML or JSON files) the workers of the task queue load\n" +
			"and serve, from its catalog: name, version, content hash and where the worker loaded\n" +
			"each from. Go flows are listed by `flowctl workflows`.",
		Args: cobra.NoArgs,
		RunE: a.runE(nil, func(x call) (view, error) {
			cat, err := x.c.Workflows(x.ctx)
			if err != nil {
				return view{}, err
			}
			return definitionsView(cat), nil
		}),
	}
}

// definitionsView lists the catalog's entries of kind yaml.
func definitionsView(cat *core.Catalog) view {
	defs := []core.WorkflowInfo{}
	for _, w := range cat.Workflows {
		if w.Kind == protocol.KindYAMLFlow {
			defs = append(defs, w)
		}
	}
	if len(defs) == 0 {
		return view{value: defs, text: say("No definitions served.\n")}
	}
	return view{value: defs, text: func(w io.Writer) error {
		t := newTable(w, "NAME", "VERSION", "HASH", "SOURCE", "PUBLISHED BY")
		for _, d := range defs {
			t.row(d.Name, orDash(d.Version), orDash(shortHash(d.Hash)), orDash(d.Source), orDash(d.PublishedBy))
		}
		return t.flush()
	}}
}

// shortHash is the first 12 hex digits of a content hash, enough to tell versions apart.
func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func plural(n int, word string) string { return fmt.Sprintf("%d %s", n, pluralWord(n, word)) }

func pluralWord(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// minArgs wants at least n arguments, named names in the error.
func minArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return usageErr("%s needs %s (got %d arguments); see flowctl %s --help", cmd.Name(), names, len(args), cmd.Name())
		}
		return nil
	}
}
