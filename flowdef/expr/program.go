package expr

import (
	"errors"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"
)

// Program is a compiled expression. It is safe for concurrent use and holds no state
// between evaluations: the same Activation always gives the same value.
type Program struct {
	expr  string
	prg   cel.Program
	out   *types.Type
	limit uint64
	// names are the top-level identifiers the expression reads (nil: unknown, build all):
	// an evaluation converts only those of the activation.
	names map[string]bool
}

// Expr returns the expression as written.
func (p *Program) Expr() string { return p.expr }

// OutputType returns the static CEL type of the result ("bool", "string", "dyn", ...).
func (p *Program) OutputType() string { return typeName(p.out) }

// mayBe reports whether the static output type could be want at run time.
func (p *Program) mayBe(want *types.Type) bool {
	if p.out == nil {
		return true
	}
	switch p.out.Kind() {
	case types.DynKind, types.AnyKind, types.ErrorKind, types.TypeParamKind:
		return true
	}
	return p.out.Kind() == want.Kind()
}

// StepResult is what an earlier step recorded, as seen by steps.<id>.
type StepResult struct {
	// Output is the step's output (JSON-like: maps, lists, strings, numbers, bools, nil).
	Output any `json:"output"`
	// Status is the step's final status, e.g. "succeeded", "failed", "skipped".
	Status string `json:"status"`
	// Error is the step's error message; empty when it succeeded.
	Error string `json:"error"`
	// CostUSD is what the step cost, in US dollars.
	CostUSD float64 `json:"cost_usd"`
}

// RunInfo is what run exposes. StartedAt is a string (RFC 3339) so that no time value
// enters an expression except as recorded data.
type RunInfo struct {
	// ID is the run's id.
	ID string `json:"id"`
	// Workflow is the flow's name.
	Workflow string `json:"workflow"`
	// Attempt is the run's attempt, from 1.
	Attempt int64 `json:"attempt"`
	// StartedAt is when the run started, RFC 3339.
	StartedAt string `json:"started_at"`
}

// Activation is the recorded data an expression is evaluated over. Values must be
// JSON-like (what encoding/json decodes into any: map[string]any, []any, string, float64,
// bool, nil; json.Number and json.RawMessage are accepted too); anything else is passed
// through a JSON round trip. Numbers that are whole (2.0) become CEL ints and others
// doubles, so `inputs.n + 1` works on a decoded JSON input; use double(x) to mix in
// fractions.
type Activation struct {
	// Inputs is the run's input.
	Inputs map[string]any
	// Vars is the variables set so far.
	Vars map[string]any
	// Steps is the results of the steps that ran, by id.
	Steps map[string]StepResult
	// Item is the current element inside foreach or a loop over a list.
	Item any
	// Index is the position of Item.
	Index int
	// ItemName is the name Item is bound to (Scope.ItemName); empty means "item".
	ItemName string
	// Extra are the values of Scope.Extra's names.
	Extra map[string]any
	// Run describes the run.
	Run RunInfo
}

// vars builds the CEL activation: the values of the names in need (all of them when need
// is nil), converted to CEL values. Converting is the costly part of an evaluation, so an
// expression that reads only `index` does not convert every step's output.
func (a Activation) vars(need map[string]bool) (map[string]any, error) {
	wants := func(name string) bool { return need == nil || need[name] }
	out := map[string]any{}
	if wants(Inputs) {
		in, err := normalizeMap(a.Inputs)
		if err != nil {
			return nil, err
		}
		out[Inputs] = toVal(in)
	}
	if wants(Vars) {
		vs, err := normalizeMap(a.Vars)
		if err != nil {
			return nil, err
		}
		out[Vars] = toVal(vs)
	}
	if wants(Steps) {
		steps := make(map[string]any, len(a.Steps))
		for id, s := range a.Steps {
			o, err := normalize(s.Output)
			if err != nil {
				return nil, err
			}
			steps[id] = map[string]any{"output": o, "status": s.Status, "error": s.Error, "cost_usd": s.CostUSD}
		}
		out[Steps] = toVal(steps)
	}
	if wants(Index) {
		out[Index] = types.Int(a.Index)
	}
	if wants(Run) {
		out[Run] = toVal(map[string]any{
			"id": a.Run.ID, "workflow": a.Run.Workflow, "attempt": a.Run.Attempt, "started_at": a.Run.StartedAt,
		})
	}
	if name := (Scope{ItemName: a.ItemName}).itemName(); wants(name) {
		item, err := normalize(a.Item)
		if err != nil {
			return nil, err
		}
		out[name] = toVal(item)
	}
	for k, v := range a.Extra {
		if !wants(k) {
			continue
		}
		nv, err := normalize(v)
		if err != nil {
			return nil, err
		}
		out[k] = toVal(nv)
	}
	return out, nil
}

// evalVal evaluates to CEL's value.
func (p *Program) evalVal(act Activation) (ref.Val, error) {
	vars, err := act.vars(p.names)
	if err != nil {
		return nil, &EvalError{Expr: p.expr, Err: err}
	}
	val, _, err := p.prg.Eval(vars)
	if err != nil {
		var cancel interpreter.EvalCancelledError
		if errors.As(err, &cancel) && cancel.Cause == interpreter.CostLimitExceeded {
			return nil, &EvalError{Expr: p.expr, Cost: true, Limit: p.limit, Err: err}
		}
		return nil, &EvalError{Expr: p.expr, Err: err}
	}
	return val, nil
}

// Eval evaluates the expression over act and returns a JSON-like Go value:
// map[string]any, []any, string, int64, float64, bool or nil (bytes become base64
// strings, timestamps RFC 3339 strings, durations strings like "1.5s", uints int64 when
// they fit). Failures are *EvalError (errors.Is ErrEval; ErrCostExceeded over the limit).
func (p *Program) Eval(act Activation) (any, error) {
	val, err := p.evalVal(act)
	if err != nil {
		return nil, err
	}
	out, err := toGo(val)
	if err != nil {
		return nil, &EvalError{Expr: p.expr, Err: err}
	}
	return out, nil
}

// EvalBool evaluates a condition. A result that is not a bool is a *TypeError (errors.Is
// ErrType): conditions are never "truthy".
func (p *Program) EvalBool(act Activation) (bool, error) {
	val, err := p.evalVal(act)
	if err != nil {
		return false, err
	}
	b, ok := val.(types.Bool)
	if !ok {
		return false, &TypeError{Expr: p.expr, Want: "bool", Got: val.Type().TypeName()}
	}
	return bool(b), nil
}

// EvalList evaluates an `over:` expression. A result that is not a list is a *TypeError.
func (p *Program) EvalList(act Activation) ([]any, error) {
	val, err := p.evalVal(act)
	if err != nil {
		return nil, err
	}
	if val.Type() != types.ListType {
		return nil, &TypeError{Expr: p.expr, Want: "list", Got: val.Type().TypeName()}
	}
	out, err := toGo(val)
	if err != nil {
		return nil, &EvalError{Expr: p.expr, Err: err}
	}
	list, _ := out.([]any)
	if list == nil {
		list = []any{}
	}
	return list, nil
}
