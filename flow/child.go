package flow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gateflow/gateflow/runs"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/searchattr"
	"github.com/gateflow/gateflow/internal/startplan"
	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Child runs the defined flow f as a child run (a Temporal child workflow) for the step
// name and returns its output. The child gets the parent's guards, and its steps, status,
// cost and tokens show in the parent's step record; its cost and tokens count for the
// parent. Cancelling the parent cancels the child, unless the step is Detached. The child
// runs on its parent's task queue, or with ChildTags on the workers that have those tags. A
// child of a flow that no worker of its queue serves (not in the queue's catalog, or no
// worker polls its tagged queue) fails the step at once instead of waiting for a worker.
func Child[I, O any](ctx *Context, name string, f *Flow[I, O], in I, opts ...StepOption) (O, error) {
	var out O
	rt := ctx.run
	st := rt.state
	held := ctx.holdWhilePaused(false) // run_pause.go: no new child while the run is paused
	now := runNow(ctx.wctx)
	i := beginStep(st, ctx.scope, name, runs.KindChild, now)
	fail := func(err error) (O, error) {
		endStep(st, i, runNow(ctx.wctx), runs.StepFailed, 0, err.Error(), "", nil)
		rt.publish()
		ctx.onStepFailed(i, "", false)
		return out, &StepError{Step: name, Kind: runs.KindChild, Err: err}
	}
	switch {
	case held != nil:
		return fail(held)
	case f == nil || f.Err() != nil:
		return fail(fmt.Errorf("child flow: %v", f.Err()))
	case name == "":
		return fail(errors.New("step name is empty"))
	}
	if err := ctx.countStep(name); err != nil { // run_limits.go: the MaxSteps guard
		return fail(err)
	}
	if rt.plan {
		endStep(st, i, now, runs.StepPlanned, 0, "", "child run of "+f.Name(), nil)
		rt.publish()
		return out, nil
	}
	depth := st.Depth + 1
	if err := rt.guards.checkDepth(name, depth); err != nil {
		return fail(err)
	}
	if err := rt.guards.checkFanOut(name, rt.children.count+1); err != nil {
		return fail(err)
	}
	if err := rt.guards.checkWallTime(name, st.StartedAt, now); err != nil {
		return fail(err)
	}
	o := ctx.options(opts)
	queue, err := childQueue(ctx, o)
	if err != nil {
		return fail(err)
	}
	if err := ctx.checkServed(f.Name(), queue); err != nil {
		return fail(err)
	}
	rt.children.count++
	key := st.Steps[i].ActivityID
	capUSD, reserved, err := ctx.reserveChild(key, o)
	if err != nil {
		return fail(err)
	}
	info := workflow.GetInfo(ctx.wctx)
	childID := info.WorkflowExecution.ID + "/" + st.Steps[i].ActivityID
	createdBy, _ := workflow.GetTypedSearchAttributes(ctx.wctx).GetKeyword(searchattr.CreatedByKey)
	pi := parentInfo{
		ParentID: info.WorkflowExecution.ID, ParentRunID: info.WorkflowExecution.RunID, Step: name,
		Depth: depth, Guards: rt.guards, TreeTokens: rt.children.treeTokens(rt.state), StartedAt: st.StartedAt, CreatedBy: createdBy,
		CapUSD: capUSD,
	}
	sa := []temporal.SearchAttributeUpdate{searchattr.StatusKey.ValueSet(string(runs.StatusRunning))}
	if createdBy != "" {
		sa = append(sa, searchattr.CreatedByKey.ValueSet(createdBy))
	}
	if f.info.Category != "" {
		sa = append(sa, searchattr.CategoryKey.ValueSet(f.info.Category))
	}
	if f.info.Version != "" {
		sa = append(sa, searchattr.VersionKey.ValueSet(f.info.Version))
	}
	// A detached child is started on a disconnected context, so cancelling the parent does
	// not cancel it, and abandoned when the parent closes.
	cctx, closePolicy := ctx.wctx, enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL
	if o.detached {
		cctx, _ = workflow.NewDisconnectedContext(ctx.wctx)
		closePolicy = enumspb.PARENT_CLOSE_POLICY_ABANDON
	}
	cwo := workflow.ChildWorkflowOptions{
		WorkflowID:            childID,
		ParentClosePolicy:     closePolicy,
		WaitForCancellation:   true,
		Memo:                  map[string]any{protocol.MemoParent: pi},
		TypedSearchAttributes: temporal.NewSearchAttributes(sa...),
		StaticSummary:         fmt.Sprintf("%s: child %s of %s", f.Name(), name, info.WorkflowExecution.ID),
	}
	if left, limited := rt.wallTimeLeft(now); limited {
		cwo.WorkflowExecutionTimeout = left
	}
	if o.timeout > 0 {
		cwo.WorkflowRunTimeout = o.timeout
	}
	if o.childTagsSet {
		cwo.TaskQueue = queue
	}
	st.Steps[i].Child = &runs.Child{ID: childID, Workflow: f.Name(), Status: runs.StatusRunning}
	rt.publish()

	fut := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(cctx, cwo), f.Name(), in)
	var exec workflow.Execution
	if err := fut.GetChildWorkflowExecution().Get(ctx.wctx, &exec); err == nil {
		st.Steps[i].Child.RunID = exec.RunID
	}
	err = awaitChild(ctx, fut, o.detached, &out)
	rec := st.Steps[i].Child
	rt.children.collectReports(ctx.wctx)
	childCost := decimal.Zero
	if rep, ok := rt.children.reports[childID]; ok {
		rec.Status, rec.CostUSD, rec.Tokens, rec.Steps, rec.Error = rep.Status, rep.CostUSD, rep.Tokens, rep.Steps, rep.Error
		chargeStep(st, i, rep.CostUSD, rep.Tokens)
		rt.children.tokens = addTokens(rt.children.tokens, rep.Tokens)
		childCost = rep.CostUSD
	} else if err == nil {
		rec.Status = runs.StatusCompleted
	} else if !o.detached || !isCancellation(err) {
		// (The detached child of a cancelled parent goes on: it stays running here.)
		rec.Status = statusOf(err, 0)
		rec.Error = errorMessage(err)
	}
	// The child charged the monthly ledgers itself; here its spend settles the parent's cap.
	berr := ctx.settleCost(key, name, reserved, childCost)
	end := runNow(ctx.wctx)
	if err == nil && berr != nil {
		err = berr
	}
	if err != nil {
		status := runs.StepFailed
		if isCancellation(err) {
			status = runs.StepCancelled
		}
		endStep(st, i, end, status, 1, errorMessage(err), "", nil)
		if status == runs.StepCancelled && o.detached {
			st.Steps[i].Error = "cancelled; the detached child run " + childID + " goes on"
		}
		se := &StepError{Step: name, Kind: runs.KindChild, Err: err}
		var serr error = se
		if status == runs.StepFailed && o.allowFailure {
			st.Steps[i].AllowedFailure = true
			st.AllowedFailures++
			serr = ctx.allowedFailure(se)
		}
		rt.publish()
		if status == runs.StepFailed {
			ctx.onStepFailed(i, "", false)
		}
		return out, serr
	}
	endStep(st, i, end, runs.StepCompleted, 1, "", fmt.Sprintf("%s %s", rec.ID, rec.Status), nil)
	if rec.Status == runs.StatusWarning {
		st.AllowedFailures++
	}
	rt.publish()
	if gerr := rt.guards.checkTokens(name, rt.children.treeTokens(rt.state)); gerr != nil && rec.Tokens.Total() > 0 {
		return out, &StepError{Step: name, Kind: runs.KindChild, Err: gerr}
	}
	return out, nil
}

// awaitChild waits for the child's result into out. A detached child was started on a
// disconnected context, so the parent's cancellation is watched here: the step ends
// cancelled and the child goes on.
func awaitChild(ctx *Context, fut workflow.ChildWorkflowFuture, detached bool, out any) error {
	if !detached {
		return fut.Get(ctx.wctx, out)
	}
	var err error
	sel := workflow.NewSelector(ctx.wctx)
	sel.AddFuture(fut, func(f workflow.Future) { err = f.Get(ctx.wctx, out) })
	sel.AddReceive(ctx.wctx.Done(), func(workflow.ReceiveChannel, bool) { err = ctx.wctx.Err() })
	sel.Select(ctx.wctx)
	return err
}

// childQueue is the task queue of a child run: its parent's, or with ChildTags the base
// queue tagged with the child's tags.
func childQueue(ctx *Context, o stepOptions) (string, error) {
	q := workflow.GetInfo(ctx.wctx).TaskQueueName
	if !o.childTagsSet {
		return q, nil
	}
	if err := protocol.ValidateTags(o.childTags); err != nil {
		return "", fmt.Errorf("child tags: %w", err)
	}
	if len(o.childTags) > protocol.MaxWorkerTags {
		return "", fmt.Errorf("%d child tags: a worker has at most %d, so no worker could take the child", len(o.childTags), protocol.MaxWorkerTags)
	}
	return protocol.TaggedQueue(protocol.BaseQueue(q), o.childTags), nil
}

// checkServed fails a child of a flow that no worker of queue serves, so the parent does
// not wait for a worker that never comes. The answer comes from a local activity (recorded
// in history) that reads the queue's catalog and, for a queue other than the parent's, its
// pollers. A flow found served is not checked again in the run. Runs started before the
// check existed replay without it.
func (c *Context) checkServed(flowName, queue string) error {
	if workflow.GetVersion(c.wctx, "gateflow.child-served", workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return nil
	}
	p := c.run.children
	key := flowName + "@" + queue
	if p.served[key] {
		return nil
	}
	q := servedQuery{Workflow: flowName, CatalogQueue: protocol.BaseQueue(queue), TaskQueue: queue,
		Pollers: queue != workflow.GetInfo(c.wctx).TaskQueueName}
	lctx := workflow.WithLocalActivityOptions(c.wctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
		Summary:             fmt.Sprintf("does a worker on %s serve %s?", queue, flowName),
	})
	var ans servedAnswer
	if err := workflow.ExecuteLocalActivity(lctx, checkChildServed, q).Get(lctx, &ans); err != nil {
		if isCancellation(err) {
			return err
		}
		// The check only spares a wait; when it cannot tell, the child starts as before.
		c.Logger().Warn("child flow: cannot tell whether a worker serves it", "flow", flowName, "task_queue", queue, "error", err)
		return nil
	}
	if ans.Unserved != "" {
		return fmt.Errorf("child flow %s: no worker on task queue %s serves it (%s)", flowName, queue, ans.Unserved)
	}
	if p.served == nil {
		p.served = map[string]bool{}
	}
	p.served[key] = true
	return nil
}

// servedQuery asks checkChildServed whether a worker serves Workflow on TaskQueue: whether
// the catalog of CatalogQueue (the base queue) lists it and, with Pollers, whether a worker
// polls TaskQueue (a tagged queue the parent does not run on).
type servedQuery struct {
	Workflow     string `json:"workflow"`
	CatalogQueue string `json:"catalog_queue"`
	TaskQueue    string `json:"task_queue"`
	Pollers      bool   `json:"pollers,omitempty"`
}

// servedAnswer says why no worker serves the flow; empty when one does, or when it cannot
// be told (no catalog: the workers were registered without a flow.Worker).
type servedAnswer struct {
	Unserved string `json:"unserved,omitempty"`
}

// checkChildServed is the local activity of checkServed.
func checkChildServed(ctx context.Context, q servedQuery) (servedAnswer, error) {
	tc := activity.GetClient(ctx)
	if tc == nil {
		return servedAnswer{}, nil // a test environment
	}
	return childServed(ctx, tc, q)
}

func childServed(ctx context.Context, tc client.Client, q servedQuery) (servedAnswer, error) {
	cat, err := startplan.ReadCatalog(ctx, tc, q.CatalogQueue)
	if errors.Is(err, core.ErrNoCatalog) {
		return servedAnswer{}, nil
	}
	if err != nil {
		return servedAnswer{}, err
	}
	if _, ok := cat.Lookup(q.Workflow); !ok {
		return servedAnswer{Unserved: "the catalog of " + q.CatalogQueue + " does not list it"}, nil
	}
	if q.Pollers {
		resp, err := tc.DescribeTaskQueue(ctx, q.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		if err != nil {
			return servedAnswer{}, fmt.Errorf("describe task queue %s: %w", q.TaskQueue, err)
		}
		if len(resp.GetPollers()) == 0 {
			return servedAnswer{Unserved: "no worker with those tags polls it"}, nil
		}
	}
	return servedAnswer{}, nil
}

// reserveChild sets money aside for a child step before its run starts: what the parent
// has left (or the step's CostLimit, when lower), which becomes the child's cap. Without a
// parent cap the child's cap is the CostLimit, if any. reserved says whether money was set
// aside (and must be settled).
func (c *Context) reserveChild(key string, o stepOptions) (capUSD string, reserved bool, err error) {
	cc := c.run.budget.ledger.ChildCap()
	if !cc.Set {
		if o.costLimit != nil {
			return o.costLimit.String(), false, nil
		}
		return "", false, nil
	}
	amount := cc.Amount
	if o.costLimit != nil && o.costLimit.LessThan(amount) {
		amount = *o.costLimit
	}
	if err := c.reserve([]budget.Item{{Key: key, Amount: amount}}); err != nil {
		return "", false, err
	}
	return amount.String(), true, nil
}
