package serve

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/flowdef/interp"
	"github.com/gateflow/gateflow/internal/protocol"
)

// Options configure a Loader.
type Options struct {
	// Logger receives what Watch does: reloads, invalid edits (every error), additions,
	// removals. Nil means slog.Default().
	Logger *slog.Logger
	// Interp are the interpreter's options for every definition served and for the
	// generic definition flow (interp.DefaultModel, interp.MaxVisits...).
	Interp []interp.Option
}

// Loader serves the definitions of one directory on one worker (see Dir). It is safe for
// concurrent use.
type Loader struct {
	w    *flow.Worker
	dir  string
	opts Options
	log  *slog.Logger
	// publish republishes the worker's catalog (Worker.Publish; replaced in tests).
	publish func(context.Context) error
	// addFlow adds a new definition's flow to the worker (Worker.AddFlows, which
	// publishes the catalog once the worker started; replaced in tests).
	addFlow func(flow.Definition) error

	mu    sync.Mutex
	flows map[string]*served // by definition name: every flow registered at Dir
	files map[string]file    // by path: what the last load or reload saw
}

// file is what a reload saw of one file: the sha256 of its bytes and the definition name
// it serves ("" when it never loaded).
type file struct {
	sum  [32]byte
	name string
}

// served is one definition registered on the worker: the interpreted flow, whose catalog
// entry (Info) follows the definition current in its Live.
type served struct {
	flow.Definition
	live *interp.Live

	mu      sync.RWMutex
	info    core.WorkflowInfo
	path    string
	removed bool
}

// Info is the flow's catalog entry for the definition current now.
func (s *served) Info() core.WorkflowInfo {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.info
}

// Extensions are the file name extensions Dir loads.
var Extensions = []string{".yaml", ".yml", ".json"}

// Dir loads every definition file of dir (Extensions) and adds each to w as a flow, with
// the generic definition flow (EnsureDefinitionFlow). Call it before w.Start. Each file is
// checked with flowdef.Check against what w registered (flowdef.NewStaticRegistry of
// w.Registry()) plus the other definitions of dir (for `call:`); when one is invalid
// nothing is added and the error carries every problem of every file, one per line.
// Definitions are published in the catalog with kind yaml, their hash and their file as
// source.
func Dir(w *flow.Worker, dir string, opts Options) (*Loader, error) {
	if w == nil {
		return nil, errors.New("serve: worker is nil")
	}
	l := &Loader{w: w, dir: dir, opts: opts, log: opts.Logger, publish: w.Publish,
		addFlow: func(f flow.Definition) error { return w.AddFlows(f) },
		flows:   map[string]*served{}, files: map[string]file{}}
	if l.log == nil {
		l.log = slog.Default()
	}
	raw, err := readDir(dir)
	if err != nil {
		return nil, err
	}
	defs, sums, errs := l.check(raw, nil)
	if len(errs) > 0 {
		return nil, fmt.Errorf("serve: %s: invalid definitions, none served:\n%w", dir, errors.Join(errs...))
	}
	var added []flow.Definition
	for _, path := range sortedKeys(defs) {
		def := defs[path]
		s, err := l.newServed(def, path)
		if err != nil {
			return nil, err
		}
		l.flows[def.Name] = s
		l.files[path] = file{sum: sums[path], name: def.Name}
		added = append(added, s)
	}
	for path, sum := range sums { // files that did not load: none here, kept for symmetry
		if _, ok := l.files[path]; !ok {
			l.files[path] = file{sum: sum}
		}
	}
	if err := EnsureDefinitionFlow(w, opts.Interp...); err != nil {
		return nil, err
	}
	if err := w.AddFlows(added...); err != nil {
		return nil, fmt.Errorf("serve: %s: %w", dir, err)
	}
	return l, nil
}

// EnsureDefinitionFlow adds the generic definition flow (interp.DefinitionFlow, the
// workflow type interp.DefinitionFlowName) to w unless it serves it already, so that
// `flowctl start --file` runs on its task queue. Call it before w.Start.
func EnsureDefinitionFlow(w *flow.Worker, opts ...interp.Option) error {
	if slices.Contains(w.Registry().Flows, interp.DefinitionFlowName) {
		return nil
	}
	f, err := interp.DefinitionFlow(append([]interp.Option{interp.Registry(flowdef.NewStaticRegistry(w.Registry()))}, opts...)...)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if err := w.AddFlows(f); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// Flows are the flows the loader added to the worker, one per definition (at Dir, or
// when Reload found a new file; removed ones too: they stay served, failing new runs),
// sorted by name; not the generic definition flow.
func (l *Loader) Flows() []flow.Definition {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]flow.Definition, 0, len(l.flows))
	for _, name := range sortedKeys(l.flows) {
		out = append(out, l.flows[name])
	}
	return out
}

// Dir is the directory the loader serves.
func (l *Loader) Dir() string { return l.dir }

// Names are the names of the definitions served (removed ones excluded), sorted.
func (l *Loader) Names() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for name, s := range l.flows {
		if !s.isRemoved() {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Current is the definition new runs of name use, or nil when none is served under that
// name (never loaded, or removed).
func (l *Loader) Current(name string) *flowdef.Definition {
	l.mu.Lock()
	s := l.flows[name]
	l.mu.Unlock()
	if s == nil || s.isRemoved() {
		return nil
	}
	return s.live.Current()
}

func (s *served) isRemoved() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.removed
}

// newServed builds the flow serving def, loaded from path.
func (l *Loader) newServed(def *flowdef.Definition, path string) (*served, error) {
	live, err := interp.NewLive(def)
	if err != nil {
		return nil, fmt.Errorf("serve: %s: %w", path, err)
	}
	f, err := live.Flow(l.interpOptions(def, path)...)
	if err != nil {
		return nil, fmt.Errorf("serve: %s: %w", path, err)
	}
	return &served{Definition: f, live: live, info: f.Info(), path: path}, nil
}

// interpOptions are the loader's interpreter options plus the catalog fields of a
// definition loaded from path.
func (l *Loader) interpOptions(def *flowdef.Definition, path string) []interp.Option {
	hash := def.Hash()
	// The worker's registry first, so the loader's own options may replace it.
	opts := append([]interp.Option{interp.Registry(flowdef.NewStaticRegistry(l.w.Registry()))}, l.opts.Interp...)
	return append(opts, interp.FlowOptions(func(i *core.WorkflowInfo) error {
		i.Kind, i.Hash, i.Source = protocol.KindYAMLFlow, hash, path
		return nil
	}))
}

// infoOf is the catalog entry the flow serving def has.
func (l *Loader) infoOf(def *flowdef.Definition, path string) (core.WorkflowInfo, error) {
	f, err := interp.Flow(def, l.interpOptions(def, path)...)
	if err != nil {
		return core.WorkflowInfo{}, err
	}
	return f.Info(), nil
}

// readDir reads every definition file of dir, by path.
func readDir(dir string) (map[string][]byte, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("serve: read the definitions directory: %w", err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() || !slices.Contains(Extensions, strings.ToLower(filepath.Ext(e.Name()))) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, err := flowdef.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
		out[path] = data
	}
	return out, nil
}

// check parses every file of raw and validates each against the worker's registry plus
// the definitions of the directory (those of raw, then those of others for names raw does
// not define). It returns the valid definitions by path, the sums of every file and every
// problem of every file.
func (l *Loader) check(raw map[string][]byte, others map[string]*flowdef.Definition) (map[string]*flowdef.Definition, map[string][32]byte, []error) {
	parsed := map[string]*flowdef.Definition{}
	sums := map[string][32]byte{}
	byName := map[string]string{}
	var errs []error
	for _, path := range sortedKeys(raw) {
		sums[path] = sha256.Sum256(raw[path])
		def, err := flowdef.Parse(path, raw[path])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if first, dup := byName[def.Name]; dup {
			errs = append(errs, fmt.Errorf("%s: definition %q is also defined by %s", def.Pos, def.Name, first))
			continue
		}
		byName[def.Name] = path
		parsed[path] = def
	}
	base := l.w.Registry()
	reg := flowdef.NewStaticRegistry(base)
	reg.GoFlows, reg.Definitions = nil, map[string]*flowdef.Definition{}
	for name, d := range others {
		reg.Definitions[name] = d
	}
	for _, d := range parsed {
		reg.Definitions[d.Name] = d
	}
	for _, name := range base.Flows {
		if _, ok := reg.Definitions[name]; !ok {
			reg.GoFlows = append(reg.GoFlows, name)
		}
	}
	valid := map[string]*flowdef.Definition{}
	g := l.w.Guards()
	for _, path := range sortedKeys(parsed) {
		def := parsed[path]
		if slices.Contains(base.Flows, def.Name) && !l.serves(def.Name) {
			errs = append(errs, fmt.Errorf("%s: definition %q has the name of a Go flow of the worker", def.Pos, def.Name))
			continue
		}
		if err := flowdef.Validate(def, reg, flowdef.WithWorkerGuards(flowdef.WorkerGuards{MaxSteps: g.MaxSteps, MaxFanOut: g.MaxFanOut})); err != nil {
			errs = append(errs, err)
			continue
		}
		valid[path] = def
	}
	return valid, sums, errs
}

// serves reports whether name is one of the loader's flows.
func (l *Loader) serves(name string) bool {
	_, ok := l.flows[name]
	return ok
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// removedDefinition is what a removed definition's flow runs: a failure that says so.
func removedDefinition(name, path string) (*flowdef.Definition, error) {
	msg := fmt.Sprintf("definition %s was removed (%s): it is not served for new runs; restore the file or run a definition with flowctl start --file", name, path)
	doc := map[string]any{
		"name":        name,
		"description": "Removed: " + msg,
		"steps":       []any{map[string]any{"id": "removed", "finish": map[string]any{"status": "failed", "message": msg}}},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	return flowdef.Parse(path, b)
}
