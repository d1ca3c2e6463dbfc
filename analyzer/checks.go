package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/types/typeutil"
)

// timeAdvice maps the time package's clock and timer functions to what to use instead.
var timeAdvice = map[string]string{
	"Now":       "use ctx.Now() instead",
	"Sleep":     "use ctx.Sleep(name, d) instead",
	"Since":     "it reads the wall clock; use ctx.Now().Sub(t) instead",
	"Until":     "it reads the wall clock; use t.Sub(ctx.Now()) instead",
	"After":     "native timers are not replayed; use ctx.Sleep(name, d) or workflow.NewTimer instead",
	"AfterFunc": "native timers are not replayed; use ctx.Sleep(name, d) or workflow.NewTimer instead",
	"Tick":      "native timers are not replayed; use ctx.Sleep(name, d) or workflow.NewTimer instead",
	"NewTimer":  "native timers are not replayed; use ctx.Sleep(name, d) or workflow.NewTimer instead",
	"NewTicker": "native timers are not replayed; use ctx.Sleep(name, d) or workflow.NewTimer instead",
}

// seededRand are the math/rand constructors: a generator with a fixed seed is
// deterministic, so only drawing from the global source is reported.
var seededRand = map[string]bool{
	"New": true, "NewSource": true, "NewPCG": true, "NewChaCha8": true, "NewZipf": true,
}

// internalClientTypes are the go.temporal.io/sdk/internal types behind the aliases of
// go.temporal.io/sdk/client whose methods talk to the server (client.WorkflowRun is
// internal.WorkflowRun, and so on), each with the name of its alias.
var internalClientTypes = map[string]string{
	"Client":                       "Client",
	"NamespaceClient":              "NamespaceClient",
	"WorkflowRun":                  "WorkflowRun",
	"WorkflowUpdateHandle":         "WorkflowUpdateHandle",
	"WithStartWorkflowOperation":   "WithStartWorkflowOperation",
	"ScheduleClient":               "ScheduleClient",
	"ScheduleHandle":               "ScheduleHandle",
	"ScheduleListIterator":         "ScheduleListIterator",
	"DeploymentClient":             "DeploymentClient",
	"DeploymentListIterator":       "DeploymentListIterator",
	"WorkerDeploymentClient":       "WorkerDeploymentClient",
	"WorkerDeploymentHandle":       "WorkerDeploymentHandle",
	"WorkerDeploymentListIterator": "WorkerDeploymentListIterator",
	"HistoryEventIterator":         "HistoryEventIterator",
	"ClientActivityHandle":         "ActivityHandle",
	"ClientNexusClient":            "NexusClient",
	"ClientNexusOperationHandle":   "NexusOperationHandle",
}

const (
	channelAdvice = "native channels are not replayed deterministically; use workflow.NewChannel (ctx.Workflow()) instead"
	mapAdvice     = "map iteration order is random; sort the keys"
	randAdvice    = "random values differ on replay; draw them in a step or with workflow.SideEffect"
	clientAdvice  = "a client does I/O outside the workflow's history; do it in a step (activity), or use flow.Child for child runs"
)

// checkBody reports the forbidden constructs in body, including the function literals in
// it, and returns the same-package functions it calls.
func (c *checker) checkBody(body *ast.BlockStmt, s scope) []*types.Func {
	var callees []*types.Func
	seen := map[*types.Func]bool{}
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			if c.lits[n] {
				return false // checked already, as a handler of its own
			}
			c.lits[n] = true
		case *ast.GoStmt:
			c.report(n.Pos(), "go statement in %s: use flow branches (workflow.Go) instead", s.where())
		case *ast.SelectStmt:
			c.report(n.Pos(), "select statement in %s: use workflow.NewSelector (ctx.Workflow()) instead", s.where())
			// The cases' sends and receives belong to the select: check only their bodies
			// and the expressions inside their communications.
			for _, cl := range n.Body.List {
				cc, ok := cl.(*ast.CommClause)
				if !ok {
					continue
				}
				c.inspectComm(cc.Comm, visit)
				for _, st := range cc.Body {
					ast.Inspect(st, visit)
				}
			}
			return false
		case *ast.SendStmt:
			c.report(n.Arrow, "channel send in %s: %s", s.where(), channelAdvice)
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				c.report(n.OpPos, "channel receive in %s: %s", s.where(), channelAdvice)
			}
		case *ast.RangeStmt:
			c.checkRange(n, s)
		case *ast.CallExpr:
			c.checkCall(n, s)
			if fn := c.staticCallee(n); fn != nil && !seen[fn] {
				seen[fn] = true
				callees = append(callees, fn)
			}
		case *ast.SelectorExpr:
			c.checkSelector(n, s)
		case *ast.Ident:
			if !c.skipIdent[n] {
				c.checkUse(n, n, s)
			}
		}
		return true
	}
	ast.Inspect(body, visit)
	return callees
}

// inspectComm walks the operands of a select case's send or receive, skipping the
// channel operation itself.
func (c *checker) inspectComm(comm ast.Stmt, visit func(ast.Node) bool) {
	var exprs []ast.Expr
	switch st := comm.(type) {
	case *ast.SendStmt:
		exprs = []ast.Expr{st.Chan, st.Value}
	case *ast.ExprStmt:
		exprs = []ast.Expr{st.X}
	case *ast.AssignStmt:
		exprs = append(exprs, st.Rhs...)
	}
	for _, e := range exprs {
		if u, ok := ast.Unparen(e).(*ast.UnaryExpr); ok && u.Op == token.ARROW {
			e = u.X
		}
		ast.Inspect(e, visit)
	}
}

// checkRange reports ranging over a channel, a map, or maps.Keys, maps.Values or maps.All.
func (c *checker) checkRange(n *ast.RangeStmt, s scope) {
	t := c.pass.TypesInfo.TypeOf(n.X)
	if t == nil {
		return
	}
	switch coreType(t).(type) {
	case *types.Chan:
		c.report(n.For, "range over channel in %s: %s", s.where(), channelAdvice)
		return
	case *types.Map:
		c.report(n.For, "range over map in %s: %s", s.where(), mapAdvice)
		return
	}
	if call, ok := ast.Unparen(n.X).(*ast.CallExpr); ok {
		fn := typeutil.StaticCallee(c.pass.TypesInfo, call)
		if fn != nil && fn.Pkg() != nil && fn.Pkg().Path() == "maps" {
			switch fn.Name() {
			case "Keys", "Values", "All":
				c.report(n.For, "range over maps.%s in %s: %s (slices.Sorted(maps.Keys(m)))",
					fn.Name(), s.where(), mapAdvice)
			}
		}
	}
}

// coreType is t's underlying type or, for a type parameter whose constraint's terms are
// all maps or all channels (~map[K]V, ~chan T), the underlying type of its first term;
// nil otherwise.
func coreType(t types.Type) types.Type {
	tp, ok := types.Unalias(t).(*types.TypeParam)
	if !ok {
		return t.Underlying()
	}
	iface, ok := tp.Constraint().Underlying().(*types.Interface)
	if !ok {
		return nil
	}
	var core types.Type
	for i := 0; i < iface.NumEmbeddeds(); i++ {
		terms := []types.Type{iface.EmbeddedType(i)}
		if u, ok := terms[0].(*types.Union); ok {
			terms = terms[:0]
			for j := 0; j < u.Len(); j++ {
				terms = append(terms, u.Term(j).Type())
			}
		}
		for _, term := range terms {
			u := term.Underlying()
			if _, ok := u.(*types.Interface); ok {
				continue // comparable, any or another interface adds no term
			}
			if core == nil {
				core = u
			} else if kind(core) != kind(u) {
				return nil
			}
		}
	}
	if kind(core) == "" {
		return nil
	}
	return core
}

// kind says whether an underlying type is a map or a channel.
func kind(t types.Type) string {
	switch t.(type) {
	case *types.Map:
		return "map"
	case *types.Chan:
		return "chan"
	}
	return ""
}

// checkCall reports make(chan ...).
func (c *checker) checkCall(call *ast.CallExpr, s scope) {
	id, ok := ast.Unparen(call.Fun).(*ast.Ident)
	if !ok || len(call.Args) == 0 {
		return
	}
	if b, ok := c.pass.TypesInfo.Uses[id].(*types.Builtin); !ok || b.Name() != "make" {
		return
	}
	if t := c.pass.TypesInfo.TypeOf(call.Args[0]); t != nil {
		if _, ok := coreType(t).(*types.Chan); ok {
			c.report(call.Pos(), "make(chan) in %s: %s", s.where(), channelAdvice)
		}
	}
}

// checkSelector reports client method calls and the uses of forbidden package-level
// functions through a qualified name (time.Now).
func (c *checker) checkSelector(sel *ast.SelectorExpr, s scope) {
	info := c.pass.TypesInfo
	if selection, ok := info.Selections[sel]; ok {
		if selection.Kind() == types.FieldVal {
			return
		}
		if name, ok := clientMethod(selection); ok {
			c.skipIdent[sel.Sel] = true
			c.report(sel.Pos(), "client call %s in %s: %s", name, s.where(), clientAdvice)
		}
		return
	}
	if c.checkUse(sel.Sel, sel, s) {
		c.skipIdent[sel.Sel] = true
	}
}

// checkUse reports id if it refers to a forbidden package-level function or variable,
// at the position of at; it says whether it reported.
func (c *checker) checkUse(id *ast.Ident, at ast.Node, s scope) bool {
	obj := c.pass.TypesInfo.Uses[id]
	if obj == nil || obj.Pkg() == nil || obj.Parent() != obj.Pkg().Scope() {
		return false // not package-level (methods and fields have no parent scope)
	}
	path, name := obj.Pkg().Path(), obj.Name()
	_, isFunc := obj.(*types.Func)
	switch {
	case path == "time" && isFunc && timeAdvice[name] != "":
		c.report(at.Pos(), "time.%s in %s: %s", name, s.where(), timeAdvice[name])
	case (path == "math/rand" || path == "math/rand/v2") && isFunc && !seededRand[name]:
		c.report(at.Pos(), "%s.%s in %s: %s", path, name, s.where(), randAdvice)
	case path == "crypto/rand" && (isFunc || isVar(obj)):
		c.report(at.Pos(), "crypto/rand.%s in %s: %s", name, s.where(), randAdvice)
	case path == clientPath && isFunc && dialsClient(name):
		c.report(at.Pos(), "client.%s in %s: dialing a Temporal client in a flow handler; %s",
			name, s.where(), clientAdvice)
	default:
		return false
	}
	return true
}

func isVar(obj types.Object) bool {
	_, ok := obj.(*types.Var)
	return ok
}

// dialsClient reports whether a function of go.temporal.io/sdk/client makes a client.
func dialsClient(name string) bool {
	return strings.HasPrefix(name, "Dial") ||
		(strings.HasPrefix(name, "New") && strings.Contains(name, "Client"))
}

// clientMethod reports whether a method selection is on a Temporal client type or on
// *flowclient.Client, and names it as T.Method for messages.
func clientMethod(sel *types.Selection) (string, bool) {
	fn, ok := sel.Obj().(*types.Func)
	if !ok {
		return "", false
	}
	if name, ok := clientType(sel.Recv()); ok {
		return name + "." + fn.Name(), true
	}
	// A method promoted from an embedded client, or declared by a client interface.
	if sig, ok := fn.Type().(*types.Signature); ok && sig.Recv() != nil {
		if name, ok := clientType(sig.Recv().Type()); ok {
			return name + "." + fn.Name(), true
		}
	}
	if fn.Pkg() != nil && fn.Pkg().Path() == clientPath {
		return "client." + fn.Name(), true
	}
	return "", false
}

// clientType reports whether t (or what it points to) is a type of
// go.temporal.io/sdk/client, one of the internal types behind its aliases, or
// flowclient.Client, and names it.
func clientType(t types.Type) (string, bool) {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	} else if p, ok := types.Unalias(t).(*types.Pointer); ok {
		t = p.Elem()
	}
	for {
		a, ok := t.(*types.Alias)
		if !ok {
			break
		}
		if obj := a.Obj(); obj.Pkg() != nil && obj.Pkg().Path() == clientPath {
			return "client." + obj.Name(), true
		}
		t = a.Rhs()
	}
	n, ok := t.(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return "", false
	}
	name := n.Obj().Name()
	switch path := n.Obj().Pkg().Path(); {
	case path == clientPath:
		return "client." + name, true
	case path == internalPath && internalClientTypes[name] != "":
		return "client." + internalClientTypes[name], true
	case path == flowClientPath && name == "Client":
		return "(*flowclient.Client)", true
	}
	return "", false
}
