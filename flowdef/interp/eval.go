package interp

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/flowdef/expr"
)

// Step statuses as expressions see them (steps.<id>.status).
const (
	statusSucceeded = "succeeded"
	statusFailed    = "failed"
	statusSkipped   = "skipped"
	statusTimedOut  = "timed_out"
	statusCancelled = "cancelled"
)

// evaluator compiles and evaluates a run's expressions. Every expression and template is
// compiled once per run (cached by its source and item name); evaluation reads only the
// recorded values of a frame, so it gives the same result on every replay.
type evaluator struct {
	vars  []string // every variable name of the definition, sorted
	steps []string // every node id of the definition, sorted
	envs  map[string]*expr.Env
	progs map[string]*expr.Program
	tmpls map[string]*expr.Template
	run   expr.RunInfo
}

func newEvaluator(def *flowdef.Definition, run expr.RunInfo) *evaluator {
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
	return &evaluator{
		vars: slices.Sorted(maps.Keys(vars)), steps: slices.Sorted(maps.Keys(ids)),
		envs: map[string]*expr.Env{}, progs: map[string]*expr.Program{}, tmpls: map[string]*expr.Template{},
		run: run,
	}
}

// walk calls fn on every node of list and of the lists nested in it, in document order.
func walk(list []*flowdef.Node, fn func(*flowdef.Node)) {
	for _, n := range list {
		if n == nil {
			continue
		}
		fn(n)
		for _, sub := range nested(n) {
			walk(sub, fn)
		}
	}
}

// nested lists the node lists inside n.
func nested(n *flowdef.Node) [][]*flowdef.Node {
	out := [][]*flowdef.Node{n.Then, n.Else, n.Default, n.Parallel}
	for _, c := range n.Cases {
		if c != nil {
			out = append(out, c.Steps)
		}
	}
	if n.Loop != nil {
		out = append(out, n.Loop.Steps)
	}
	if n.Foreach != nil {
		out = append(out, n.Foreach.Steps)
	}
	return out
}

// env is the CEL environment for a frame: item visible (under its name) inside foreach
// and loops over a list.
func (e *evaluator) env(f *frame) (*expr.Env, error) {
	key, outer := envKey(f)
	if env, ok := e.envs[key]; ok {
		return env, nil
	}
	env, err := expr.NewEnv(expr.Scope{Vars: e.vars, Steps: e.steps, Item: f.hasItem, ItemName: f.itemName, Extra: outer})
	if err != nil {
		return nil, err
	}
	e.envs[key] = env
	return env, nil
}

// envKey names the CEL environment f needs: its item's name and the names of the
// enclosing items it sees (outer, sorted).
func envKey(f *frame) (key string, outer []string) {
	key = "\x00"
	if f.hasItem {
		key = f.itemName
	}
	outer = sortedKeys(f.outer)
	for _, n := range outer {
		key += "\x00" + n
	}
	return key, outer
}

// activation is the recorded data of f.
func (e *evaluator) activation(f *frame) expr.Activation {
	return expr.Activation{Inputs: f.run.inputs, Vars: f.vars, Steps: f.steps, Item: f.item, Index: f.index, ItemName: f.itemName, Run: e.run, Extra: f.outer}
}

func (e *evaluator) program(f *frame, src string) (*expr.Program, error) {
	env, err := e.env(f)
	if err != nil {
		return nil, err
	}
	key, _ := envKey(f)
	key += "\x01" + src
	if p, ok := e.progs[key]; ok {
		return p, nil
	}
	p, err := env.Compile(src)
	if err != nil {
		return nil, err
	}
	e.progs[key] = p
	return p, nil
}

// eval evaluates the CEL expression src in f.
func (e *evaluator) eval(f *frame, src string) (any, error) {
	p, err := e.program(f, src)
	if err != nil {
		return nil, err
	}
	return p.Eval(e.activation(f))
}

// evalBool evaluates a condition: anything but a bool is an error.
func (e *evaluator) evalBool(f *frame, src string) (bool, error) {
	p, err := e.program(f, src)
	if err != nil {
		return false, err
	}
	return p.EvalBool(e.activation(f))
}

// evalList evaluates a list expression (over:).
func (e *evaluator) evalList(f *frame, src string) ([]any, error) {
	p, err := e.program(f, src)
	if err != nil {
		return nil, err
	}
	return p.EvalList(e.activation(f))
}

func (e *evaluator) template(src string) (*expr.Template, error) {
	if t, ok := e.tmpls[src]; ok {
		return t, nil
	}
	t, err := expr.ParseTemplate(src)
	if err != nil {
		return nil, err
	}
	e.tmpls[src] = t
	return t, nil
}

// render renders the template src as a string.
func (e *evaluator) render(f *frame, src string) (string, error) {
	t, err := e.template(src)
	if err != nil {
		return "", err
	}
	if t.IsLiteral() {
		return t.Render(nil, expr.Activation{})
	}
	env, err := e.env(f)
	if err != nil {
		return "", err
	}
	return e.renderWith(t, env, f)
}

func (e *evaluator) renderWith(t *expr.Template, env *expr.Env, f *frame) (string, error) {
	// A Template caches its programs for the last Env it was given; templates are cached
	// per run and each run's Envs live as long as it, so a template compiles once per run
	// (and item name, when one is used under several).
	return t.Render(env, e.activation(f))
}

// value renders every string inside v (maps, lists, scalars) with RenderValue, so a
// string that is exactly one ${{ expr }} keeps the expression's type. Maps are rebuilt
// key by key in sorted order.
func (e *evaluator) value(f *frame, v any) (any, error) {
	switch x := v.(type) {
	case string:
		t, err := e.template(x)
		if err != nil {
			return nil, err
		}
		if t.IsLiteral() {
			return t.Render(nil, expr.Activation{})
		}
		env, err := e.env(f)
		if err != nil {
			return nil, err
		}
		return t.RenderValue(env, e.activation(f))
	case map[string]any:
		out := make(map[string]any, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			r, err := e.value(f, x[k])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, el := range x {
			r, err := e.value(f, el)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = r
		}
		return out, nil
	default:
		return v, nil
	}
}

// valueMap is value over a map (with:, set:, params:).
func (e *evaluator) valueMap(f *frame, m map[string]any) (map[string]any, error) {
	if m == nil {
		return map[string]any{}, nil
	}
	v, err := e.value(f, m)
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}

// jsonValue decodes raw JSON into a plain value (nil for empty input; the raw text as a
// string when it is not JSON).
func jsonValue(raw []byte) any {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	return v
}
