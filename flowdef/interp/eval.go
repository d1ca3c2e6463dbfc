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

// evaluator evaluates a run's expressions. The compiled environments, programs and
// templates are those of the definition (compiledFor: shared by every run of the same
// definition content, compiled once per worker process), so a run compiles nothing its
// definition's earlier runs compiled. Compiling is a pure function of the definition and
// the expression, and evaluation reads only the recorded values of a frame, so sharing
// them changes no result and every replay gives the same values.
type evaluator struct {
	c   *compiled
	run expr.RunInfo
}

func newEvaluator(def *flowdef.Definition, run expr.RunInfo) *evaluator {
	return &evaluator{c: compiledFor(def), run: run}
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
func (e *evaluator) env(f *frame) (*expr.Env, error) { return e.c.env(envKey(f)) }

// envKey names the scope of a frame: "\x00" at the top; inside an item, the item's name
// followed by the names of the enclosing items it sees, sorted, each after a "\x00"
// (see compiled.envLocked).
func envKey(f *frame) string {
	if !f.hasItem {
		return "\x00"
	}
	key := f.itemName
	for _, n := range sortedKeys(f.outer) {
		key += "\x00" + n
	}
	return key
}

// activation is the recorded data of f.
func (e *evaluator) activation(f *frame) expr.Activation {
	return expr.Activation{Inputs: f.run.inputs, Vars: f.vars, Steps: f.steps, Item: f.item, Index: f.index, ItemName: f.itemName, Run: e.run, Extra: f.outer}
}

func (e *evaluator) program(f *frame, src string) (*expr.Program, error) {
	return e.c.program(envKey(f), src)
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

// template is src parsed, shared by the frames of f's scope (a Template caches its
// programs for one Env).
func (e *evaluator) template(f *frame, src string) (*expr.Template, error) {
	return e.c.template(envKey(f), src)
}

// render renders the template src as a string.
func (e *evaluator) render(f *frame, src string) (string, error) {
	t, err := e.template(f, src)
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
	// per scope (envKey) with that scope's Env, so each compiles once per definition.
	return t.Render(env, e.activation(f))
}

// value renders every string inside v (maps, lists, scalars) with RenderValue, so a
// string that is exactly one ${{ expr }} keeps the expression's type. Maps are rebuilt
// key by key in sorted order.
func (e *evaluator) value(f *frame, v any) (any, error) {
	return renderTree(v, func(x string) (any, error) {
		t, err := e.template(f, x)
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
	})
}

// renderTree rebuilds v (maps, lists, scalars) with every string replaced by leaf's
// value for it; maps key by key in sorted order, errors prefixed by the key or index.
func renderTree(v any, leaf func(string) (any, error)) (any, error) {
	switch x := v.(type) {
	case string:
		return leaf(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			r, err := renderTree(x[k], leaf)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, el := range x {
			r, err := renderTree(el, leaf)
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
