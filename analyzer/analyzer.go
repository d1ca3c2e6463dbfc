package analyzer

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"
)

// Package paths the analyzer recognises by type.
const (
	flowPath       = "github.com/gateflow/gateflow/flow"
	flowClientPath = "github.com/gateflow/gateflow/flowclient"
	clientPath     = "go.temporal.io/sdk/client"
	internalPath   = "go.temporal.io/sdk/internal"
)

// ignoreDirective is the suppression comment: on the line of a finding, or alone on the
// line above it.
const ignoreDirective = "//flowvet:ignore"

// Analyzer reports code in gateflow flow handlers, and in the same-package functions they
// call, that breaks Temporal's determinism rules. See the package documentation.
var Analyzer = &analysis.Analyzer{
	Name: "flowdeterminism",
	Doc: `report non-deterministic code in gateflow flow handlers

A flow handler is any function whose first parameter is *flow.Context
(github.com/gateflow/gateflow/flow). Temporal replays it from history, so inside a
handler, and in the functions of the same package that it calls, flowdeterminism
reports go statements, select statements, native channel operations, ranging over
maps, the wall clock and native timers (time.Now, time.Sleep, ...), math/rand and
crypto/rand, and Temporal or flow client calls. Use flow branches, workflow.Go,
workflow.NewSelector, workflow.NewChannel, sorted keys, ctx.Now and ctx.Sleep instead.
A //flowvet:ignore comment on the line, or alone on the line above, suppresses a finding.`,
	Run: run,
}

// checker holds the state of one pass.
type checker struct {
	pass  *analysis.Pass
	decls map[*types.Func]*ast.FuncDecl // functions and methods declared in the package
	roots map[*types.Func]bool          // the declared functions that are handlers
	done  map[*types.Func]bool          // declared functions already checked
	lits  map[*ast.FuncLit]bool         // function literals already checked
	// ignored holds, per file name, the lines whose findings are suppressed.
	ignored map[string]map[int]bool
	// skipIdent marks identifiers already reported as part of a selector.
	skipIdent map[*ast.Ident]bool
}

// scope says whose code is being checked: the handler and the calls that lead from it.
type scope struct {
	handler string
	via     []string
}

// where is the part of a message that names the handler and the call chain.
func (s scope) where() string {
	w := "flow handler " + s.handler
	if len(s.via) > 0 {
		w += " (via " + strings.Join(s.via, " -> ") + ")"
	}
	return w
}

// litRoot is a function literal that is itself a flow handler.
type litRoot struct {
	lit  *ast.FuncLit
	name string
}

func run(pass *analysis.Pass) (any, error) {
	if pass.Pkg.Path() == flowPath {
		// The runtime itself: its *Context functions are API, not handlers.
		return nil, nil
	}
	c := &checker{
		pass:      pass,
		decls:     map[*types.Func]*ast.FuncDecl{},
		roots:     map[*types.Func]bool{},
		done:      map[*types.Func]bool{},
		lits:      map[*ast.FuncLit]bool{},
		ignored:   map[string]map[int]bool{},
		skipIdent: map[*ast.Ident]bool{},
	}
	var declRoots []*types.Func
	var lits []litRoot
	for _, f := range pass.Files {
		c.collectIgnores(f)
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				fn, _ := pass.TypesInfo.Defs[fd.Name].(*types.Func)
				if fn != nil && fd.Body != nil {
					c.decls[fn] = fd
					if isHandler(fn.Type()) {
						c.roots[fn] = true
						declRoots = append(declRoots, fn)
					}
				}
			}
			lits = append(lits, c.handlerLits(d)...)
		}
	}
	for _, fn := range declRoots {
		if !c.done[fn] {
			c.done[fn] = true
			c.checkFrom(c.decls[fn].Body, funcName(fn))
		}
	}
	for _, r := range lits {
		if !c.lits[r.lit] {
			c.lits[r.lit] = true
			c.checkFrom(r.lit.Body, r.name)
		}
	}
	return nil, nil
}

// checkFrom checks a handler's body and, breadth first, every same-package function it
// reaches through static calls that is not checked yet and is no handler of its own.
func (c *checker) checkFrom(body *ast.BlockStmt, handler string) {
	type item struct {
		body *ast.BlockStmt
		via  []string
	}
	queue := []item{{body: body}}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		for _, callee := range c.checkBody(it.body, scope{handler: handler, via: it.via}) {
			if c.done[callee] || c.roots[callee] {
				continue
			}
			c.done[callee] = true
			via := append(append([]string(nil), it.via...), funcName(callee))
			queue = append(queue, item{body: c.decls[callee].Body, via: via})
		}
	}
}

// handlerLits returns the function literals in a top-level declaration that are flow
// handlers, each named after where it is.
func (c *checker) handlerLits(d ast.Decl) []litRoot {
	owner := ""
	switch d := d.(type) {
	case *ast.FuncDecl:
		if fn, ok := c.pass.TypesInfo.Defs[d.Name].(*types.Func); ok {
			owner = funcName(fn)
		}
	case *ast.GenDecl:
		var names []string
		for _, sp := range d.Specs {
			if vs, ok := sp.(*ast.ValueSpec); ok {
				for _, n := range vs.Names {
					names = append(names, n.Name)
				}
			}
		}
		if len(names) > 0 {
			owner = "var " + strings.Join(names, ", ")
		}
	}
	var out []litRoot
	ast.Inspect(d, func(n ast.Node) bool {
		lit, ok := n.(*ast.FuncLit)
		if !ok || !isHandler(c.pass.TypesInfo.TypeOf(lit)) {
			return true
		}
		p := c.pass.Fset.Position(lit.Pos())
		at := fmt.Sprintf("%s:%d", filepath.Base(p.Filename), p.Line)
		name := "func literal at " + at
		if owner != "" {
			name = fmt.Sprintf("func literal in %s (%s)", owner, at)
		}
		out = append(out, litRoot{lit: lit, name: name})
		return true
	})
	return out
}

// collectIgnores records the lines that //flowvet:ignore comments suppress in f.
func (c *checker) collectIgnores(f *ast.File) {
	tf := c.pass.Fset.File(f.Pos())
	if tf == nil {
		return
	}
	var src []byte
	if c.pass.ReadFile != nil {
		src, _ = c.pass.ReadFile(tf.Name())
	}
	for _, g := range f.Comments {
		for _, cm := range g.List {
			if !isIgnore(cm.Text) {
				continue
			}
			line := tf.Line(cm.Slash)
			lines := c.ignored[tf.Name()]
			if lines == nil {
				lines = map[int]bool{}
				c.ignored[tf.Name()] = lines
			}
			lines[line] = true
			if aloneOnLine(tf, src, cm.Slash) {
				lines[line+1] = true
			}
		}
	}
}

// isIgnore reports whether a comment's text is the ignore directive, with or without a
// reason after it.
func isIgnore(text string) bool {
	rest, ok := strings.CutPrefix(text, ignoreDirective)
	return ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t')
}

// aloneOnLine reports whether only blanks precede pos on its line. Without the source it
// says yes, so the directive still covers the line below.
func aloneOnLine(tf *token.File, src []byte, pos token.Pos) bool {
	off := tf.Offset(pos)
	start := tf.Offset(tf.LineStart(tf.Line(pos)))
	if src == nil || off > len(src) || start > off {
		return true
	}
	return strings.TrimSpace(string(src[start:off])) == ""
}

// report emits a finding at pos unless a directive suppresses it.
func (c *checker) report(pos token.Pos, format string, args ...any) {
	p := c.pass.Fset.PositionFor(pos, false) // the file's own lines, not //line directives
	if lines := c.ignored[p.Filename]; lines[p.Line] {
		return
	}
	c.pass.Report(analysis.Diagnostic{Pos: pos, Message: fmt.Sprintf(format, args...)})
}

// isHandler reports whether t is a function type whose first parameter is *flow.Context.
func isHandler(t types.Type) bool {
	sig, ok := t.(*types.Signature)
	if !ok || sig.Params().Len() == 0 {
		return false
	}
	return isFlowContext(sig.Params().At(0).Type())
}

// isFlowContext reports whether t is *flow.Context (through aliases).
func isFlowContext(t types.Type) bool {
	p, ok := types.Unalias(t).(*types.Pointer)
	if !ok {
		return false
	}
	return isNamed(p.Elem(), flowPath, "Context")
}

// isNamed reports whether t, through aliases, is the named type path.name.
func isNamed(t types.Type, path, name string) bool {
	n, ok := types.Unalias(t).(*types.Named)
	if !ok {
		return false
	}
	obj := n.Obj()
	return obj.Name() == name && obj.Pkg() != nil && obj.Pkg().Path() == path
}

// funcName names a declared function for messages: F, T.M or (*T).M.
func funcName(fn *types.Func) string {
	sig, _ := fn.Type().(*types.Signature)
	if sig == nil || sig.Recv() == nil {
		return fn.Name()
	}
	t := sig.Recv().Type()
	ptr := false
	if p, ok := types.Unalias(t).(*types.Pointer); ok {
		t, ptr = p.Elem(), true
	}
	recv := types.TypeString(t, func(*types.Package) string { return "" })
	if i := strings.IndexByte(recv, '['); i >= 0 {
		recv = recv[:i] // drop type arguments of generic receivers
	}
	if ptr {
		return fmt.Sprintf("(*%s).%s", recv, fn.Name())
	}
	return recv + "." + fn.Name()
}

// staticCallee returns the same-package declared function a call invokes, if any.
func (c *checker) staticCallee(call *ast.CallExpr) *types.Func {
	fn := typeutil.StaticCallee(c.pass.TypesInfo, call)
	if fn == nil {
		return nil
	}
	fn = fn.Origin()
	if fn.Pkg() != c.pass.Pkg {
		return nil
	}
	if _, ok := c.decls[fn]; !ok {
		return nil
	}
	return fn
}
