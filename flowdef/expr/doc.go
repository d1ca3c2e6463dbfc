/*
Package expr holds the expressions of declarative flows (package flowdef): CEL
(https://cel.dev) over the values a run has recorded, and strings that interpolate them
with `${{ expr }}`.

	env, err := expr.NewEnv(expr.Scope{Inputs: []string{"env"}, Steps: []string{"build"}})
	cond, err := env.CompileBool(`inputs.env == "prod" && steps.build.status == "succeeded"`)
	ok, err := cond.EvalBool(expr.Activation{Inputs: in, Steps: results})

# What an expression sees

  - inputs: the run's input (a map); inputs.x for a field the flow's schema does not
    declare is a compile error when Scope.Inputs is set.
  - vars: the variables set by `set` nodes before this point (Scope.Vars).
  - steps.<id>.output, .status, .error, .cost_usd: the results of the steps that run before
    this point (Scope.Steps); any other step id or field is a compile error that names it
    and lists the visible ones.
  - item and index: the current element and its position, inside foreach or a loop over a
    list (Scope.Item).
  - run.id, run.workflow, run.attempt, run.started_at (a string).

The functions are CEL's standard library (size, has, contains, startsWith, matches,
conversions such as int(), string(), timestamp("...") and duration("..."), the macros
exists, all, exists_one, map, filter) and the strings, lists, math, sets and encoders
extensions (format, split, join, lowerAscii, lists.range, math.greatest, base64, ...),
plus optional values (inputs.?x.orValue(d)).

# Determinism

Expressions run in Temporal workflow code and must give the same value on every replay.
Nothing here reads a clock, random numbers, files or the environment: there is no now(),
random() or env(), and compiling them fails. Maps iterate in key order, not Go's random
map order, whether they come from the activation or are built by the expression. Values
are normalized the same way every time (whole JSON numbers become ints). Each evaluation
is bounded by a CEL cost limit (Scope.CostLimit, default DefaultCostLimit), counted in
operations rather than time, so an expression that runs away (nested comprehensions over
large lists) fails the same way on every replay, with an *EvalError matching
ErrCostExceeded.

One caveat: timestamp accessors with a time zone argument, such as
ts.getHours("Europe/Paris"), load the zone from the worker's tzdata; build workers with
time/tzdata imported (so every worker has the same zone data) or use UTC.

# Compiling and evaluating

Env.Compile parses and type-checks; a *CompileError (errors.Is ErrCompile) lists every
Issue with its line and column inside the expression. CompileBool and CompileList also
refuse expressions whose static type is known to be wrong. Program.Eval returns plain Go
values (map[string]any, []any, string, int64, float64, bool, nil); EvalBool requires a
bool (conditions are never "truthy": anything else is a *TypeError, errors.Is ErrType) and
EvalList a list (for `over:`).

# Templates

ParseTemplate splits a string into text and `${{ expr }}` parts; `$${{` is a literal
`${{`, and an unterminated `${{` is a *TemplateError with its byte offset. Render inserts
strings as they are, numbers and bools in JSON form, null as nothing, and maps and lists as
compact JSON with sorted keys. RenderValue returns the value itself when the whole string
is one `${{ expr }}`, so `count: "${{ inputs.n }}"` stays a number.

# Validation

Checker implements CheckExpr(expr, scope) and CheckTemplate(s, scope), the interface the
flowdef validator calls for every expression and string field of a definition.

This package is pure Go with no Temporal dependency.
*/
package expr
