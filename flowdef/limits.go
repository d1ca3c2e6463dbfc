package flowdef

import (
	"fmt"
	"io"
	"os"

	"github.com/goccy/go-yaml/ast"
)

// Size limits of a definition, checked by Parse before anything is decoded, so that a
// file cannot make a reader (flowctl validate, flowctl start --file, a worker serving a
// directory) use more than a few megabytes of memory.
const (
	// MaxFileSize is the largest definition accepted, in bytes: the file as written and
	// its canonical JSON (what a run records) alike.
	MaxFileSize = 1 << 20
	// MaxAliasNodes is how many YAML nodes the aliases of a definition (*name, <<: *name)
	// may add once expanded, each alias counting every node of the value it repeats.
	MaxAliasNodes = 10_000
	// MaxAliasBytes is how many bytes of scalars (keys and values) the aliases of a
	// definition may add once expanded.
	MaxAliasBytes = 256 << 10
)

// ReadFile reads a definition file, at most MaxFileSize+1 bytes of it: a larger file is
// never read whole, and Parse refuses what ReadFile returns for it (it is over the limit).
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return data, nil
}

// sizeHint is the hint of the size errors.
const sizeHint = "split the flow into smaller definitions joined with call:"

// checkSize refuses data over MaxFileSize.
func checkSize(c *collector, file string, n int, what string) bool {
	if n <= MaxFileSize {
		return true
	}
	c.add(Pos{File: file, Line: 1, Col: 1}, sizeHint, "%s is larger than the limit of %d bytes (1 MiB, flowdef.MaxFileSize)", what, MaxFileSize)
	return false
}

// expansion is the size of a YAML value with its aliases expanded.
type expansion struct{ nodes, bytes int64 }

// aliasCheck walks a parsed document once, without following aliases, and computes what
// its aliases add when expanded: each anchor's expanded size is remembered when its value
// has been walked, so an alias costs a lookup and a billion-laughs file is refused after
// reading a few hundred nodes. An alias to an anchor not defined before it (or to the
// anchor it is inside of) is refused too: expanding it would never end.
type aliasCheck struct {
	file    string
	anchors map[string]expansion
	open    map[string]int // anchors whose value is being walked (nesting count)
	added   expansion      // what aliases add, saturated just above the limits
	err     *Error
}

// checkAliases reports the first alias problem of body, or nil.
func checkAliases(file string, body ast.Node) *Error {
	a := &aliasCheck{file: file, anchors: map[string]expansion{}, open: map[string]int{}}
	a.walk(body)
	return a.err
}

func (a *aliasCheck) pos(n ast.Node) Pos {
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return Pos{File: a.file, Line: tk.Position.Line, Col: tk.Position.Column}
	}
	return Pos{File: a.file}
}

func (a *aliasCheck) fail(n ast.Node, hint, format string, args ...any) {
	if a.err == nil {
		a.err = &Error{Pos: a.pos(n), Message: sprintf(format, args...), Hint: hint}
	}
}

// walk returns the expanded size of n (0 once a problem was found).
func (a *aliasCheck) walk(n ast.Node) expansion {
	if n == nil || a.err != nil {
		return expansion{}
	}
	switch t := n.(type) {
	case *ast.AnchorNode:
		name := anchorName(t.Name)
		a.open[name]++
		e := a.walk(t.Value)
		a.open[name]--
		a.anchors[name] = e
		return e
	case *ast.AliasNode:
		return a.alias(t)
	case *ast.TagNode:
		return a.walk(t.Value)
	case *ast.MappingKeyNode:
		return a.walk(t.Value)
	case *ast.MappingValueNode:
		return a.sum(1, 0, a.walk(t.Key), a.walk(t.Value))
	case *ast.MappingNode:
		e := expansion{nodes: 1}
		for _, v := range t.Values {
			e = a.sum(0, 0, e, a.walk(v))
		}
		return e
	case *ast.SequenceNode:
		e := expansion{nodes: 1}
		for _, v := range t.Values {
			e = a.sum(0, 0, e, a.walk(v))
		}
		return e
	case *ast.LiteralNode:
		if t.Value != nil {
			return expansion{nodes: 1, bytes: int64(len(t.Value.Value))}
		}
	}
	if tk := n.GetToken(); tk != nil {
		return expansion{nodes: 1, bytes: int64(len(tk.Value))}
	}
	return expansion{nodes: 1}
}

// alias adds the size of the anchor an alias repeats, refusing when over the limits.
func (a *aliasCheck) alias(t *ast.AliasNode) expansion {
	name := anchorName(t.Value)
	e, ok := a.anchors[name]
	switch {
	case a.open[name] > 0:
		a.fail(t, "an alias may not repeat the value it is inside of", "alias *%s refers to its own anchor: it would expand forever", name)
		return expansion{}
	case !ok:
		a.fail(t, "define the anchor (&"+name+") before the alias", "alias *%s refers to no anchor defined before it", name)
		return expansion{}
	}
	a.added = a.sum(0, 0, a.added, e)
	switch {
	case a.added.nodes > MaxAliasNodes:
		a.fail(t, "write the values out, or repeat less through aliases",
			"aliases expand to more than %d nodes (the limit, flowdef.MaxAliasNodes)", MaxAliasNodes)
	case a.added.bytes > MaxAliasBytes:
		a.fail(t, "write the values out, or repeat less through aliases",
			"aliases expand to more than %d bytes (the limit, flowdef.MaxAliasBytes)", MaxAliasBytes)
	}
	return e
}

// sum adds sizes, saturating well above the limits (sizes of nested anchors grow
// exponentially and must not overflow).
func (a *aliasCheck) sum(nodes, bytes int64, parts ...expansion) expansion {
	const ceiling = 1 << 40
	e := expansion{nodes: nodes, bytes: bytes}
	for _, p := range parts {
		e.nodes = min(e.nodes+p.nodes, ceiling)
		e.bytes = min(e.bytes+p.bytes, ceiling)
	}
	return e
}

// anchorName is the name of an anchor or alias ("" when it is not a plain name).
func anchorName(n ast.Node) string {
	if n == nil || n.GetToken() == nil {
		return ""
	}
	return n.GetToken().Value
}
