package flow

import (
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/searchattr"
	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Child runs the defined flow f as a child run (a Temporal child workflow) for the step
// name and returns its output. The child gets the parent's guards, and its steps, status,
// cost and tokens show in the parent's step record; its cost and tokens count for the
// parent. Cancelling the parent cancels the child.
func Child[I, O any](ctx *Context, name string, f *Flow[I, O], in I, opts ...StepOption) (O, error) {
	var out O
	rt := ctx.run
	st := rt.state
	now := workflow.Now(ctx.wctx)
	i := st.beginStep(ctx.scope, name, KindChild, now)
	fail := func(err error) (O, error) {
		st.endStep(i, workflow.Now(ctx.wctx), StepFailed, 0, err.Error(), "", nil)
		rt.publish()
		return out, &StepError{Step: name, Kind: KindChild, Err: err}
	}
	switch {
	case f == nil || f.Err() != nil:
		return fail(fmt.Errorf("child flow: %v", f.Err()))
	case name == "":
		return fail(errors.New("step name is empty"))
	}
	if rt.plan {
		st.endStep(i, now, StepPlanned, 0, "", "child run of "+f.Name(), nil)
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
	rt.children.count++
	o := ctx.options(opts)
	key := st.Steps[i].ActivityID
	var capUSD string
	reserved := false
	if cc := rt.budget.ledger.ChildCap(); cc.Set {
		amount := cc.Amount
		if o.costLimit != nil && o.costLimit.LessThan(amount) {
			amount = *o.costLimit
		}
		if err := ctx.reserve([]budget.Item{{Key: key, Amount: amount}}); err != nil {
			return fail(err)
		}
		capUSD, reserved = amount.String(), true
	} else if o.costLimit != nil {
		capUSD = o.costLimit.String()
	}
	info := workflow.GetInfo(ctx.wctx)
	childID := info.WorkflowExecution.ID + "/" + st.Steps[i].ActivityID
	createdBy, _ := workflow.GetTypedSearchAttributes(ctx.wctx).GetKeyword(searchattr.CreatedByKey)
	pi := parentInfo{
		ParentID: info.WorkflowExecution.ID, ParentRunID: info.WorkflowExecution.RunID, Step: name,
		Depth: depth, Guards: rt.guards, TreeTokens: rt.children.treeTokens(rt.state), StartedAt: st.StartedAt, CreatedBy: createdBy,
		CapUSD: capUSD,
	}
	sa := []temporal.SearchAttributeUpdate{searchattr.StatusKey.ValueSet(string(StatusRunning))}
	if createdBy != "" {
		sa = append(sa, searchattr.CreatedByKey.ValueSet(createdBy))
	}
	if f.info.Category != "" {
		sa = append(sa, searchattr.CategoryKey.ValueSet(f.info.Category))
	}
	if f.info.Version != "" {
		sa = append(sa, searchattr.VersionKey.ValueSet(f.info.Version))
	}
	cwo := workflow.ChildWorkflowOptions{
		WorkflowID:            childID,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
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
	st.Steps[i].Child = &ChildRecord{ID: childID, Workflow: f.Name(), Status: StatusRunning}
	rt.publish()

	fut := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx.wctx, cwo), f.Name(), in)
	var exec workflow.Execution
	if err := fut.GetChildWorkflowExecution().Get(ctx.wctx, &exec); err == nil {
		st.Steps[i].Child.RunID = exec.RunID
	}
	err := fut.Get(ctx.wctx, &out)
	rec := st.Steps[i].Child
	rt.children.collectReports(ctx.wctx)
	childCost := decimal.Zero
	if rep, ok := rt.children.reports[childID]; ok {
		rec.Status, rec.CostUSD, rec.Tokens, rec.Steps, rec.Error = rep.Status, rep.CostUSD, rep.Tokens, rep.Steps, rep.Error
		st.charge(i, rep.CostUSD, rep.Tokens)
		rt.children.tokens = rt.children.tokens.add(rep.Tokens)
		childCost = rep.CostUSD
	} else if err != nil {
		rec.Status = statusOf(err, 0)
		rec.Error = errorMessage(err)
	} else {
		rec.Status = StatusCompleted
	}
	// The child charged the monthly ledgers itself; here its spend settles the parent's cap.
	berr := ctx.settleCost(key, name, reserved, childCost)
	end := workflow.Now(ctx.wctx)
	if err == nil && berr != nil {
		err = berr
	}
	if err != nil {
		status := StepFailed
		if isCancellation(err) {
			status = StepCancelled
		}
		st.endStep(i, end, status, 1, errorMessage(err), "", nil)
		if status == StepFailed && o.allowFailure {
			st.Steps[i].AllowedFailure = true
			st.AllowedFailures++
			rt.publish()
			return out, nil
		}
		rt.publish()
		return out, &StepError{Step: name, Kind: KindChild, Err: err}
	}
	st.endStep(i, end, StepCompleted, 1, "", fmt.Sprintf("%s %s", rec.ID, rec.Status), nil)
	if rec.Status == StatusWarning {
		st.AllowedFailures++
	}
	rt.publish()
	if gerr := rt.guards.checkTokens(name, rt.children.treeTokens(rt.state)); gerr != nil && rec.Tokens.Total() > 0 {
		return out, &StepError{Step: name, Kind: KindChild, Err: gerr}
	}
	return out, nil
}
