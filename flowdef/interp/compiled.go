package interp

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/flowdef/expr"
	"github.com/gateflow/gateflow/signals"
)

// maxCompiled bounds how many definitions (by content hash) and schemas the process keeps
// compiled: past it an entry is dropped and compiled again when next used. Served
// directories hold a few definitions; a worker that runs many one-off definitions
// (flowctl start --file) or reloads often stays bounded.
const maxCompiled = 256

// compiled holds what one definition's expressions compile to: a CEL environment per
// scope (the top of the run, or inside an item under its name), the programs and the
// parsed templates, keyed by scope and source. Everything in it is a pure function of the
// definition's content, so every run of that content shares it. Safe for concurrent use.
type compiled struct {
	vars  []string // every variable name of the definition, sorted
	steps []string // every node id of the definition, sorted

	mu    sync.Mutex
	envs  map[string]*expr.Env
	progs map[string]*expr.Program
	tmpls map[string]*expr.Template
}

// bounded is a map of at most maxCompiled entries that drops the oldest when full (a
// dropped entry is compiled again, to the same result, when next used). Safe for
// concurrent use.
type bounded[V any] struct {
	mu    sync.Mutex
	m     map[string]V
	order []string // keys, oldest first
}

func (b *bounded[V]) get(key string) (V, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.m[key]
	return v, ok
}

// add stores v under key unless the key is there already, and returns the stored value.
func (b *bounded[V]) add(key string, v V) V {
	b.mu.Lock()
	defer b.mu.Unlock()
	if old, ok := b.m[key]; ok {
		return old
	}
	if b.m == nil {
		b.m = map[string]V{}
	}
	if len(b.order) >= maxCompiled {
		delete(b.m, b.order[0])
		b.order = b.order[1:]
	}
	b.m[key] = v
	b.order = append(b.order, key)
	return v
}

// compiledCache is the process's compiled definitions, by content hash.
var compiledCache bounded[*compiled]

// compiledFor returns the compiled expressions of def's content, creating the entry on
// first use.
func compiledFor(def *flowdef.Definition) *compiled {
	key := def.Hash()
	if c, ok := compiledCache.get(key); ok {
		return c
	}
	return compiledCache.add(key, newCompiled(def))
}

func newCompiled(def *flowdef.Definition) *compiled {
	ids := map[string]bool{}
	vars := map[string]bool{}
	for _, k := range sortedKeys(def.Vars) {
		vars[k] = true
	}
	for _, list := range [][]*flowdef.Node{def.Steps, def.OnError, def.Always} {
		walk(list, func(n *flowdef.Node) {
			if n.ID != "" {
				ids[n.ID] = true
			}
			for _, k := range sortedKeys(n.Set) {
				vars[k] = true
			}
		})
	}
	return &compiled{
		vars: slices.Sorted(maps.Keys(vars)), steps: slices.Sorted(maps.Keys(ids)),
		envs: map[string]*expr.Env{}, progs: map[string]*expr.Program{}, tmpls: map[string]*expr.Template{},
	}
}

// env is the environment of the scope key ("\x00" at the top, else the item's name and
// the enclosing items' names, see envKey).
func (c *compiled) env(key string) (*expr.Env, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.envLocked(key)
}

func (c *compiled) envLocked(key string) (*expr.Env, error) {
	if env, ok := c.envs[key]; ok {
		return env, nil
	}
	scope := expr.Scope{Vars: c.vars, Steps: c.steps}
	if key != "\x00" {
		names := strings.Split(key, "\x00")
		scope.Item, scope.ItemName = true, names[0]
		scope.Extra = names[1:]
	}
	env, err := expr.NewEnv(scope)
	if err != nil {
		return nil, err
	}
	c.envs[key] = env
	return env, nil
}

// program is src compiled in the scope key. A compile error is not kept: the next use
// compiles again and fails the same way.
func (c *compiled) program(key, src string) (*expr.Program, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	pk := key + "\x01" + src
	if p, ok := c.progs[pk]; ok {
		return p, nil
	}
	env, err := c.envLocked(key)
	if err != nil {
		return nil, err
	}
	p, err := env.Compile(src)
	if err != nil {
		return nil, err
	}
	c.progs[pk] = p
	return p, nil
}

// template is src parsed, one Template per scope key (a Template caches its programs for
// the last Env it rendered with, and each scope has one Env).
func (c *compiled) template(key, src string) (*expr.Template, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tk := key + "\x01" + src
	if t, ok := c.tmpls[tk]; ok {
		return t, nil
	}
	t, err := expr.ParseTemplate(src)
	if err != nil {
		return nil, err
	}
	c.tmpls[tk] = t
	return t, nil
}

// schemaCache is the process's compiled JSON Schemas (inputs, outputs, output_schema), by
// their JSON text.
var schemaCache bounded[*signals.Schema]

// compileSchema is signals.CompileSchema, compiled once per schema text (a compiled
// schema only validates, so runs share it). A schema that does not compile is not kept.
func compileSchema(raw json.RawMessage) (*signals.Schema, error) {
	key := string(raw)
	if sc, ok := schemaCache.get(key); ok {
		return sc, nil
	}
	sc, err := signals.CompileSchema(raw)
	if err != nil {
		return nil, err
	}
	return schemaCache.add(key, sc), nil
}
