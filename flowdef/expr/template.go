package expr

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"
)

// Template is a string with `${{ expr }}` parts, as in a node's `with:` values, a send's
// message or a step's command. Text outside the parts is literal; `$${{` writes a literal
// `${{`. A part ends at the first `}}` outside string literals and balanced braces, so
// `${{ {"a": 1}["a"] }}` is one part. Parse once with ParseTemplate; a Template is safe for
// concurrent use.
type Template struct {
	src   string
	parts []part

	mu    sync.Mutex
	env   *Env
	progs []*Program
}

// part is literal text (expr empty) or one expression.
type part struct {
	lit    string
	expr   string
	offset int // byte offset of "${{" in the template
	isExpr bool
}

// ParseTemplate splits s into literal text and expressions. An unterminated `${{` or an
// empty `${{ }}` is a *TemplateError (errors.Is ErrTemplate) with the byte offset of the
// `${{`. Expressions are not compiled here: see Check.
func ParseTemplate(s string) (*Template, error) {
	t := &Template{src: s}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			t.parts = append(t.parts, part{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "$${{"):
			lit.WriteString("${{")
			i += 4
		case strings.HasPrefix(s[i:], "${{"):
			end := exprEnd(s, i+3)
			if end < 0 {
				return nil, &TemplateError{Template: s, Offset: i, Message: "unterminated ${{ (no matching }})"}
			}
			body := strings.TrimSpace(s[i+3 : end])
			if body == "" {
				return nil, &TemplateError{Template: s, Offset: i, Message: "empty ${{ }}"}
			}
			flush()
			t.parts = append(t.parts, part{expr: body, offset: i, isExpr: true})
			i = end + 2
		default:
			lit.WriteByte(s[i])
			i++
		}
	}
	flush()
	return t, nil
}

// exprEnd returns the index of the "}}" closing an expression that starts at from, or -1.
func exprEnd(s string, from int) int {
	depth := 0
	for j := from; j < len(s); j++ {
		c := s[j]
		switch c {
		case '"', '\'':
			j = skipString(s, j)
			if j < 0 {
				return -1
			}
		case '{':
			depth++
		case '}':
			if depth == 0 {
				if j+1 < len(s) && s[j+1] == '}' {
					return j
				}
				return -1
			}
			depth--
		}
	}
	return -1
}

// skipString returns the index of the quote closing the string literal opening at i
// (single, double or triple quoted), or -1.
func skipString(s string, i int) int {
	q := s[i : i+1]
	if strings.HasPrefix(s[i:], q+q+q) {
		end := strings.Index(s[i+3:], q+q+q)
		if end < 0 {
			return -1
		}
		return i + 3 + end + 2
	}
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case q[0]:
			return j
		case '\n':
			return -1
		}
	}
	return -1
}

// String returns the template as written.
func (t *Template) String() string { return t.src }

// Exprs returns the template's expressions, in order, without `${{ }}`.
func (t *Template) Exprs() []string {
	var out []string
	for _, p := range t.parts {
		if p.isExpr {
			out = append(out, p.expr)
		}
	}
	return out
}

// IsLiteral reports whether the template has no expressions (after unescaping `$${{`).
func (t *Template) IsLiteral() bool { return len(t.Exprs()) == 0 }

// single reports whether the whole template is one `${{ expr }}` and nothing else.
func (t *Template) single() bool { return len(t.parts) == 1 && t.parts[0].isExpr }

// programs compiles every expression for env, caching the result for the last env used.
func (t *Template) programs(env *Env) ([]*Program, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.env == env && t.progs != nil {
		return t.progs, nil
	}
	var progs []*Program
	var errs []error
	for _, p := range t.parts {
		if !p.isExpr {
			progs = append(progs, nil)
			continue
		}
		prg, err := env.Compile(p.expr)
		if err != nil {
			var ce *CompileError
			if errors.As(err, &ce) {
				ce.Template, ce.Offset = t.src, p.offset
			}
			errs = append(errs, err)
			continue
		}
		progs = append(progs, prg)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	t.env, t.progs = env, progs
	return progs, nil
}

// Check compiles every expression of the template in env. The error joins one
// *CompileError per bad expression, each carrying the template and the expression's
// offset in it.
func (t *Template) Check(env *Env) error {
	_, err := t.programs(env)
	return err
}

// Render evaluates the expressions over act and returns the string: strings are
// inserted as they are, numbers and bools in their JSON form, nil as nothing, and maps
// and lists as compact JSON with sorted keys.
func (t *Template) Render(env *Env, act Activation) (string, error) {
	progs, err := t.programs(env)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i, p := range t.parts {
		if !p.isExpr {
			b.WriteString(p.lit)
			continue
		}
		v, err := progs[i].Eval(act)
		if err != nil {
			return "", err
		}
		s, err := renderValue(v)
		if err != nil {
			return "", &EvalError{Expr: p.expr, Err: err}
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// RenderValue is Render, except that a template that is exactly one `${{ expr }}` (no
// text around it) returns the expression's value itself, so `count: "${{ inputs.n }}"`
// stays a number and `items: "${{ steps.list.output }}"` stays a list.
func (t *Template) RenderValue(env *Env, act Activation) (any, error) {
	if !t.single() {
		return t.Render(env, act)
	}
	progs, err := t.programs(env)
	if err != nil {
		return nil, err
	}
	return progs[0].Eval(act)
}

// renderValue formats one value for a string.
func renderValue(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return strconv.FormatFloat(x, 'g', -1, 64), nil
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}
