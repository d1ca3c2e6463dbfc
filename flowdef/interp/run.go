package interp

import (
	"errors"
	"fmt"
	"maps"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/flowdef/expr"
	"github.com/gateflow/gateflow/gates"
)

// runner interprets one run of one definition.
type runner struct {
	def    *flowdef.Definition
	opts   options
	ev     *evaluator
	inputs map[string]any
	// visits counts, per node id, the gotos that jumped to it.
	visits map[string]int
	// allowed are the failures the run went on after without a step recording them as
	// allowed (a foreach's items under on_item_fail continue or skip_dependents); a run
	// that otherwise succeeds returns them, so it ends warning.
	allowed []error
}

// frame is the recorded data expressions see at one place: the top of the run, or one
// item of a foreach (which gets copies, so concurrent items do not see each other).
type frame struct {
	run      *runner
	vars     map[string]any
	steps    map[string]expr.StepResult
	hasItem  bool
	itemName string
	item     any
	index    int
	// outer are the items of enclosing foreach nodes and loops over a list, by name, that
	// this frame's item does not hide (they stay visible to expressions).
	outer map[string]any
	// last is the output of the last node that ran in the frame (a foreach item's result).
	last any
}

func newRunner(ctx *flow.Context, def *flowdef.Definition, in map[string]any, o options) *runner {
	st := ctx.State()
	info := expr.RunInfo{ID: ctx.RunID(), Workflow: def.Name, Attempt: int64(ctx.Attempt())}
	if !st.StartedAt.IsZero() {
		info.StartedAt = st.StartedAt.UTC().Format(time.RFC3339Nano)
	}
	return &runner{def: def, opts: o, ev: newEvaluator(def, info), inputs: in, visits: map[string]int{}}
}

// child is a copy of f for a foreach item or a loop iteration over a list.
func (f *frame) child(name string, item any, index int) *frame {
	if name == "" {
		name = expr.Item
	}
	return &frame{run: f.run, vars: maps.Clone(f.vars), steps: maps.Clone(f.steps), hasItem: true, itemName: name, item: item, index: index, outer: f.enclosing(name)}
}

// enclosing are the items visible inside a body whose item is named name: f's outer
// items and f's own item, except those name hides. Nil when there are none.
func (f *frame) enclosing(name string) map[string]any {
	var out map[string]any
	add := func(k string, v any) {
		if k == name {
			return
		}
		if out == nil {
			out = map[string]any{}
		}
		out[k] = v
	}
	for _, k := range sortedKeys(f.outer) {
		add(k, f.outer[k])
	}
	if f.hasItem {
		add(f.itemName, f.item)
	}
	return out
}

// finishSignal is how a finish node ends the run from wherever it is.
type finishSignal struct {
	node    *flowdef.Node
	status  string
	output  any
	message string
}

func (s *finishSignal) Error() string {
	return fmt.Sprintf("%s: finish %s: %s %s", s.node.Pos, s.node.ID, s.status, s.message)
}

// gotoSignal is a node's failure routed to another node ("goto <id>"); the sequence that
// holds the target jumps there.
type gotoSignal struct {
	node   *flowdef.Node
	target string
	cause  error
}

func (s *gotoSignal) Error() string {
	return fmt.Sprintf("goto %s: no enclosing sequence holds node %s: %v", s.target, s.target, s.cause)
}

// NodeError is the failure of one node: its id, where it was written, and why.
// errors.As and errors.Is see through it to the flow error (a *flow.StepError, an
// approval rejection, a budget refusal...), so a run fails with the same status as the
// equivalent Go flow.
type NodeError struct {
	// ID is the node's id (may be empty), Kind its kind and Pos where it was written.
	ID   string
	Kind flowdef.Kind
	Pos  flowdef.Pos
	// Err is the cause.
	Err error
}

// Error reads "file:line:col: node ID (kind): cause".
func (e *NodeError) Error() string {
	return fmt.Sprintf("%s: node %s (%s): %v", e.Pos, e.ID, e.Kind, e.Err)
}

// Unwrap returns the cause.
func (e *NodeError) Unwrap() error { return e.Err }

func nodeErr(n *flowdef.Node, err error) error {
	var ne *NodeError
	if errors.As(err, &ne) || isSignal(err) {
		return err
	}
	return &NodeError{ID: n.ID, Kind: n.Kind, Pos: n.Pos, Err: err}
}

// isSignal reports a finish or a pending goto, which are control flow, not failures.
func isSignal(err error) bool {
	var fs *finishSignal
	var gs *gotoSignal
	return errors.As(err, &fs) || errors.As(err, &gs)
}

// run runs the body, then on_error (when it failed) and always, and returns the run's
// output and error.
func (r *runner) run(ctx *flow.Context) (any, error) {
	f := &frame{run: r, vars: maps.Clone(r.def.Vars), steps: map[string]expr.StepResult{}}
	if f.vars == nil {
		f.vars = map[string]any{}
	}
	out, err := r.body(ctx, f)
	if err != nil && ctx.Workflow().Err() == nil && len(r.def.OnError) > 0 {
		if herr := r.section(ctx, f, r.def.OnError); herr != nil {
			err = errors.Join(err, fmt.Errorf("on_error: %w", herr))
		}
	}
	if len(r.def.Always) > 0 {
		if aerr := r.always(ctx, f); aerr != nil {
			err = errors.Join(err, fmt.Errorf("always: %w", aerr))
		}
	}
	if err == nil && len(r.allowed) > 0 {
		return out, errors.Join(r.allowed...)
	}
	return out, err
}

// body runs def.Steps and turns a finish into the run's output or failure.
func (r *runner) body(ctx *flow.Context, f *frame) (any, error) {
	err := r.list(ctx, f, r.def.Steps)
	var fs *finishSignal
	var gs *gotoSignal
	switch {
	case errors.As(err, &fs):
		return r.finish(fs)
	case errors.As(err, &gs):
		// Not wrapped: the cause is an allowed failure, which would end the run warning.
		return nil, &NodeError{ID: gs.node.ID, Kind: gs.node.Kind, Pos: gs.node.Pos, Err: errors.New(gs.Error())}
	case err != nil:
		return nil, err
	}
	out := any(f.vars)
	if err := checkSchema(r.def.Outputs, out); err != nil {
		return out, flow.Permanent(fmt.Errorf("%s: the run's output (its vars) does not match outputs: %w", r.def.Fields.At("outputs", r.def.Pos), err))
	}
	return out, nil
}

func (r *runner) finish(fs *finishSignal) (any, error) {
	msg := fs.message
	if msg == "" {
		msg = "finished " + fs.status + " by node " + fs.node.ID
	}
	switch fs.status {
	case flowdef.StatusFailed:
		return fs.output, flow.Permanent(&NodeError{ID: fs.node.ID, Kind: fs.node.Kind, Pos: fs.node.Pos, Err: errors.New(msg)})
	case flowdef.StatusCancelled:
		return fs.output, temporal.NewCanceledError(msg)
	}
	if err := checkSchema(r.def.Outputs, fs.output); err != nil {
		return fs.output, flow.Permanent(&NodeError{ID: fs.node.ID, Kind: fs.node.Kind, Pos: fs.node.Pos,
			Err: fmt.Errorf("output does not match the flow's outputs schema: %w", err)})
	}
	return fs.output, nil
}

// section runs on_error nodes: every node runs, a failure does not stop the others.
func (r *runner) section(ctx *flow.Context, f *frame, list []*flowdef.Node) error {
	var errs []error
	for _, n := range list {
		if err := r.node(ctx, f, n); err != nil && !isSignal(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// always runs the always nodes. When the run was cancelled its context can run nothing
// more, so the nodes that are shell, http or agent steps are handed to ctx.Always, which
// the runtime runs on a disconnected context after the handler returns; others are
// skipped.
func (r *runner) always(ctx *flow.Context, f *frame) error {
	if ctx.Workflow().Err() == nil {
		return r.section(ctx, f, r.def.Always)
	}
	var errs []error
	for _, n := range r.def.Always {
		if n.Kind != flowdef.KindStep {
			continue
		}
		spec, err := r.builtinSpec(f, n)
		if err != nil {
			errs = append(errs, nodeErr(n, err))
			continue
		}
		opts, err := r.stepOptions(n)
		if err != nil {
			errs = append(errs, nodeErr(n, err))
			continue
		}
		if spec != nil {
			ctx.Always(name(n), spec, opts...)
		}
	}
	return errors.Join(errs...)
}

// list runs a sequence of nodes in order. A goto whose target is in this sequence jumps
// to it (counted against MaxVisits); others go up to the enclosing sequence.
func (r *runner) list(ctx *flow.Context, f *frame, nodes []*flowdef.Node) error {
	for i := 0; i < len(nodes); {
		err := r.node(ctx, f, nodes[i])
		var gs *gotoSignal
		if errors.As(err, &gs) {
			j := indexOf(nodes, gs.target)
			if j < 0 {
				return err
			}
			r.visits[gs.target]++
			if v := r.visits[gs.target]; v > r.opts.maxVisits {
				return &NodeError{ID: gs.node.ID, Kind: gs.node.Kind, Pos: gs.node.Pos,
					Err: fmt.Errorf("goto %s: node %s re-entered %d times (max %d): %v", gs.target, gs.target, v-1, r.opts.maxVisits, gs.cause)}
			}
			ctx.Logger().Info("flowdef: goto", "from", gs.node.ID, "to", gs.target, "visit", r.visits[gs.target])
			i = j
			continue
		}
		if err != nil {
			return err
		}
		i++
	}
	return nil
}

func indexOf(nodes []*flowdef.Node, id string) int {
	for i, n := range nodes {
		if n != nil && n.ID == id {
			return i
		}
	}
	return -1
}

// node runs one node: its guard, its kind, then what its on_error or on_timeout says
// about a failure. Its result is recorded as steps.<id>.
func (r *runner) node(ctx *flow.Context, f *frame, n *flowdef.Node) error {
	if n == nil {
		return nil
	}
	if n.If != "" && n.Kind != flowdef.KindIf {
		ok, err := r.ev.evalBool(f, n.If)
		if err != nil {
			return r.failed(f, n, fmt.Errorf("if: %w", err))
		}
		if !ok {
			if n.ID != "" {
				f.steps[n.ID] = expr.StepResult{Status: statusSkipped}
				ctx.Skip(n.ID, "if "+n.If+" is false")
			}
			return nil
		}
	}
	res, err := r.exec(ctx, f, n)
	if err != nil {
		return r.failed(f, n, err)
	}
	if err := checkOutput(n, res.Output); err != nil {
		return r.failed(f, n, err)
	}
	res.Status = statusSucceeded
	if n.ID != "" {
		f.steps[n.ID] = res
	}
	f.last = res.Output
	return nil
}

// checkOutput validates a node's output against its output_schema (an agent step's is
// its response schema, checked by the agent activity already).
func checkOutput(n *flowdef.Node, out any) error {
	if n.OutputSchema.IsZero() || (n.Kind == flowdef.KindStep && n.Uses == usesAgent) {
		return nil
	}
	if err := checkSchema(n.OutputSchema, out); err != nil {
		return fmt.Errorf("%s: output does not match output_schema: %w", n.Fields.At("output_schema", n.Pos), err)
	}
	return nil
}

// failed records a node's failure and applies its on_error (or, for a timeout, its
// on_timeout): continue goes on, goto jumps, fail (the default) fails the node. An
// approval deadline with gate on_timeout fail is never routed (failsRun).
func (r *runner) failed(f *frame, n *flowdef.Node, err error) error {
	if isSignal(err) {
		return err
	}
	timedOut := isTimeout(err)
	status := statusFailed
	switch {
	case isCancelled(err):
		status = statusCancelled
	case timedOut:
		status = statusTimedOut
	}
	if n.ID != "" {
		f.steps[n.ID] = expr.StepResult{Status: status, Error: err.Error()}
	}
	route := n.OnError
	if timedOut && n.OnTimeout != nil {
		route = n.OnTimeout
	}
	if route != nil && !isCancelled(err) && !failsRun(err) {
		switch route.Action {
		case flowdef.ActionContinue:
			f.last = nil
			return nil
		case flowdef.ActionGoto:
			return &gotoSignal{node: n, target: route.Target, cause: err}
		}
	}
	return nodeErr(n, err)
}

// isTimeout reports whether a timeout ended the node: Temporal's, a gate's or a wait's,
// or a shell or http step's own (a command killed at its timeout, a request with no
// answer in time), as flow records them timed_out.
func isTimeout(err error) bool {
	var te *temporal.TimeoutError
	if errors.As(err, &te) || errors.Is(err, gates.ErrTimedOut) || errors.Is(err, approval.ErrTimedOut) || errors.Is(err, errWaitTimedOut) {
		return true
	}
	var app *temporal.ApplicationError
	if !errors.As(err, &app) {
		return false
	}
	switch app.Type() {
	case activities.ShellTimeoutErrorType:
		return true
	case activities.HTTPTransportErrorType:
		var hf activities.HTTPFailure
		return app.HasDetails() && app.Details(&hf) == nil && hf.TimedOut
	}
	return false
}

// failsRun reports whether err is an approval gate's deadline with on_timeout fail: the
// run fails, and neither on_error nor on_timeout may route it elsewhere.
func failsRun(err error) bool {
	var te *approval.TimedOutError
	return errors.As(err, &te) && te.Decision.FailRun
}

func isCancelled(err error) bool {
	var ce *temporal.CanceledError
	return errors.As(err, &ce)
}

// errWaitTimedOut marks a wait (input, signal) that reached its node's timeout.
var errWaitTimedOut = errors.New("timed out")
