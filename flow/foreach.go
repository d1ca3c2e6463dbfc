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
	group := ctx.branch(fctx, name)
	width := opts.MaxParallel
	if width <= 0 || width > len(items) {
		width = len(items)
	}
	state := make([]itemState, len(items))
	perr := &ParallelError{Group: name, what: "foreach"}
	running, halted := 0, false
	ordered := opts.Ordered || opts.OnItemFail == SkipDependents
	ready := func(i int) bool {
		if !ordered || opts.DependsOn == nil {
			return true
		}
		for _, d := range opts.DependsOn(i) {
			if d >= 0 && d < len(items) && d != i && state[d] != itemDone && state[d] != itemFailed && state[d] != itemSkipped && state[d] != itemCancelled {
				return false
			}
		}
		return true
	}
	// failedDep reports whether item i depends, directly or through others, on a failed
	// (or skipped) item.
	var failedDep func(i int, seen map[int]bool) bool
	failedDep = func(i int, seen map[int]bool) bool {
		if opts.DependsOn == nil || seen[i] {
			return false
		}
		seen[i] = true
		for _, d := range opts.DependsOn(i) {
			if d < 0 || d >= len(items) || d == i {
				continue
			}
			if state[d] == itemFailed || state[d] == itemSkipped || failedDep(d, seen) {
				return true
			}
		}
		return false
	}
	skip := func(i int) {
		state[i] = itemSkipped
		n := itemName(opts, i)
		perr.Skipped = append(perr.Skipped, n)
		group.Skip(n, "an item it depends on failed")
	}
	sel := workflow.NewSelector(fctx)
	start := func(i int) {
		state[i] = itemRunning
		running++
		n := itemName(opts, i)
		var fut workflow.Future
		if perItem {
			f := Async(group, n, func(c *Context) (O, error) { return fn(c, i, items[i]) })
			fut = f.fut
		} else {
			f, set := workflow.NewFuture(fctx)
			workflow.Go(fctx, func(gctx workflow.Context) {
				out, err := fn(group.withWorkflow(gctx), i, items[i])
				set.Set(out, err)
			})
			fut = f
		}
		sel.AddFuture(fut, func(f workflow.Future) {
			running--
			err := f.Get(ctx.wctx, &results[i])
			switch {
			case err == nil || onlyAllowed(err): // an allowed failure does not fail the item
				state[i] = itemDone
			case isCancellation(err) && (halted || perr.First != nil):
				state[i] = itemCancelled
				perr.Cancelled = append(perr.Cancelled, n)
			default:
				state[i] = itemFailed
				perr.Failed = append(perr.Failed, n)
				if perr.First == nil {
					perr.First = err
				}
				if opts.OnItemFail == Halt {
					halted = true
					cancel()
				}
			}
		})
	}
	next := 0
	for {
		// Start what may start, in input order.
		for i := next; i < len(items) && running < width && !halted; i++ {
			if state[i] != itemWaiting {
				continue
			}
			if opts.OnItemFail == SkipDependents && failedDep(i, map[int]bool{}) {
				skip(i)
				continue
			}
			if !ready(i) {
				continue
			}
			start(i)
		}
		for next < len(items) && state[next] != itemWaiting {
			next++
		}
		if running == 0 {
			if next >= len(items) || halted {
				break
			}
			// Nothing runs and nothing can start: the rest wait on items that will never end.
			for i := next; i < len(items); i++ {
				if state[i] == itemWaiting {
					skip(i)
				}
			}
			break
		}
		sel.Select(fctx)
	}
	if halted {
		for i := range items {
			if state[i] == itemWaiting {
				state[i] = itemCancelled
				perr.Cancelled = append(perr.Cancelled, itemName(opts, i))
			}
		}
	}
	if perr.First != nil {
		return results, perr
	}
	if len(perr.Skipped) > 0 {
		perr.First = fmt.Errorf("%d items skipped", len(perr.Skipped))
		return results, perr
	}
	return results, nil
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
