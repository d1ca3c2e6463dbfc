package flowdef

// Scope says what an expression may refer to where it is written.
type Scope struct {
	// Inputs are the input names (top-level properties of the inputs schema); nil when
	// the schema does not list them (then any inputs.<name> is accepted).
	Inputs []string
	// InputSchema is the inputs JSON Schema (nil when none), for checkers that type inputs.
	InputSchema []byte
	// Vars are the variable names (declared in vars or assigned by a set node before).
	Vars []string
	// Steps are the ids whose outputs are visible (steps.<id>.output).
	Steps []string
	// Item is true inside a foreach or a loop over a list; ItemName is the `as` name
	// ("item" by default) and is then visible too.
	Item     bool
	ItemName string
	// Extra are other visible root names (run is always visible; triggers see signal).
	Extra []string
}

// Expressions checks CEL expressions and `${{ expr }}` templates statically. Validate
// calls it for every expression and template field with the Scope at that place and
// reports each returned error at that field's position. CEL (package flowdef/expr:
// parsing and type-checking against the scope) is the one used when none is given.
type Expressions interface {
	// CheckExpr checks one CEL expression.
	CheckExpr(expr string, scope Scope) error
	// CheckTemplate checks a string that may hold `${{ expr }}` parts.
	CheckTemplate(s string, scope Scope) error
}
