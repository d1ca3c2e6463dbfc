package interp

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/flowdef/expr"
)

// triggerOptions maps the triggers onto OnRunOf (completed, failed, finished: both; the
// triggers of one flow merged into one option), flow.TriggerInput when one of them has
// an if or an input, and OnSignal.
func triggerOptions(ts []*flowdef.Trigger, fail func(flowdef.Pos, string, ...any)) []envelopeOption {
	var out []envelopeOption
	type runOf struct {
		pos    flowdef.Pos
		when   []core.RunEnd
		ts     []*flowdef.Trigger
		mapped bool
	}
	byFlow := map[string]*runOf{}
	var flows []string
	for i, t := range ts {
		if t == nil {
			continue
		}
		var when []core.RunEnd
		switch t.On {
		case "completed":
			when = []core.RunEnd{core.WhenCompleted}
		case "failed":
			when = []core.RunEnd{core.WhenFailed}
		case "finished":
			when = []core.RunEnd{core.WhenCompleted, core.WhenFailed}
		case "signal":
			for _, k := range []string{"if", "input"} {
				if t.Fields.Has(k) {
					fail(t.Fields.At(k, t.Pos), "triggers[%d].%s: a trigger on signal takes no %s: the client starts the run with the signal's payload; check it in the flow's first steps", i, k, k)
				}
			}
			out = append(out, envelopeOption{pos: t.Pos, field: fmt.Sprintf("triggers[%d]", i), opt: flow.OnSignal(t.Signal)})
			continue
		default:
			fail(t.Fields.At("on", t.Pos), "triggers[%d].on: unknown value %q: want completed, failed, finished or signal", i, t.On)
			continue
		}
		r := byFlow[t.Flow]
		if r == nil {
			r = &runOf{pos: t.Pos}
			byFlow[t.Flow] = r
			flows = append(flows, t.Flow)
		}
		for _, w := range when {
			if !slices.Contains(r.when, w) {
				r.when = append(r.when, w)
			}
		}
		r.ts = append(r.ts, t)
		r.mapped = r.mapped || t.Fields.Has("if") || t.Fields.Has("input")
	}
	for _, f := range flows {
		r := byFlow[f]
		out = append(out, envelopeOption{pos: r.pos, field: "trigger on " + f, opt: flow.OnRunOf(f, r.when...)})
		if r.mapped {
			m, err := newTriggerMap(f, r.ts)
			if err != nil {
				fail(r.pos, "trigger on %s: %v", f, err)
				continue
			}
			out = append(out, envelopeOption{pos: r.pos, field: "trigger on " + f, opt: flow.TriggerInput(f, m.input)})
		}
	}
	return out
}

// triggerMap is the flow.TriggerInput of a definition's triggers on one flow: for a run
// of that flow that ended end, the first of them, in the definition's order, whose on
// matches end and whose if holds starts the flow, with its input rendered (the output as
// it is without one); when none does, nothing starts.
//
// It is the definition's current version that decides, as Flow built it, and the ended
// run's wrapper calls it at that run's end and records the answer (see
// flow.TriggerInput): a definition edited later changes only runs that end later, and a
// replay of the ended run uses the recorded answer.
type triggerMap struct {
	flow  string
	env   *expr.Env
	rules []triggerRule
}

// triggerRule is one trigger: the ends it matches, its compiled if (nil: always) and its
// input (nil without one).
type triggerRule struct {
	when   []core.RunEnd
	cond   *expr.Program
	input  any
	hasIn  bool
	prefix string
}

// newTriggerMap compiles the if and input templates of the triggers ts on flow f.
func newTriggerMap(f string, ts []*flowdef.Trigger) (*triggerMap, error) {
	env, err := expr.NewEnv(expr.Scope{Inputs: []string{}, Extra: flowdef.TriggerScope.Extra})
	if err != nil {
		return nil, err
	}
	m := &triggerMap{flow: f, env: env}
	for _, t := range ts {
		r := triggerRule{input: t.Input, hasIn: t.Fields.Has("input"), prefix: t.Fields.At("if", t.Pos).String()}
		switch t.On {
		case "completed":
			r.when = []core.RunEnd{core.WhenCompleted}
		case "failed":
			r.when = []core.RunEnd{core.WhenFailed}
		default:
			r.when = []core.RunEnd{core.WhenCompleted, core.WhenFailed}
		}
		if t.Fields.Has("if") {
			if r.cond, err = env.CompileBool(flowdef.TriggerCondition(t.If)); err != nil {
				return nil, fmt.Errorf("%s: if: %w", t.Fields.At("if", t.Pos), err)
			}
		}
		if r.hasIn {
			if err := checkTemplates(env, t.Input); err != nil {
				return nil, fmt.Errorf("%s: input: %w", t.Fields.At("input", t.Pos), err)
			}
		}
		m.rules = append(m.rules, r)
	}
	return m, nil
}

// checkTemplates parses and compiles every string template inside v.
func checkTemplates(env *expr.Env, v any) error {
	switch x := v.(type) {
	case string:
		t, err := expr.ParseTemplate(x)
		if err != nil {
			return err
		}
		return t.Check(env)
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if err := checkTemplates(env, x[k]); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
	case []any:
		for i, e := range x {
			if err := checkTemplates(env, e); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
	}
	return nil
}

// input is the flow.TriggerInput function.
func (m *triggerMap) input(end core.RunEnd, output json.RawMessage) (any, bool, error) {
	act := expr.Activation{
		Inputs: map[string]any{},
		Extra:  map[string]any{"output": jsonValue(output), "outcome": string(end)},
		Run:    expr.RunInfo{Workflow: m.flow},
	}
	for _, r := range m.rules {
		if !slices.Contains(r.when, end) {
			continue
		}
		if r.cond != nil {
			ok, err := r.cond.EvalBool(act)
			if err != nil {
				return nil, false, fmt.Errorf("%s: if: %w", r.prefix, err)
			}
			if !ok {
				continue
			}
		}
		if !r.hasIn {
			return output, true, nil
		}
		in, err := m.render(r.input, act)
		if err != nil {
			return nil, false, fmt.Errorf("input: %w", err)
		}
		return in, true, nil
	}
	return nil, false, nil
}

// render renders every string of v with RenderValue (a string that is one ${{ expr }}
// keeps its type).
func (m *triggerMap) render(v any, act expr.Activation) (any, error) {
	return renderTree(v, func(x string) (any, error) {
		t, err := expr.ParseTemplate(x)
		if err != nil {
			return nil, err
		}
		return t.RenderValue(m.env, act)
	})
}
