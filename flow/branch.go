package flow

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gateflow/gateflow/runs"

	"go.temporal.io/sdk/workflow"
)

// Future is the pending result of a branch started with Async or Context.Go. Read it with
// Get; Cancel stops the branch (its steps in flight are cancelled, a shell step's process
// group killed).
type Future[T any] struct {
	name   string
	fut    workflow.Future
	cancel workflow.CancelFunc
}

// Get waits for the branch to finish and returns its result. A branch that failed
// returns its error (a *StepError naming the branch, wrapping what the branch returned);
// a branch that returned only allowed failures (*AllowedFailure) completed, and Get
// returns them as they are.
func (f *Future[T]) Get(ctx *Context) (T, error) {
	var out T
	err := f.fut.Get(ctx.wctx, &out)
	return out, err
}

// Cancel cancels the branch; Get then returns its cancellation (or its result, if it had
// finished).
func (f *Future[T]) Cancel() { f.cancel() }

// IsReady reports whether the branch has finished, without waiting.
func (f *Future[T]) IsReady() bool { return f.fut.IsReady() }

// Async runs fn as the branch name, concurrently with the rest of the handler, and
// returns its Future at once. A branch may run any sequence of steps, children and waits
// for people; its steps are recorded under the branch ("review/approve"), and the branch
// itself is a step of kind branch that ends when fn returns. Branches run on Temporal's
// deterministic coroutines (workflow.Go): they interleave only where they wait, in the
// same order on every replay. Cancelling the run cancels its branches.
func Async[T any](ctx *Context, name string, fn func(*Context) (T, error)) *Future[T] {
	bctx, cancel := workflow.WithCancel(ctx.wctx)
	fut, set := workflow.NewFuture(bctx)
	f := &Future[T]{name: name, fut: fut, cancel: cancel}
	bc := ctx.branch(bctx, name)
	s := ctx.begin(name, runs.KindBranch)
	ctx.run.publish()
	if err := checkBranchName(name); err != nil {
		s.close(s.now(), runs.StepFailed, 0, err.Error(), "", nil)
		set.SetError(s.err(err))
		return f
	}
	if err := ctx.countStep(name); err != nil { // run_limits.go: the MaxSteps guard
		set.SetError(s.fail(s.now(), runs.StepFailed, err))
		return f
	}
	workflow.Go(bctx, func(gctx workflow.Context) {
		out, err := fn(bc.withWorkflow(gctx))
		end := runNow(gctx)
		switch {
		case err == nil:
			s.close(end, runs.StepCompleted, 0, "", "", nil)
			set.Set(out, nil)
		case onlyAllowed(err):
			// Only allowed failures (AllowFailure steps): the branch completed.
			s.close(end, runs.StepCompleted, 0, "", "", nil)
			set.Set(out, err)
		case isCancellation(err):
			s.close(end, runs.StepCancelled, 0, errorMessage(err), "", nil)
			set.Set(out, s.err(err))
		default:
			s.close(end, runs.StepFailed, 0, errorMessage(err), "", nil)
			set.Set(out, s.err(err))
		}
		ctx.run.publish()
	})
	return f
}

// Go runs fn as the branch name, concurrently with the rest of the handler (see Async).
func (c *Context) Go(name string, fn func(*Context) error) *Future[struct{}] {
	return Async(c, name, func(bc *Context) (struct{}, error) { return struct{}{}, fn(bc) })
}

// Race runs each of fns as a branch of the group name ("name/1", "name/2", ...), returns
// the index and result of the first to finish, and cancels the others (waiting until they
// have stopped, so their processes are gone). The first to finish wins whether it
// succeeded or failed; its error is returned as it is.
func Race[T any](ctx *Context, name string, fns ...func(*Context) (T, error)) (int, T, error) {
	var zero T
	if len(fns) == 0 {
		return -1, zero, &StepError{Step: name, Kind: runs.KindBranch, Err: errors.New("race of no branches")}
	}
	if err := ctx.run.setup.guards.checkFanOut(name, len(fns)); err != nil {
		return -1, zero, &StepError{Step: name, Kind: runs.KindBranch, Err: err}
	}
	futures := make([]*Future[T], len(fns))
	for i, fn := range fns {
		futures[i] = Async(ctx, fmt.Sprintf("%s/%d", name, i+1), fn)
	}
	winner := -1
	sel := workflow.NewSelector(ctx.wctx)
	for i, f := range futures {
		sel.AddFuture(f.fut, func(workflow.Future) {
			if winner < 0 {
				winner = i
			}
		})
	}
	sel.Select(ctx.wctx)
	for i, f := range futures {
		if i != winner {
			f.Cancel()
		}
	}
	for i, f := range futures {
		if i != winner {
			// The losers' cancellation is expected; only their ending is waited for.
			if _, err := f.Get(ctx); err != nil && !isCancellation(err) {
				ctx.Logger().Info("race: a losing branch ended with an error", "branch", f.name, "error", err)
			}
		}
	}
	out, err := futures[winner].Get(ctx)
	return winner, out, err
}

// branch is a copy of c for the branch name: steps inside are recorded under it.
func (c *Context) branch(wctx workflow.Context, name string) *Context {
	d := *c
	d.wctx = wctx
	if c.scope != "" {
		d.scope = c.scope + "/" + name
	} else {
		d.scope = name
	}
	return &d
}

func checkBranchName(name string) error {
	if strings.TrimSpace(name) == "" {
		return errors.New("branch name is empty")
	}
	return nil
}
