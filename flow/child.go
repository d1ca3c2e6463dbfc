package flow

import (
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/searchattr"
)

// Names used between parent and child runs.
const (
	// MemoParent is the Memo key a parent gives its child: depth, guards, tree usage.
	MemoParent = "gateflow.parent"
	// SignalChildReport carries a child's ChildReport to its parent when the child ends.
	SignalChildReport = "gateflow.child"
)

// parentInfo is what a child run learns from its parent.
type parentInfo struct {
	ParentID    string    `json:"parent_id"`
	ParentRunID string    `json:"parent_run_id"`
	Step        string    `json:"step"`
	Depth       int       `json:"depth"`
	Guards      Guards    `json:"guards"`
	TreeTokens  int64     `json:"tree_tokens"`
	StartedAt   time.Time `json:"started_at"`
	CreatedBy   string    `json:"created_by,omitempty"`
	// CapUSD is the child's money cap: what the parent had left, or less.
	CapUSD string `json:"cap_usd,omitempty"`
}

// ChildReport is what a child run sends its parent when it ends.
type ChildReport struct {
	ID      string          `json:"id"`
	RunID   string          `json:"run_id"`
	Status  Status          `json:"status"`
	CostUSD decimal.Decimal `json:"cost_usd"`
	Tokens  Tokens          `json:"tokens"`
	Steps   []StepRecord    `json:"steps"`
	Error   string          `json:"error,omitempty"`
}

func readParent(wctx workflow.Context) *parentInfo {
	p, ok := workflow.GetInfo(wctx).Memo.GetFields()[MemoParent]
	if !ok {
		return nil
	}
	var pi parentInfo
	if err := converter.GetDefaultDataConverter().FromPayload(p, &pi); err != nil {
		workflow.GetLogger(wctx).Warn("decode parent info", "error", err)
		return nil
	}
	return &pi
}

// reportToParent tells the parent (if any) how the run ended. The signal is in the
// parent's history before the child's completion, so the parent has it when its child
// step returns.
func (rt *runner) reportToParent(wctx workflow.Context) {
	if rt.parent == nil {
		return
	}
	info := workflow.GetInfo(wctx)
	rep := ChildReport{
		ID: info.WorkflowExecution.ID, RunID: info.WorkflowExecution.RunID, Status: rt.state.Status,
		CostUSD: rt.state.CostUSD, Tokens: rt.state.Tokens, Steps: rt.state.Steps, Error: rt.state.Error,
	}
	err := workflow.SignalExternalWorkflow(wctx, rt.parent.ParentID, rt.parent.ParentRunID, SignalChildReport, rep).Get(wctx, nil)
	if err != nil {
		workflow.GetLogger(wctx).Warn("report to parent run", "parent", rt.parent.ParentID, "error", err)
	}
}

// Child runs the defined flow f as a child run (a Temporal child workflow) for the step
// name and returns its output. The child gets the parent's guards, and its steps, status,
// cost and tokens show in the parent's step record; its cost and tokens count for the
// parent. Cancelling the parent cancels the child.
func Child[I, O any](ctx *Context, name string, f *Flow[I, O], in I, opts ...StepOption) (O, error) {
	var out O
	rt := ctx.run
	st := rt.state
	now := workflow.Now(ctx.wctx)
	i := st.beginStep(name, KindChild, now)
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
	if err := rt.guards.checkFanOut(name, rt.children+1); err != nil {
		return fail(err)
	}
	if err := rt.guards.checkWallTime(name, st.StartedAt, now); err != nil {
		return fail(err)
	}
	rt.children++
	o := ctx.options(opts)
	key := st.Steps[i].ActivityID
	var capUSD string
	reserved := false
	if cc := rt.ledger.ChildCap(); cc.Set {
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
		Depth: depth, Guards: rt.guards, TreeTokens: rt.treeTokens(), StartedAt: st.StartedAt, CreatedBy: createdBy,
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
		Memo:                  map[string]any{MemoParent: pi},
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
	rt.collectReports(ctx.wctx)
	childCost := decimal.Zero
	if rep, ok := rt.childReports[childID]; ok {
		rec.Status, rec.CostUSD, rec.Tokens, rec.Steps, rec.Error = rep.Status, rep.CostUSD, rep.Tokens, rep.Steps, rep.Error
		st.charge(i, rep.CostUSD, rep.Tokens)
		rt.childTokens = rt.childTokens.add(rep.Tokens)
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
	if gerr := rt.guards.checkTokens(name, rt.treeTokens()); gerr != nil && rec.Tokens.Total() > 0 {
		return out, &StepError{Step: name, Kind: KindChild, Err: gerr}
	}
	return out, nil
}

// collectReports takes the child reports that have arrived.
func (rt *runner) collectReports(wctx workflow.Context) {
	ch := workflow.GetSignalChannel(wctx, SignalChildReport)
	for {
		var rep ChildReport
		if !ch.ReceiveAsync(&rep) {
			return
		}
		rt.childReports[rep.ID] = rep
	}
}
