package interp

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/gateflow/gateflow/runs"

	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowdef"
)

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// ifNode runs then or else.
func (r *runner) ifNode(ctx *flow.Context, f *frame, n *flowdef.Node) error {
	ok, err := r.ev.evalBool(f, n.If)
	if err != nil {
		return fmt.Errorf("%s: if: %w", n.Fields.At("if", n.Pos), err)
	}
	if ok {
		return r.list(ctx, f, n.Then)
	}
	return r.list(ctx, f, n.Else)
}

// switchNode runs the steps of the first case whose value equals the switch value (as
// JSON: 1 and 1.0 are equal), else default.
func (r *runner) switchNode(ctx *flow.Context, f *frame, n *flowdef.Node) error {
	v, err := r.ev.eval(f, n.Switch)
	if err != nil {
		return fmt.Errorf("%s: switch: %w", n.Fields.At("switch", n.Pos), err)
	}
	got, err := canonJSON(v)
	if err != nil {
		return fmt.Errorf("switch value: %w", err)
	}
	for _, c := range n.Cases {
		if c == nil {
			continue
		}
		want, err := canonJSON(c.Value)
		if err != nil {
			return fmt.Errorf("%s: case value: %w", c.Pos, err)
		}
		if want == got {
			return r.list(ctx, f, c.Steps)
		}
	}
	return r.list(ctx, f, n.Default)
}

// canonJSON is v as JSON with numbers in one form (whole floats as integers).
func canonJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		return "", err
	}
	b, err = json.Marshal(x)
	return string(b), err
}

// loop runs a while, until or over loop. While and until loops stop with an error after
// max_iterations iterations whose condition still asks for more.
func (r *runner) loop(ctx *flow.Context, f *frame, n *flowdef.Node) error {
	l := n.Loop
	if l == nil {
		return errors.New("loop is empty")
	}
	if l.Over != "" {
		items, err := r.ev.evalList(f, l.Over)
		if err != nil {
			return fmt.Errorf("%s: over: %w", l.Fields.At("over", l.Pos), err)
		}
		if l.MaxIterations > 0 && len(items) > l.MaxIterations {
			return fmt.Errorf("%s: over: %d items, more than max_iterations %d", l.Fields.At("over", l.Pos), len(items), l.MaxIterations)
		}
		name := l.As
		if name == "" {
			name = "item"
		}
		for i, it := range items {
			// The body shares the frame's vars and steps (iterations run one after another).
			lf := &frame{run: r, vars: f.vars, steps: f.steps, hasItem: true, itemName: name, item: it, index: i, outer: f.enclosing(name)}
			if err := r.list(ctx, lf, l.Steps); err != nil {
				return err
			}
			f.last = lf.last
		}
		return nil
	}
	max := l.MaxIterations
	if max <= 0 {
		return fmt.Errorf("%s: loop: max_iterations is required with while and until", l.Pos)
	}
	for i := 0; ; i++ {
		if l.While != "" {
			ok, err := r.ev.evalBool(f, l.While)
			if err != nil {
				return fmt.Errorf("%s: while: %w", l.Fields.At("while", l.Pos), err)
			}
			if !ok {
				return nil
			}
		}
		if i >= max {
			return fmt.Errorf("%s: loop: max_iterations %d reached", l.Fields.At("max_iterations", l.Pos), max)
		}
		if err := r.list(ctx, f, l.Steps); err != nil {
			return err
		}
		if l.Until != "" {
			ok, err := r.ev.evalBool(f, l.Until)
			if err != nil {
				return fmt.Errorf("%s: until: %w", l.Fields.At("until", l.Pos), err)
			}
			if ok {
				return nil
			}
		}
	}
}

// parallel runs each branch node as a flow branch (flow.BranchStep) of one Parallel
// group named by the node's id: fail_fast cancels the others at the first failure;
// min_success lets the node succeed when at least that many branches did. Its output maps
// each branch's id to its output.
func (r *runner) parallel(ctx *flow.Context, f *frame, n *flowdef.Node) (any, error) {
	mode := flow.WaitAll
	if n.FailFast && n.MinSuccess == 0 {
		mode = flow.FailFast
	}
	steps := make([]flow.ParallelStep, 0, len(n.Parallel))
	for i, b := range n.Parallel {
		b := b
		bn := fmt.Sprintf("branch-%d", i+1)
		if b != nil && b.ID != "" {
			bn = b.ID
		}
		steps = append(steps, flow.BranchStep(bn, func(c *flow.Context) error { return r.node(c, f, b) }))
	}
	results, err := ctx.Parallel(name(n), mode, steps...)
	out := map[string]any{}
	ok := 0
	for i, b := range n.Parallel {
		if i < len(results) && results[i].Err == nil {
			ok++
		}
		if b != nil && b.ID != "" {
			out[b.ID] = f.steps[b.ID].Output
		}
	}
	if err != nil {
		if isSignal(err) || n.MinSuccess == 0 || ok < n.MinSuccess || ctx.Workflow().Err() != nil {
			return out, err
		}
	}
	return out, nil
}

// foreach runs, per item of over (flow.ForEach), either the inline steps (each item in
// its own copy of vars and steps, the item under `as`) or one child run of call with the
// rendered `with:` as its input. Its output is the list of the items' outputs (an inline
// item's is the output of its last node), in item order.
func (r *runner) foreach(ctx *flow.Context, f *frame, n *flowdef.Node) (any, error) {
	fe := n.Foreach
	if fe == nil {
		return nil, errors.New("foreach is empty")
	}
	opts := flow.ForEachOptions{MaxParallel: fe.MaxParallel}
	var items []any
	var err error
	if fe.Provider != "" {
		var ids []string
		if items, ids, err = r.providerItems(ctx, f, n); err != nil {
			return nil, err
		}
		opts.ItemName = func(i int) string { return ids[i] }
	} else if items, err = r.ev.evalList(f, fe.Over); err != nil {
		return nil, fmt.Errorf("%s: over: %w", fe.Fields.At("over", fe.Pos), err)
	}
	if opts.MaxParallel <= 0 {
		opts.MaxParallel = 1
	}
	switch fe.OnItemFail {
	case flowdef.ItemFailContinue:
		opts.OnItemFail = flow.Continue
	case flowdef.ItemFailSkipDependents:
		opts.OnItemFail = flow.SkipDependents
	}
	if fe.Ordered || opts.OnItemFail == flow.SkipDependents {
		ids, deps, err := itemDependencies(items)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fe.Fields.At("over", fe.Pos), err)
		}
		opts.Ordered = fe.Ordered
		if ids != nil {
			opts.ItemName = func(i int) string { return ids[i] }
			opts.DependsOn = func(i int) []int { return deps[i] }
		}
	}
	outs, err := flow.ForEach(ctx, name(n), items, func(c *flow.Context, i int, item any) (any, error) {
		cf := f.child(fe.As, item, i)
		if fe.Call != "" {
			with, err := r.ev.valueMap(cf, fe.With)
			if err != nil {
				return nil, fmt.Errorf("%s: with: %w", fe.Fields.At("with", fe.Pos), err)
			}
			raw, err := c.ChildByName(fe.Call, fe.Call, with)
			if err != nil {
				return nil, err
			}
			return jsonValue(raw), nil
		}
		if err := r.list(c, cf, fe.Steps); err != nil {
			return nil, err
		}
		return cf.last, nil
	}, opts)
	list := make([]any, len(outs))
	copy(list, outs)
	goOn := opts.OnItemFail == flow.Continue || opts.OnItemFail == flow.SkipDependents
	if err != nil && (!goOn || isSignal(err) || ctx.Workflow().Err() != nil) {
		return list, err
	}
	if err != nil {
		// The failed (and skipped) items were allowed to fail: the node goes on and the
		// run, if nothing else fails, ends warning.
		r.allowed = append(r.allowed, &flow.AllowedFailure{Err: &flow.StepError{Step: name(n), Kind: runs.KindBranch, Err: err}})
	}
	return list, nil
}

// call runs the flow named by call (a definition or a Go flow registered on a worker of
// the queue) as a child run with the rendered `with:` as its input (flow.Context.ChildByName);
// detached starts it without waiting (detachedCall). Its output is the child's output.
func (r *runner) call(ctx *flow.Context, f *frame, n *flowdef.Node) (any, error) {
	with, err := r.ev.valueMap(f, n.With)
	if err != nil {
		return nil, fmt.Errorf("%s: with: %w", n.Fields.At("with", n.Pos), err)
	}
	var opts []flow.StepOption
	d, err := timeout(n)
	if err != nil {
		return nil, err
	}
	if d > 0 {
		opts = append(opts, flow.StepTimeout(d))
	}
	if n.OnError != nil && n.OnError.Action != flowdef.ActionFail && n.OnError.Action != "" {
		opts = append(opts, flow.AllowFailure())
	}
	if n.Detached {
		return detachedCall(ctx, n, with, opts)
	}
	raw, err := ctx.ChildByName(name(n), n.Call, with, opts...)
	if err != nil {
		return nil, err
	}
	return jsonValue(raw), nil
}

// detachedCall starts the child of a detached call and does not wait for it to end: as
// flow.Detached says, the Child step runs in a branch (flow.Async) the run never waits
// for, and the node waits only until Temporal started the child, so the child outlives
// the node (and the run). Its output is {run_id: the child's ID}; a child that ended or
// failed to start before that gives its output or error.
func detachedCall(ctx *flow.Context, n *flowdef.Node, with map[string]any, opts []flow.StepOption) (any, error) {
	step := name(n)
	before := len(ctx.State().Steps)
	fut := flow.Async(ctx, step, func(bc *flow.Context) (json.RawMessage, error) {
		return bc.ChildByName(step, n.Call, with, append(opts, flow.Detached())...)
	})
	var started string
	if err := workflow.Await(ctx.Workflow(), func() bool {
		steps := ctx.State().Steps
		for i := len(steps) - 1; i >= before; i-- {
			if s := steps[i]; s.Kind == runs.KindChild && s.Name == step && s.Child != nil && s.Child.RunID != "" {
				started = s.Child.ID
				return true
			}
		}
		return fut.IsReady()
	}); err != nil {
		return nil, err
	}
	if started == "" {
		raw, err := fut.Get(ctx)
		if err != nil {
			return nil, err
		}
		return jsonValue(raw), nil
	}
	return map[string]any{"run_id": started}, nil
}

// providerItems lists a foreach's items from its registered item provider (flow.Context.Items,
// recorded as the step "<id>-items"): params.scope is the scope, the other params
// (rendered, as strings) the filter. Each item is a map of its id, type, ref and
// depends_on, plus its context values (item.<key>).
func (r *runner) providerItems(ctx *flow.Context, f *frame, n *flowdef.Node) ([]any, []string, error) {
	fe := n.Foreach
	params := map[string]string{}
	for _, k := range sortedKeys(fe.Params) {
		s, ok := fe.Params[k].(string)
		if !ok {
			b, err := json.Marshal(fe.Params[k])
			if err != nil {
				return nil, nil, fmt.Errorf("%s: params.%s: %w", fe.Fields.At("params", fe.Pos), k, err)
			}
			s = string(b)
		}
		v, err := r.ev.render(f, s)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: params.%s: %w", fe.Fields.At("params", fe.Pos), k, err)
		}
		params[k] = v
	}
	scope := params["scope"]
	delete(params, "scope")
	list, err := ctx.Items(name(n)+"-items", fe.Provider, scope, params)
	if err != nil {
		return nil, nil, err
	}
	items := make([]any, len(list))
	ids := make([]string, len(list))
	for i, it := range list {
		m := map[string]any{}
		for _, k := range sortedKeys(it.Context) {
			m[k] = it.Context[k]
		}
		m["id"], m["type"], m["ref"] = it.ID, it.Type, it.Ref
		deps := make([]any, len(it.DependsOn))
		for j, d := range it.DependsOn {
			deps[j] = d
		}
		m["depends_on"] = deps
		items[i], ids[i] = m, it.ID
	}
	return items, ids, nil
}
