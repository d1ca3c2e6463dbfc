package flowdef

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// keyRefRe is one reference of concurrency.key: ${{ inputs.<field>[.<sub>...] }}.
var keyRefRe = regexp.MustCompile(`\$\{\{\s*inputs((?:\.[A-Za-z_][A-Za-z0-9_]*)+)\s*\}\}`)

// KeyTemplate is concurrency.key as flow.MaxRunsPerKey takes it: each
// ${{ inputs.<field> }} becomes {<field>}, literal text stays. Only such references are
// allowed, at least one (a constant key is max_runs alone), and no other braces: the key
// is data a client renders from a start's JSON input at admission (refuse and replace are
// decided there), without CEL.
func (c *Concurrency) KeyTemplate() (string, error) {
	var b strings.Builder
	last, refs := 0, 0
	lit := func(s string) error {
		if strings.ContainsAny(s, "{}") {
			return fmt.Errorf("%q: only ${{ inputs.<field> }} references are allowed in a concurrency key", s)
		}
		b.WriteString(s)
		return nil
	}
	for _, m := range keyRefRe.FindAllStringSubmatchIndex(c.Key, -1) {
		if err := lit(c.Key[last:m[0]]); err != nil {
			return "", err
		}
		b.WriteString("{" + c.Key[m[2]+1:m[3]] + "}")
		last, refs = m[1], refs+1
	}
	if err := lit(c.Key[last:]); err != nil {
		return "", err
	}
	if refs == 0 {
		return "", errors.New("no ${{ inputs.<field> }} reference: a key without one is the same for every run (use max_runs alone)")
	}
	return b.String(), nil
}

// keyInputs reports the inputs a valid concurrency.key refers to that the inputs schema
// does not declare (when it lists its properties).
func (k *check) keyInputs(c *Concurrency) {
	if k.inputs == nil {
		return
	}
	for _, m := range keyRefRe.FindAllStringSubmatch(c.Key, -1) {
		name := strings.Split(m[1][1:], ".")[0]
		if !slices.Contains(k.inputs, name) {
			k.add(c.Fields.At("key", c.Pos), "declare it under inputs.properties, or refer to one of: "+strings.Join(k.inputs, ", "),
				"concurrency.key: inputs has no field '%s'", name)
		}
	}
}

// TriggerScope is what a trigger's if and input see: output (the ended run's output) and
// outcome ("completed" or "failed"); run.workflow is the ended run's flow. No inputs,
// vars or steps: the triggered run has not started.
var TriggerScope = Scope{Inputs: []string{}, Extra: []string{"output", "outcome"}}

// hintTriggerExpr says what a trigger's expressions see.
const hintTriggerExpr = "a trigger's if and input see output (the ended run's output), outcome (completed or failed) and run.workflow"

// triggerExprs checks a trigger's if (a condition, bare or as one ${{ expr }}) and the
// templates of its input, in TriggerScope. A signal start takes neither: the client
// starts it with the signal's payload, and no worker code runs before the run.
func (k *check) triggerExprs(t *Trigger) {
	for _, f := range []string{"if", "input"} {
		if t.On == "signal" && t.Fields.Has(f) {
			k.add(t.Fields.At(f, t.Pos), "remove it, and check the payload in the flow's first steps: a signal start's input is the signal's payload (the client starts the run)",
				"trigger on signal takes no %s", f)
		}
	}
	if t.On == "signal" || !k.full {
		return
	}
	if t.Fields.Has("if") {
		if err := k.v.opts.expr.CheckExpr(TriggerCondition(t.If), TriggerScope); err != nil {
			k.add(t.Fields.At("if", t.Pos), hintTriggerExpr, "trigger if: %v", err)
		}
	}
	if t.Fields.Has("input") {
		k.triggerInput(t.Fields.At("input", t.Pos), "trigger input", t.Input)
	}
}

// triggerInput checks the templates of a trigger's input value.
func (k *check) triggerInput(p Pos, path string, v any) {
	switch x := v.(type) {
	case string:
		if err := k.v.opts.expr.CheckTemplate(x, TriggerScope); err != nil {
			k.add(p, hintTriggerExpr, "%s: %v", path, err)
		}
	case map[string]any:
		for _, key := range slices.Sorted(maps.Keys(x)) {
			k.triggerInput(p, path+"."+key, x[key])
		}
	case []any:
		for i, e := range x {
			k.triggerInput(p, fmt.Sprintf("%s[%d]", path, i), e)
		}
	}
}

// TriggerCondition is a trigger's if as a CEL expression: written bare, or as one
// ${{ expr }}.
func TriggerCondition(s string) string {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "${{") && strings.HasSuffix(t, "}}") && strings.Count(t, "${{") == 1 {
		return strings.TrimSpace(t[3 : len(t)-2])
	}
	return s
}
