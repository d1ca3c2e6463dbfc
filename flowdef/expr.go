package flowdef

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

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
// reports each returned error at that field's position. Package flowdef/expr provides
// the real CEL implementation (parsing and type-checking against the scope); RefChecker
// is the small stand-in used when none is given.
type Expressions interface {
	// CheckExpr checks one CEL expression.
	CheckExpr(expr string, scope Scope) error
	// CheckTemplate checks a string that may hold `${{ expr }}` parts.
	CheckTemplate(s string, scope Scope) error
}

// RefChecker is a minimal Expressions: it checks that brackets balance, that templates
// close, and that every steps.X, vars.X, inputs.X and item reference is in scope. It does
// no CEL parsing or typing; the worker should use package flowdef/expr instead.
type RefChecker struct{}

var (
	refRe  = regexp.MustCompile(`(^|[^A-Za-z0-9_.])(steps|vars|inputs)\.([A-Za-z_][A-Za-z0-9_-]*)`)
	rootRe = regexp.MustCompile(`(^|[^A-Za-z0-9_.'"])([A-Za-z_][A-Za-z0-9_]*)`)
)

// celWords are identifiers an expression may use besides scope roots.
var celWords = map[string]bool{
	"true": true, "false": true, "null": true, "in": true, "has": true, "size": true,
	"int": true, "uint": true, "double": true, "string": true, "bool": true, "bytes": true,
	"list": true, "map": true, "type": true, "duration": true, "timestamp": true,
	"exists": true, "all": true, "exists_one": true, "filter": true, "matches": true,
	"contains": true, "startsWith": true, "endsWith": true, "dyn": true, "run": true,
	"inputs": true, "vars": true, "steps": true,
}

// CheckExpr implements Expressions.
func (RefChecker) CheckExpr(expr string, s Scope) error {
	if strings.TrimSpace(expr) == "" {
		return fmt.Errorf("empty expression")
	}
	if err := balanced(expr); err != nil {
		return err
	}
	code := stripStrings(expr)
	for _, m := range refRe.FindAllStringSubmatch(code, -1) {
		root, name := m[2], m[3]
		switch root {
		case "steps":
			if !slices.Contains(s.Steps, name) {
				return fmt.Errorf("steps.%s is not a step that has run here", name)
			}
		case "vars":
			if !slices.Contains(s.Vars, name) {
				return fmt.Errorf("vars.%s is not a declared variable", name)
			}
		case "inputs":
			if s.Inputs != nil && !slices.Contains(s.Inputs, name) {
				return fmt.Errorf("inputs.%s is not an input", name)
			}
		}
	}
	for _, m := range rootRe.FindAllStringSubmatchIndex(code, -1) {
		id := code[m[4]:m[5]]
		rest := strings.TrimLeft(code[m[5]:], " ")
		if celWords[id] || strings.HasPrefix(rest, "(") || slices.Contains(s.Extra, id) {
			continue
		}
		if id == "item" || (s.ItemName != "" && id == s.ItemName) {
			if !s.Item {
				return fmt.Errorf("%s is only visible inside a foreach or a loop over a list", id)
			}
			continue
		}
		if isLambdaVar(code, id) {
			continue
		}
		return fmt.Errorf("unknown name '%s' (visible: inputs, vars, steps, run%s)", id, itemNote(s))
	}
	return nil
}

func itemNote(s Scope) string {
	if !s.Item {
		return ""
	}
	if s.ItemName != "" && s.ItemName != "item" {
		return ", item, " + s.ItemName
	}
	return ", item"
}

// isLambdaVar reports whether id is bound by a macro such as list.exists(x, ...).
func isLambdaVar(code, id string) bool {
	return regexp.MustCompile(`\.(exists|all|exists_one|filter|map)\(\s*` + regexp.QuoteMeta(id) + `\s*,`).MatchString(code)
}

// CheckTemplate implements Expressions.
func (c RefChecker) CheckTemplate(t string, s Scope) error {
	for rest := t; ; {
		i := strings.Index(rest, "${{")
		if i < 0 {
			return nil
		}
		j := strings.Index(rest[i:], "}}")
		if j < 0 {
			return fmt.Errorf("unclosed ${{ in template")
		}
		if err := c.CheckExpr(rest[i+3:i+j], s); err != nil {
			return err
		}
		rest = rest[i+j+2:]
	}
}

// stripStrings blanks out quoted string literals.
func stripStrings(s string) string {
	b := []byte(s)
	var q byte
	for i := 0; i < len(b); i++ {
		switch {
		case q == 0 && (b[i] == '"' || b[i] == '\''):
			q = b[i]
		case q != 0 && b[i] == '\\':
			b[i] = ' '
			if i+1 < len(b) {
				i++
				b[i] = ' '
			}
		case q != 0 && b[i] == q:
			q = 0
		case q != 0:
			b[i] = ' '
		}
	}
	return string(b)
}

func balanced(s string) error {
	var stack []byte
	pairs := map[byte]byte{')': '(', ']': '[', '}': '{'}
	code := stripStrings(s)
	for i := 0; i < len(code); i++ {
		switch ch := code[i]; ch {
		case '(', '[', '{':
			stack = append(stack, ch)
		case ')', ']', '}':
			if len(stack) == 0 || stack[len(stack)-1] != pairs[ch] {
				return fmt.Errorf("unbalanced '%c' in expression", ch)
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		return fmt.Errorf("unclosed '%c' in expression", stack[len(stack)-1])
	}
	return nil
}
