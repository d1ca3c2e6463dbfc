package expr

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/ext"
)

// The names an expression sees. Every one is always declared except Item and Index, which
// exist only where Scope.Item is set.
const (
	// Inputs is the run's input, a map.
	Inputs = "inputs"
	// Vars holds the variables set by `set` nodes so far, a map.
	Vars = "vars"
	// Steps holds the results of earlier steps by id: steps.<id>.output, .status, .error,
	// .cost_usd.
	Steps = "steps"
	// Item is the current element inside foreach or a loop over a list.
	Item = "item"
	// Index is the position of Item, from 0.
	Index = "index"
	// Run describes the run: run.id, run.workflow, run.attempt, run.started_at.
	Run = "run"
)

// StepFields are the fields of steps.<id>; anything else is a compile error.
var StepFields = []string{"output", "status", "error", "cost_usd"}

// RunFields are the fields of run; anything else is a compile error.
var RunFields = []string{"id", "workflow", "attempt", "started_at"}

// DefaultCostLimit is the CEL runtime cost an evaluation may spend before it fails with
// ErrCostExceeded, when Scope.CostLimit is 0. One unit is roughly one operation (a
// comparison, a field access, one iteration of a comprehension, a few bytes of a string
// operation); a million is far above any sensible condition and stops a nested
// comprehension over large lists in well under a second.
const DefaultCostLimit uint64 = 1_000_000

// Scope says what an expression may refer to at one place of a flow. It is a plain
// struct so the flowdef validator can build one per node.
//
// Names in Vars and Steps are strict: vars.x or steps.x for a name not listed is a compile
// error naming it and listing the visible ones. Inputs is strict only when it is non-nil
// (the flow declares an input schema); nil means the input's fields are unknown and any
// inputs.x compiles. Values are dynamically typed (CEL dyn) either way.
type Scope struct {
	// Inputs lists the input's top-level field names (from the flow's JSON Schema), or nil
	// when they are not known.
	Inputs []string `json:"inputs,omitempty"`
	// Vars lists the variables set by `set` nodes that run before this point.
	Vars []string `json:"vars,omitempty"`
	// Steps lists the ids of the steps whose results are visible (they run before this
	// point).
	Steps []string `json:"steps,omitempty"`
	// Item makes item and index visible (inside foreach, or a loop over a list).
	Item bool `json:"item,omitempty"`
	// ItemName is the name the item is visible under (a foreach's `as`); empty means
	// "item".
	ItemName string `json:"item_name,omitempty"`
	// Extra are further names visible as dynamically typed values (a trigger's signal).
	Extra []string `json:"extra,omitempty"`
	// CostLimit bounds one evaluation's runtime cost; 0 means DefaultCostLimit.
	CostLimit uint64 `json:"cost_limit,omitempty"`
}

// itemName is the name the item is visible under.
func (s Scope) itemName() string {
	if s.ItemName != "" {
		return s.ItemName
	}
	return Item
}

// Env compiles expressions for one Scope. It is safe for concurrent use.
type Env struct {
	scope Scope
	cel   *cel.Env
	limit uint64
}

// Options is the CEL environment every Env is built from: the standard library (no clock,
// no randomness, no I/O), the strings, lists, math, sets and encoders extensions (all pure
// functions of their arguments), optional types, and the variables above. Nothing here
// reads the environment, so an expression evaluates to the same value on every replay.
func options(scope Scope) []cel.EnvOption {
	opts := []cel.EnvOption{
		cel.Variable(Inputs, cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable(Vars, cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable(Steps, cel.MapType(cel.StringType, cel.MapType(cel.StringType, cel.DynType))),
		cel.Variable(Run, cel.MapType(cel.StringType, cel.DynType)),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Strings(),
		ext.Lists(ext.ListsMaxRangeSize(10_000)),
		ext.Math(),
		ext.Sets(),
		ext.Encoders(),
	}
	if scope.Item {
		opts = append(opts, cel.Variable(scope.itemName(), cel.DynType), cel.Variable(Index, cel.IntType))
	}
	for _, x := range scope.Extra {
		opts = append(opts, cel.Variable(x, cel.DynType))
	}
	return opts
}

// NewEnv builds the environment for scope. The error is only ever CEL refusing its own
// configuration, which does not depend on scope; callers may treat it as fatal.
func NewEnv(scope Scope) (*Env, error) {
	ce, err := cel.NewEnv(options(scope)...)
	if err != nil {
		return nil, fmt.Errorf("expr: building CEL environment: %w", err)
	}
	limit := scope.CostLimit
	if limit == 0 {
		limit = DefaultCostLimit
	}
	return &Env{scope: scope, cel: ce, limit: limit}, nil
}

// Scope returns the scope the Env was built for.
func (e *Env) Scope() Scope { return e.scope }

// visibleNames lists the top-level identifiers of the scope, for hints.
func (e *Env) visibleNames() []string {
	names := []string{Inputs, Vars, Steps, Run}
	if e.scope.Item {
		names = append(names, e.scope.itemName(), Index)
	}
	names = append(names, e.scope.Extra...)
	return names
}

// Compile parses and type-checks expr (CEL, without the `${{ }}` of templates) in the
// Env's scope. Every problem comes back in one *CompileError: syntax errors with their
// line and column inside expr, identifiers and functions that do not exist (now(),
// random(), env() are not defined), steps, vars, inputs and run fields that are not
// visible, and operators applied to the wrong static types.
func (e *Env) Compile(expr string) (*Program, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, &CompileError{Expr: expr, Issues: []Issue{{Line: 1, Column: 1, Message: "empty expression"}}}
	}
	parsed, iss := e.cel.Parse(expr)
	if iss.Err() != nil {
		return nil, &CompileError{Expr: expr, Issues: e.issues(iss.Errors())}
	}
	issues := e.checkScope(parsed.NativeRep())
	checked, iss := e.cel.Check(parsed)
	if iss.Err() != nil {
		issues = append(issues, e.issues(iss.Errors())...)
	}
	if len(issues) > 0 {
		return nil, &CompileError{Expr: expr, Issues: issues}
	}
	prg, err := e.cel.Program(checked, cel.CostLimit(e.limit), cel.CustomDecoratorV2(orderMaps))
	if err != nil {
		return nil, &CompileError{Expr: expr, Issues: []Issue{{Line: 1, Message: err.Error()}}}
	}
	return &Program{expr: expr, prg: prg, out: checked.OutputType(), limit: e.limit, names: identNames(checked.NativeRep())}, nil
}

// identNames are the top-level identifiers a checked expression refers to (the root of
// every identifier; comprehension variables too, which the activation does not have).
func identNames(a *celast.AST) map[string]bool {
	names := map[string]bool{}
	for _, id := range celast.MatchDescendants(celast.NavigateAST(a), celast.KindMatcher(celast.IdentKind)) {
		root, _, _ := strings.Cut(id.AsIdent(), ".")
		names[root] = true
	}
	return names
}

// CompileBool compiles a condition (if, while, check): like Compile, and it is also an
// error (a *TypeError, errors.Is ErrType) when the expression's static type is known and
// not bool, e.g. `inputs.name + "x"`. A dyn expression compiles and is checked again by
// EvalBool.
func (e *Env) CompileBool(expr string) (*Program, error) {
	p, err := e.Compile(expr)
	if err != nil {
		return nil, err
	}
	if !p.mayBe(types.BoolType) {
		return nil, &TypeError{Expr: expr, Want: "bool", Got: typeName(p.out)}
	}
	return p, nil
}

// CompileList compiles an `over:` expression: like Compile, and it is also a *TypeError
// when the static type is known and not a list.
func (e *Env) CompileList(expr string) (*Program, error) {
	p, err := e.Compile(expr)
	if err != nil {
		return nil, err
	}
	if !p.mayBe(types.NewListType(types.DynType)) {
		return nil, &TypeError{Expr: expr, Want: "list", Got: typeName(p.out)}
	}
	return p, nil
}

// issues converts CEL's errors, adding a hint for unknown identifiers.
func (e *Env) issues(errs []*common.Error) []Issue {
	out := make([]Issue, 0, len(errs))
	for _, ce := range errs {
		is := Issue{Line: ce.Location.Line(), Column: ce.Location.Column() + 1, Message: ce.Message}
		if strings.HasPrefix(ce.Message, "undeclared reference to") {
			is.Message = strings.TrimSuffix(is.Message, " (in container '')")
			is.Hint = "visible: " + strings.Join(e.visibleNames(), ", ")
		}
		out = append(out, is)
	}
	return out
}

// checkScope walks the parsed AST (macros expanded) and reports steps.X, vars.X, inputs.X
// (when Inputs is known), steps.X.field and run.field references the scope does not allow.
func (e *Env) checkScope(a *celast.AST) []Issue {
	w := scopeWalker{env: e, info: a.SourceInfo()}
	w.walk(a.Expr(), nil)
	return w.issues
}

type scopeWalker struct {
	env    *Env
	info   *celast.SourceInfo
	issues []Issue
}

func (w *scopeWalker) report(id int64, msg, hint string) {
	loc := w.info.GetStartLocation(id)
	w.issues = append(w.issues, Issue{Line: loc.Line(), Column: loc.Column() + 1, Message: msg, Hint: hint})
}

// root returns the top-level variable name e selects from, when e is that identifier and
// not shadowed by a comprehension variable.
func rootIdent(e celast.Expr, shadow []string) (string, bool) {
	if e.Kind() != celast.IdentKind {
		return "", false
	}
	name := e.AsIdent()
	if slices.Contains(shadow, name) {
		return "", false
	}
	return name, true
}

// field returns the field a select or a constant-string index reads from operand:
// x.f and x["f"].
func field(e celast.Expr) (operand celast.Expr, name string, ok bool) {
	switch e.Kind() {
	case celast.SelectKind:
		s := e.AsSelect()
		return s.Operand(), s.FieldName(), true
	case celast.CallKind:
		c := e.AsCall()
		if c.FunctionName() != operators.Index || len(c.Args()) != 2 {
			return nil, "", false
		}
		if c.Args()[1].Kind() != celast.LiteralKind {
			return nil, "", false
		}
		s, isStr := c.Args()[1].AsLiteral().(types.String)
		if !isStr {
			return nil, "", false
		}
		return c.Args()[0], string(s), true
	}
	return nil, "", false
}

func visible(kind string, names []string) string {
	if len(names) == 0 {
		return "no " + kind + " are visible here"
	}
	s := slices.Clone(names)
	sort.Strings(s)
	return "visible " + kind + ": " + strings.Join(s, ", ")
}

func (w *scopeWalker) checkField(e celast.Expr, shadow []string) {
	operand, name, ok := field(e)
	if !ok {
		return
	}
	if root, ok := rootIdent(operand, shadow); ok {
		sc := w.env.scope
		switch root {
		case Steps:
			if !slices.Contains(sc.Steps, name) {
				w.report(e.ID(), fmt.Sprintf("step %q is not visible here", name), visible("steps", sc.Steps))
			}
		case Vars:
			if !slices.Contains(sc.Vars, name) {
				w.report(e.ID(), fmt.Sprintf("variable %q is not set before this point", name), visible("vars", sc.Vars))
			}
		case Inputs:
			if sc.Inputs != nil && !slices.Contains(sc.Inputs, name) {
				w.report(e.ID(), fmt.Sprintf("input %q is not declared", name), visible("inputs", sc.Inputs))
			}
		case Run:
			if !slices.Contains(RunFields, name) {
				w.report(e.ID(), fmt.Sprintf("run has no field %q", name), "fields: "+strings.Join(RunFields, ", "))
			}
		}
		return
	}
	// steps.X.field
	inner, step, ok := field(operand)
	if !ok {
		return
	}
	if root, ok := rootIdent(inner, shadow); ok && root == Steps && slices.Contains(w.env.scope.Steps, step) {
		if !slices.Contains(StepFields, name) {
			w.report(e.ID(), fmt.Sprintf("steps.%s has no field %q", step, name), "fields: "+strings.Join(StepFields, ", "))
		}
	}
}

func (w *scopeWalker) walk(e celast.Expr, shadow []string) {
	if e == nil {
		return
	}
	w.checkField(e, shadow)
	switch e.Kind() {
	case celast.SelectKind:
		w.walk(e.AsSelect().Operand(), shadow)
	case celast.CallKind:
		c := e.AsCall()
		if c.IsMemberFunction() {
			w.walk(c.Target(), shadow)
		}
		for _, a := range c.Args() {
			w.walk(a, shadow)
		}
	case celast.ListKind:
		for _, el := range e.AsList().Elements() {
			w.walk(el, shadow)
		}
	case celast.MapKind:
		for _, en := range e.AsMap().Entries() {
			me := en.AsMapEntry()
			w.walk(me.Key(), shadow)
			w.walk(me.Value(), shadow)
		}
	case celast.StructKind:
		for _, f := range e.AsStruct().Fields() {
			w.walk(f.AsStructField().Value(), shadow)
		}
	case celast.ComprehensionKind:
		c := e.AsComprehension()
		w.walk(c.IterRange(), shadow)
		w.walk(c.AccuInit(), shadow)
		inner := append(slices.Clone(shadow), c.IterVar(), c.AccuVar())
		if c.HasIterVar2() {
			inner = append(inner, c.IterVar2())
		}
		w.walk(c.LoopCondition(), inner)
		w.walk(c.LoopStep(), inner)
		w.walk(c.Result(), append(slices.Clone(shadow), c.AccuVar()))
	}
}
