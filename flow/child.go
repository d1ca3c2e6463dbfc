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

	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/searchattr"
	"github.com/gateflow/gateflow/internal/startplan"
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
	held := ctx.holdWhilePaused(false) // run_pause.go: no new child while the run is paused
	s := ctx.begin(name, runs.KindChild)
	switch {
	case held != nil:
		return out, s.refuse(held)
	case f == nil || f.Err() != nil:
		return out, s.refuse(fmt.Errorf("child flow: %v", f.Err()))
	case name == "":
		return out, s.refuse(errors.New("step name is empty"))
	}
	if err := ctx.countStep(name); err != nil { // run_limits.go: the MaxSteps guard
		return out, s.refuse(err)
	}
	if s.planned("child run of " + f.Name()) {
		return out, nil
	}
	cs, err := ctx.planChild(s, f.Name(), f.info, ctx.options(opts))
	if err != nil {
		return out, s.refuse(err)
	}
	fut := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(cs.cctx, cs.cwo), f.Name(), in)
	var exec workflow.Execution
	if err := fut.GetChildWorkflowExecution().Get(ctx.wctx, &exec); err == nil {
		s.rec().Child.RunID = exec.RunID
	}
	err = awaitChild(ctx, fut, cs.o.detached, &out)
	return out, ctx.endChild(s, cs, err)
}

// childStart is how a child run starts: its step options, its ID, the key and whether
// its money was reserved, and its workflow context and options.
type childStart struct {
	o        stepOptions
	id       string
	key      string
	reserved bool
	cctx     workflow.Context
	cwo      workflow.ChildWorkflowOptions
}

// planChild runs the guards of the child step s of the flow flowName and reserves its
// money, and records the child as running: what follows starts it.
func (c *Context) planChild(s *step, flowName string, fi core.WorkflowInfo, o stepOptions) (childStart, error) {
	rt, st := c.run, c.run.state
	name := s.name
	depth := st.Depth + 1
	if err := rt.setup.guards.checkDepth(name, depth); err != nil {
		return childStart{}, err
	}
	if err := rt.setup.guards.checkFanOut(name, rt.children.count+1); err != nil {
		return childStart{}, err
	}
	if err := s.checkWallTime(); err != nil {
		return childStart{}, err
	}
	queue, err := childQueue(c, o)
	if err != nil {
		return childStart{}, err
	}
	if err := c.checkServed(flowName, queue); err != nil {
		return childStart{}, err
	}
	rt.children.count++
	cs := childStart{o: o, key: s.rec().ActivityID}
	var capUSD string
	if capUSD, cs.reserved, err = c.reserveChild(cs.key, o); err != nil {
		return childStart{}, err
	}
	info := workflow.GetInfo(c.wctx)
	cs.id = info.WorkflowExecution.ID + "/" + s.rec().ActivityID
	createdBy, _ := workflow.GetTypedSearchAttributes(c.wctx).GetKeyword(searchattr.CreatedByKey)
	pi := parentInfo{
		ParentID: info.WorkflowExecution.ID, ParentRunID: info.WorkflowExecution.RunID, Step: name,
		Depth: depth, Guards: rt.setup.guards, TreeTokens: rt.children.treeTokens(rt.state), StartedAt: st.StartedAt, CreatedBy: createdBy,
		CapUSD: capUSD,
	}
	// A detached child is started on a disconnected context, so cancelling the parent does
	// not cancel it, and abandoned when the parent closes.
	closePolicy := enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL
	cs.cctx = c.wctx
	if o.detached {
		cs.cctx, _ = workflow.NewDisconnectedContext(c.wctx)
		closePolicy = enumspb.PARENT_CLOSE_POLICY_ABANDON
	}
	cs.cwo = workflow.ChildWorkflowOptions{
		WorkflowID:            cs.id,
		ParentClosePolicy:     closePolicy,
		WaitForCancellation:   true,
		Memo:                  map[string]any{protocol.MemoParent: pi},
		TypedSearchAttributes: temporal.NewSearchAttributes(childAttributes(createdBy, fi)...),
		StaticSummary:         fmt.Sprintf("%s: child %s of %s", flowName, name, info.WorkflowExecution.ID),
	}
	if left, limited := rt.wallTimeLeft(s.began); limited {
		cs.cwo.WorkflowExecutionTimeout = left
	}
	if o.timeout > 0 {
		cs.cwo.WorkflowRunTimeout = o.timeout
	}
	if o.childTagsSet {
		cs.cwo.TaskQueue = queue
	}
	s.rec().Child = &runs.Child{ID: cs.id, Workflow: flowName, Status: runs.StatusRunning}
	rt.publish()
	return cs, nil
}

// childAttributes are the search attributes a child run starts with: running, and the
// parent's creator, the flow's category and version when set.
func childAttributes(createdBy string, fi core.WorkflowInfo) []temporal.SearchAttributeUpdate {
	sa := []temporal.SearchAttributeUpdate{searchattr.StatusKey.ValueSet(string(runs.StatusRunning))}
	if createdBy != "" {
		sa = append(sa, searchattr.CreatedByKey.ValueSet(createdBy))
	}
	if fi.Category != "" {
		sa = append(sa, searchattr.CategoryKey.ValueSet(fi.Category))
	}
	if fi.Version != "" {
		sa = append(sa, searchattr.VersionKey.ValueSet(fi.Version))
	}
	return sa
}

// endChild records how the child step s ended (err from its run), charges its cost and
// tokens, and returns the error the handler sees.
func (c *Context) endChild(s *step, cs childStart, err error) error {
	rt, st := c.run, c.run.state
	rec := s.rec().Child
	rt.children.collectReports(c.wctx)
	childCost := decimal.Zero
	if rep, ok := rt.children.reports[cs.id]; ok {
		rec.Status, rec.CostUSD, rec.Tokens, rec.Steps, rec.Error = rep.Status, rep.CostUSD, rep.Tokens, rep.Steps, rep.Error
		chargeStep(st, s.i, rep.CostUSD, rep.Tokens)
		rt.children.tokens = addTokens(rt.children.tokens, rep.Tokens)
		childCost = rep.CostUSD
	} else if err == nil {
		rec.Status = runs.StatusCompleted
	} else if !cs.o.detached || !isCancellation(err) {
		// (The detached child of a cancelled parent goes on: it stays running here.)
		rec.Status = statusOf(err, 0)
		rec.Error = errorMessage(err)
	}
	// The child charged the monthly ledgers itself; here its spend settles the parent's cap.
	berr := c.settleCost(cs.key, s.name, cs.reserved, childCost)
	end := s.now()
	if err == nil && berr != nil {
		err = berr
	}
	if err != nil {
		status := runs.StepFailed
		if isCancellation(err) {
			status = runs.StepCancelled
		}
		s.close(end, status, 1, errorMessage(err), "", nil)
		if status == runs.StepCancelled && cs.o.detached {
			s.rec().Error = "cancelled; the detached child run " + cs.id + " goes on"
		}
		var serr error = s.err(err)
		if status == runs.StepFailed && cs.o.allowFailure {
			serr = s.allowFailure(s.err(err))
		}
		rt.publish()
		if status == runs.StepFailed {
			s.failed()
		}
		return serr
	}
	s.close(end, runs.StepCompleted, 1, "", fmt.Sprintf("%s %s", rec.ID, rec.Status), nil)
	if rec.Status == runs.StatusWarning {
		st.AllowedFailures++
	}
	rt.publish()
	if gerr := rt.setup.guards.checkTokens(s.name, rt.children.treeTokens(rt.state)); gerr != nil && rec.Tokens.Total() > 0 {
		return s.err(gerr)
	}
	return nil
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
