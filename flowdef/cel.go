package flowdef

import "github.com/gateflow/gateflow/flowdef/expr"

// CEL is the Expressions checker Validate uses by default: each expression is parsed and
// type-checked by package flowdef/expr in the CEL environment of its Scope (the inputs,
// the vars, the steps visible at that place, the item inside a foreach or a loop over a
// list, and run), so a reference to a step that has not run, a function that does not
// exist (there is no clock, randomness or I/O) or an operator on the wrong types is an
// error at the field's position.
type CEL struct{}

// CheckExpr checks one CEL expression in scope.
func (CEL) CheckExpr(s string, scope Scope) error {
	return expr.Checker{}.CheckExpr(s, exprScope(scope))
}

// CheckTemplate checks a string's `${{ expr }}` parts in scope.
func (CEL) CheckTemplate(s string, scope Scope) error {
	return expr.Checker{}.CheckTemplate(s, exprScope(scope))
}

// exprScope is the expression package's view of a Scope.
func exprScope(s Scope) expr.Scope {
	return expr.Scope{Inputs: s.Inputs, Vars: s.Vars, Steps: s.Steps, Item: s.Item, ItemName: s.ItemName, Extra: s.Extra}
}
