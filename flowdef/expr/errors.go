package expr

import (
	"errors"
	"fmt"
	"strings"
)

// ErrCompile is matched (errors.Is) by every *CompileError.
var ErrCompile = errors.New("expr: invalid expression")

// ErrEval is matched (errors.Is) by every *EvalError, including cost and type errors.
var ErrEval = errors.New("expr: evaluation failed")

// ErrCostExceeded is matched (errors.Is) by an *EvalError whose evaluation went over the
// cost limit (see CostLimit).
var ErrCostExceeded = errors.New("expr: cost limit exceeded")

// ErrType is matched (errors.Is) by every *TypeError: a value of the wrong kind, such as an
// `if` condition that is not a bool or an `over:` expression that is not a list.
var ErrType = errors.New("expr: wrong result type")

// ErrTemplate is matched (errors.Is) by every *TemplateError.
var ErrTemplate = errors.New("expr: invalid template")

// Issue is one problem found in an expression. Line and Column are 1-based and count
// characters (not bytes) inside the expression text itself; Line is 1 unless the
// expression spans several lines. Column is 0 when the position is unknown.
type Issue struct {
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Message string `json:"message"`
	// Hint, when set, says how to fix it, e.g. which names are visible.
	Hint string `json:"hint,omitempty"`
}

// String reads "1:9: undeclared reference to 'nope' (visible: inputs, vars, steps, run)".
func (i Issue) String() string {
	s := fmt.Sprintf("%d:%d: %s", i.Line, i.Column, i.Message)
	if i.Hint != "" {
		s += " (" + i.Hint + ")"
	}
	return s
}

// CompileError says an expression does not parse or does not type-check in its scope:
// a syntax error, an unknown identifier or function, a step or variable that is not
// visible, an operator applied to the wrong types. Issues holds every problem found, in
// the order CEL and the scope check report them.
type CompileError struct {
	// Expr is the expression as written.
	Expr string `json:"expr"`
	// Issues is every problem found; never empty.
	Issues []Issue `json:"issues"`
	// Template is the template string the expression came from, empty for a bare
	// expression.
	Template string `json:"template,omitempty"`
	// Offset is the byte offset of the expression's `${{` in Template.
	Offset int `json:"offset,omitempty"`
}

// Error reads `expr: invalid expression "steps.x.output": 1:7: step "x" is not visible
// here (visible steps: build, test)`; several issues are joined with "; ".
func (e *CompileError) Error() string {
	parts := make([]string, len(e.Issues))
	for i, is := range e.Issues {
		parts[i] = is.String()
	}
	msg := fmt.Sprintf("expr: invalid expression %q: %s", e.Expr, strings.Join(parts, "; "))
	if e.Template != "" {
		msg += fmt.Sprintf(" (in template %q at offset %d)", e.Template, e.Offset)
	}
	return msg
}

// Is matches ErrCompile.
func (e *CompileError) Is(target error) bool { return target == ErrCompile }

// EvalError says a compiled expression failed at run time: a missing map key, a division
// by zero, an overflow, or (Cost set) running over the cost limit. Err is CEL's error.
type EvalError struct {
	// Expr is the expression as written.
	Expr string `json:"expr"`
	// Cost is set when the evaluation was stopped by the cost limit.
	Cost bool `json:"cost,omitempty"`
	// Limit is the cost limit in force when Cost is set.
	Limit uint64 `json:"limit,omitempty"`
	// Err is the underlying error.
	Err error `json:"-"`
}

// Error reads `expr: evaluating "inputs.x": no such key: x` or, over the limit,
// `expr: evaluating "...": cost limit 1000000 exceeded`.
func (e *EvalError) Error() string {
	if e.Cost {
		return fmt.Sprintf("expr: evaluating %q: cost limit %d exceeded", e.Expr, e.Limit)
	}
	return fmt.Sprintf("expr: evaluating %q: %v", e.Expr, e.Err)
}

// Unwrap returns the underlying error.
func (e *EvalError) Unwrap() error { return e.Err }

// Is matches ErrEval, and ErrCostExceeded when Cost is set.
func (e *EvalError) Is(target error) bool {
	return target == ErrEval || (e.Cost && target == ErrCostExceeded)
}

// TypeError says an expression evaluated (or, found at compile time, would evaluate) to a
// value of the wrong kind: Want is "bool" or "list", Got is the CEL type name of what it
// produced ("string", "int", "map", ...).
type TypeError struct {
	// Expr is the expression as written.
	Expr string `json:"expr"`
	// Want is the kind required: "bool" or "list".
	Want string `json:"want"`
	// Got is the CEL type name of the value produced.
	Got string `json:"got"`
}

// Error reads `expr: "inputs.name" is a string, want a bool`.
func (e *TypeError) Error() string {
	return fmt.Sprintf("expr: %q is a %s, want a %s", e.Expr, e.Got, e.Want)
}

// Is matches ErrType and ErrEval (a TypeError is an evaluation that did not give a usable
// result).
func (e *TypeError) Is(target error) bool { return target == ErrType || target == ErrEval }

// TemplateError says a template string is malformed: an unterminated `${{`, or an empty
// `${{ }}`. Offset is the byte offset in the string where the bad part starts.
type TemplateError struct {
	// Template is the string as written.
	Template string `json:"template"`
	// Offset is the byte offset of the `${{` at fault.
	Offset int `json:"offset"`
	// Message says what is wrong.
	Message string `json:"message"`
}

// Error reads `expr: template "hi ${{ inputs.x": unterminated ${{ at offset 3`.
func (e *TemplateError) Error() string {
	return fmt.Sprintf("expr: template %q: %s at offset %d", e.Template, e.Message, e.Offset)
}

// Is matches ErrTemplate.
func (e *TemplateError) Is(target error) bool { return target == ErrTemplate }
