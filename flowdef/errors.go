package flowdef

import (
	"errors"
	"sort"
	"strings"
)

// ErrInvalid is matched (errors.Is) by every *ValidationError.
var ErrInvalid = errors.New("flowdef: invalid definition")

// ErrNotFound is what a Registry's LoadDefinition returns (wrapped or as is) when it has
// no definition of that name; Validate then reports "no flow named ...".
var ErrNotFound = errors.New("flowdef: no such definition")

// Error is one problem found in a definition: where, what, and how to fix it.
type Error struct {
	// Pos is where the problem was written (the key for an unknown field, the value
	// otherwise).
	Pos Pos `json:"pos"`
	// Message says what is wrong; errors from a sub-flow start "in sub-flow 'x': ".
	Message string `json:"message"`
	// Hint says how to fix it; may be empty.
	Hint string `json:"hint,omitempty"`
}

// String reads "file:line:col: message (hint: hint)".
func (e Error) String() string {
	var b strings.Builder
	if p := e.Pos.String(); p != "" {
		b.WriteString(p)
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	if e.Hint != "" {
		b.WriteString(" (hint: ")
		b.WriteString(e.Hint)
		b.WriteString(")")
	}
	return b.String()
}

// ValidationError is every problem Parse or Validate found, in one list: Parse and
// Validate never stop at the first. Errors of the definition's own file come first, by
// line and column; errors found in sub-flows follow in the order their calls were found.
type ValidationError struct {
	// Errors is never empty.
	Errors []Error
}

// Error prints one problem per line, "file:line:col: message (hint: ...)".
func (e *ValidationError) Error() string {
	lines := make([]string, len(e.Errors))
	for i, x := range e.Errors {
		lines[i] = x.String()
	}
	return strings.Join(lines, "\n")
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// Errors returns the list inside err if it is (or wraps) a *ValidationError, else nil.
func Errors(err error) []Error {
	var v *ValidationError
	if errors.As(err, &v) {
		return v.Errors
	}
	return nil
}

// collector gathers errors in one pass.
type collector struct {
	root string // the file whose errors sort by position
	errs []Error
}

func (c *collector) add(p Pos, hint, format string, args ...any) {
	c.errs = append(c.errs, Error{Pos: p, Message: sprintf(format, args...), Hint: hint})
}

// result sorts (own file by position, others in discovery order), drops exact
// duplicates and wraps; nil when there is nothing.
func (c *collector) result() error {
	if len(c.errs) == 0 {
		return nil
	}
	errs := append([]Error(nil), c.errs...)
	sort.SliceStable(errs, func(i, j int) bool {
		a, b := errs[i], errs[j]
		ra, rb := a.Pos.File == c.root, b.Pos.File == c.root
		if ra != rb {
			return ra
		}
		if !ra {
			return false
		}
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line < b.Pos.Line
		}
		return a.Pos.Col < b.Pos.Col
	})
	seen := map[string]bool{}
	out := errs[:0]
	for _, e := range errs {
		k := e.String()
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, e)
	}
	return &ValidationError{Errors: out}
}
