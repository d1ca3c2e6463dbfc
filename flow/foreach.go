package flow

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/internal/depgraph"

	"go.temporal.io/sdk/workflow"
)

// ItemFailPolicy says what a failed fan-out item does to the others.
type ItemFailPolicy int

// Item fail policies.
const (
	// Halt (the default) cancels the items in flight at the first failure and starts no
	// more; ForEach returns that failure.
	Halt ItemFailPolicy = iota
	// Continue runs every item; ForEach returns the results with the first failure and
	// the list of failed items. Halt and Continue are step routes too (see Route).
	Continue
	// SkipDependents skips the items that depend (ForEachOptions.DependsOn), directly or
	// through others, on a failed item, and runs the rest.
	SkipDependents
)

// ForEachOptions adjust a fan-out.
type ForEachOptions struct {
	// MaxParallel bounds the items in flight at once; 0 runs them all at once.
	MaxParallel int
	// Ordered starts an item only after the items it depends on (DependsOn) have
	// finished; without it items start in input order as soon as a slot is free.
	Ordered bool
	// OnItemFail is what a failed item does to the others (default Halt).
	OnItemFail ItemFailPolicy
	// ItemName names item i in the step record and, for ForEachChild, in its child run's ID
	// ("<run>/<name>/<item>"); default: its position from 1.
	ItemName func(i int) string
	// DependsOn lists the positions of the items item i depends on, for Ordered and
	// SkipDependents.
	DependsOn func(i int) []int
}

// ForEach runs fn for each item, concurrently up to opts.MaxParallel, as the fan-out name,
// and returns the results in input order. Each item is a branch ("name/3"; see Async)
// whose steps are recorded under it; fn gets the item's position and value. Over []Item
// (from Items), items are named by their IDs and follow their DependsOn. A fan-out with
// more items than the fan-out guard allows starts none of them. When items fail, the error
// is a *ParallelError listing them (and the items cancelled or skipped because of them);
// the results of the items that completed are returned with it.
func ForEach[T, O any](ctx *Context, name string, items []T, fn func(*Context, int, T) (O, error), opts ForEachOptions) ([]O, error) {
	return forEach(ctx, name, items, fn, itemOptions(items, opts), true)
}

// ForEachChild runs the flow f once per input as child runs of the fan-out name, with IDs
// "<run>/<name>/<item>", concurrently up to opts.MaxParallel, and returns their outputs in
// input order. Children get the parent's guards and share what is left of its budget
// (each reserves its part as Child does); their steps, status and cost show in the
// parent's record.
//
// Past 1,000 inputs (without Ordered, DependsOn or SkipDependents) the items are started
// by a fan-out runner, a child run of the parent that continues as new every 1,000
// items: the parent records the fan-out as one child step (with the items' cost and
// tokens together), and no history grows with the number of items.
func ForEachChild[I, O any](ctx *Context, name string, f *Flow[I, O], inputs []I, opts ForEachOptions, stepOpts ...StepOption) ([]O, error) {
	if f != nil && f.Err() == nil && runnerFits(len(inputs), opts) && !ctx.run.setup.plan {
		return forEachChildByRunner(ctx, name, f, inputs, opts, stepOpts)
	}
	item := func(c *Context, i int, in I) (O, error) {
		return Child(c, itemName(opts, i), f, in, stepOpts...)
	}
	return forEach(ctx, name, inputs, item, opts, false)
}

func itemName(opts ForEachOptions, i int) string {
	if opts.ItemName != nil {
		if n := opts.ItemName(i); n != "" {
			return n
		}
	}
	return strconv.Itoa(i + 1)
}

// itemState is where one item of a fan-out stands.
type itemState int

const (
	itemWaiting itemState = iota
	itemRunning
	itemDone
	itemFailed
	itemSkipped
	itemCancelled
)

// forEach is ForEach; perItem records each item as a branch of its own (ForEachChild's
// items are their child steps).
func forEach[T, O any](ctx *Context, name string, items []T, fn func(*Context, int, T) (O, error), opts ForEachOptions, perItem bool) ([]O, error) {
	results := make([]O, len(items))
	if len(items) == 0 {
		return results, nil
	}
	if err := ctx.run.setup.guards.checkFanOut(name, len(items)); err != nil {
		return nil, &StepError{Step: name, Kind: runs.KindBranch, Err: err}
	}
	if err := checkBranchName(name); err != nil {
		return nil, &StepError{Step: name, Kind: runs.KindBranch, Err: err}
	}
	if err := checkItemCycle(len(items), opts); err != nil {
		return nil, &StepError{Step: name, Kind: runs.KindBranch, Err: err}
	}
	fctx, cancel := workflow.WithCancel(ctx.wctx)
	defer cancel()
	fo := &fanOut{opts: opts, n: len(items), group: ctx.branch(fctx, name), sel: workflow.NewSelector(fctx), cancel: cancel,
		state: make([]itemState, len(items)), perr: &ParallelError{Group: name, what: "foreach"}}
	launch := func(i int, n string) workflow.Future {
		if perItem {
			return Async(fo.group, n, func(c *Context) (O, error) { return fn(c, i, items[i]) }).fut
		}
		f, set := workflow.NewFuture(fctx)
		workflow.Go(fctx, func(gctx workflow.Context) {
			out, err := fn(fo.group.withWorkflow(gctx), i, items[i])
			set.Set(out, err)
		})
		return f
	}
	fo.run(fctx, launch, func(i int, f workflow.Future) error { return f.Get(ctx.wctx, &results[i]) })
	if err := fo.err(); err != nil {
		return results, err
	}
	return results, nil
}

// fanOut schedules the items of a ForEach: which may start (MaxParallel, Ordered,
// DependsOn), which are skipped, and what a failed item does to the others.
type fanOut struct {
	opts    ForEachOptions
	n       int
	group   *Context
	sel     workflow.Selector
	cancel  workflow.CancelFunc
	state   []itemState
	perr    *ParallelError
	running int
	halted  bool
}

// ready reports whether item i may start: unordered, or the items it depends on ended.
func (fo *fanOut) ready(i int) bool {
	if !(fo.opts.Ordered || fo.opts.OnItemFail == SkipDependents) || fo.opts.DependsOn == nil {
		return true
	}
	for _, d := range fo.opts.DependsOn(i) {
		if d >= 0 && d < fo.n && d != i && fo.state[d] != itemDone && fo.state[d] != itemFailed && fo.state[d] != itemSkipped && fo.state[d] != itemCancelled {
			return false
		}
	}
	return true
}

// failedDep reports whether item i depends, directly or through others, on a failed (or
// skipped) item.
func (fo *fanOut) failedDep(i int, seen map[int]bool) bool {
	if fo.opts.DependsOn == nil || seen[i] {
		return false
	}
	seen[i] = true
	for _, d := range fo.opts.DependsOn(i) {
		if d < 0 || d >= fo.n || d == i {
			continue
		}
		if fo.state[d] == itemFailed || fo.state[d] == itemSkipped || fo.failedDep(d, seen) {
			return true
		}
	}
	return false
}

// skip records item i as skipped.
func (fo *fanOut) skip(i int) {
	fo.state[i] = itemSkipped
	n := itemName(fo.opts, i)
	fo.perr.Skipped = append(fo.perr.Skipped, n)
	fo.group.Skip(n, "an item it depends on failed")
}

// start starts item i (launch, given its name) and waits for it on the selector; get reads its result.
func (fo *fanOut) start(i int, launch func(int, string) workflow.Future, get func(int, workflow.Future) error) {
	fo.state[i] = itemRunning
	fo.running++
	n := itemName(fo.opts, i)
	fo.sel.AddFuture(launch(i, n), func(f workflow.Future) {
		fo.running--
		err := get(i, f)
		switch {
		case err == nil || onlyAllowed(err): // an allowed failure does not fail the item
			fo.state[i] = itemDone
		case isCancellation(err) && (fo.halted || fo.perr.First != nil):
			fo.state[i] = itemCancelled
			fo.perr.Cancelled = append(fo.perr.Cancelled, n)
		default:
			fo.state[i] = itemFailed
			fo.perr.Failed = append(fo.perr.Failed, n)
			if fo.perr.First == nil {
				fo.perr.First = err
			}
			if fo.opts.OnItemFail == Halt {
				fo.halted = true
				fo.cancel()
			}
		}
	})
}

// run starts the items that may start, in input order, and waits for them until every
// item ended, was skipped, or the fan-out halted.
func (fo *fanOut) run(fctx workflow.Context, launch func(int, string) workflow.Future, get func(int, workflow.Future) error) {
	width := fo.opts.MaxParallel
	if width <= 0 || width > fo.n {
		width = fo.n
	}
	next := 0
	for {
		for i := next; i < fo.n && fo.running < width && !fo.halted; i++ {
			if fo.state[i] != itemWaiting {
				continue
			}
			if fo.opts.OnItemFail == SkipDependents && fo.failedDep(i, map[int]bool{}) {
				fo.skip(i)
				continue
			}
			if !fo.ready(i) {
				continue
			}
			fo.start(i, launch, get)
		}
		for next < fo.n && fo.state[next] != itemWaiting {
			next++
		}
		if fo.running == 0 {
			if next >= fo.n || fo.halted {
				break
			}
			// Nothing runs and nothing can start: the rest wait on items that will never end.
			for i := next; i < fo.n; i++ {
				if fo.state[i] == itemWaiting {
					fo.skip(i)
				}
			}
			break
		}
		fo.sel.Select(fctx)
	}
}

// err is the fan-out's *ParallelError (the items a halt left waiting are cancelled), or
// nil when every item ran and none failed.
func (fo *fanOut) err() error {
	if fo.halted {
		for i := range fo.n {
			if fo.state[i] == itemWaiting {
				fo.state[i] = itemCancelled
				fo.perr.Cancelled = append(fo.perr.Cancelled, itemName(fo.opts, i))
			}
		}
	}
	if fo.perr.First != nil {
		return fo.perr
	}
	if len(fo.perr.Skipped) > 0 {
		fo.perr.First = fmt.Errorf("%d items skipped", len(fo.perr.Skipped))
		return fo.perr
	}
	return nil
}

// checkItemCycle refuses a fan-out whose items depend on each other in a cycle (Ordered
// or SkipDependents with DependsOn): none of them could ever start. The error names the
// cycle's items.
func checkItemCycle(n int, opts ForEachOptions) error {
	if opts.DependsOn == nil || (!opts.Ordered && opts.OnItemFail != SkipDependents) {
		return nil
	}
	deps := make([][]int, n)
	for i := range deps {
		for _, d := range opts.DependsOn(i) {
			if d >= 0 && d < n && d != i {
				deps[i] = append(deps[i], d)
			}
		}
	}
	c := depgraph.Cycle(deps)
	if c == nil {
		return nil
	}
	names := make([]string, len(c))
	for k, i := range c {
		names[k] = itemName(opts, i)
	}
	return fmt.Errorf("items depend on each other in a cycle: %s", strings.Join(names, " -> "))
}
