package flow

import (
	"encoding/json"
	"fmt"

	"github.com/gateflow/gateflow/runs"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/internal/entity"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/searchattr"
)

// fanoutRunnerOver is the number of items past which ForEachChild hands its items to a
// fan-out runner (see entity.FanoutState) instead of starting them as its own children:
// a child costs its parent about five history events, and Temporal's limit is 51,200
// events (50 MB) per history.
var fanoutRunnerOver = 1000

// fanoutPerRun is how many items the runner starts before it continues as new.
var fanoutPerRun = entity.DefaultFanoutPerRun

// runnerFits reports whether ForEachChild may use the runner: it keeps no per-item order
// or dependencies.
func runnerFits(n int, opts ForEachOptions) bool {
	return n > fanoutRunnerOver && !opts.Ordered && opts.DependsOn == nil && opts.OnItemFail != SkipDependents
}

// forEachChildByRunner runs ForEachChild through the fan-out runner: the parent records
// one step (a child run: the runner) whose cost and tokens are the items' together.
func forEachChildByRunner[I, O any](ctx *Context, name string, f *Flow[I, O], inputs []I, opts ForEachOptions, stepOpts []StepOption) ([]O, error) {
	results := make([]O, len(inputs))
	rt := ctx.run
	st := rt.state
	now := runNow(ctx.wctx)
	i := beginStep(st, ctx.scope, name, runs.KindChild, now)
	fail := func(err error) ([]O, error) {
		endStep(st, i, runNow(ctx.wctx), runs.StepFailed, 0, err.Error(), "", nil)
		rt.publish()
		return nil, &StepError{Step: name, Kind: runs.KindChild, Err: err}
	}
	if err := ctx.holdWhilePaused(false); err != nil {
		return fail(err)
	}
	if err := ctx.countStep(name); err != nil { // run_limits.go: the MaxSteps guard
		return fail(err)
	}
	depth := st.Depth + 1
	if err := rt.guards.checkDepth(name, depth); err != nil {
		return fail(err)
	}
	if err := rt.guards.checkFanOut(name, rt.children.count+len(inputs)); err != nil {
		return fail(err)
	}
	o := ctx.options(stepOpts)
	queue, err := childQueue(ctx, o)
	if err != nil {
		return fail(err)
	}
	if err := ctx.checkServed(f.Name(), queue); err != nil {
		return fail(err)
	}
	rt.children.count += len(inputs)
	key := st.Steps[i].ActivityID
	capUSD, reserved, err := ctx.reserveChild(key, o)
	if err != nil {
		return fail(err)
	}
	raw := make([]json.RawMessage, len(inputs))
	names := make([]string, len(inputs))
	for j, in := range inputs {
		b, err := json.Marshal(in)
		if err != nil {
			return fail(fmt.Errorf("encode item %d: %w", j+1, err))
		}
		raw[j], names[j] = b, itemName(opts, j)
	}
	info := workflow.GetInfo(ctx.wctx)
	runnerID := info.WorkflowExecution.ID + "/" + key
	createdBy, _ := workflow.GetTypedSearchAttributes(ctx.wctx).GetKeyword(searchattr.CreatedByKey)
	pi := parentInfo{Step: name, Depth: depth, Guards: rt.guards, TreeTokens: rt.children.treeTokens(st),
		StartedAt: st.StartedAt, CreatedBy: createdBy, CapUSD: capUSD}
	var memo map[string]any
	b, _ := json.Marshal(pi)
	if err := json.Unmarshal(b, &memo); err != nil {
		return fail(fmt.Errorf("encode the items' parent info: %w", err))
	}
	in := entity.FanoutState{
		Flow: f.Name(), TaskQueue: queue, IDPrefix: runnerID, Names: names, Inputs: raw, ParentMemo: memo,
		CreatedBy: createdBy, Category: f.info.Category, Version: f.info.Version,
		MaxParallel: max(opts.MaxParallel, 1), Halt: opts.OnItemFail == Halt, PerRun: fanoutPerRun,
	}
	if opts.MaxParallel <= 0 {
		in.MaxParallel = len(inputs)
	}
	cwo := workflow.ChildWorkflowOptions{
		WorkflowID:          runnerID,
		ParentClosePolicy:   enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
		WaitForCancellation: true,
		StaticSummary:       fmt.Sprintf("fan-out of %d %s runs for %s", len(inputs), f.Name(), info.WorkflowExecution.ID),
	}
	st.Steps[i].Child = &runs.Child{ID: runnerID, Workflow: f.Name(), Status: runs.StatusRunning}
	rt.publish()
	var res entity.FanoutResult
	err = workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx.wctx, cwo), protocol.FanoutWorkflowType, in).Get(ctx.wctx, &res)
	rec := st.Steps[i].Child
	tokens := runs.Tokens{Input: res.InputTokens, Output: res.OutputTokens}
	rec.CostUSD, rec.Tokens = res.CostUSD, tokens
	chargeStep(st, i, res.CostUSD, tokens)
	rt.children.tokens = addTokens(rt.children.tokens, tokens)
	berr := ctx.settleCost(key, name, reserved, res.CostUSD)
	end := runNow(ctx.wctx)
	if err != nil {
		rec.Status, rec.Error = statusOf(err, 0), errorMessage(err)
		status := runs.StepFailed
		if isCancellation(err) {
			status = runs.StepCancelled
		}
		endStep(st, i, end, status, 1, errorMessage(err), "", nil)
		rt.publish()
		return nil, &StepError{Step: name, Kind: runs.KindChild, Err: err}
	}
	perr := &ParallelError{Group: name, what: "foreach"}
	for j := range inputs {
		switch e := res.Errors[j]; {
		case e == "":
			if len(res.Outputs[j]) > 0 {
				if err := json.Unmarshal(res.Outputs[j], &results[j]); err != nil {
					e = "decode the output: " + err.Error()
					perr.Failed = append(perr.Failed, names[j])
					if perr.First == nil {
						perr.First = fmt.Errorf("item %s: %s", names[j], e)
					}
				}
			}
		case e == "cancelled" && res.Halted:
			perr.Cancelled = append(perr.Cancelled, names[j])
		default:
			perr.Failed = append(perr.Failed, names[j])
			if perr.First == nil {
				perr.First = fmt.Errorf("item %s: %s", names[j], e)
			}
		}
	}
	rec.Status = runs.StatusCompleted
	detail := fmt.Sprintf("%d of %d items completed", len(inputs)-len(perr.Failed)-len(perr.Cancelled), len(inputs))
	if perr.First != nil {
		rec.Status, rec.Error = runs.StatusFailed, perr.Error()
		endStep(st, i, end, runs.StepFailed, 1, perr.Error(), detail, nil)
		rt.publish()
		return results, perr
	}
	if berr != nil {
		endStep(st, i, end, runs.StepFailed, 1, berr.Error(), detail, nil)
		rt.publish()
		return results, &StepError{Step: name, Kind: runs.KindChild, Err: berr}
	}
	endStep(st, i, end, runs.StepCompleted, 1, "", detail, nil)
	rt.publish()
	if gerr := rt.guards.checkTokens(name, rt.children.treeTokens(st)); gerr != nil && tokens.Total() > 0 {
		return results, &StepError{Step: name, Kind: runs.KindChild, Err: gerr}
	}
	return results, nil
}
