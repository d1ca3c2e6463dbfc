package flow

import (
	"encoding/json"
	"fmt"

	"github.com/gateflow/gateflow/core"
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
	s := ctx.begin(name, runs.KindChild)
	fail := func(err error) ([]O, error) { return nil, s.fail(s.now(), runs.StepFailed, err) }
	if err := ctx.holdWhilePaused(false); err != nil {
		return fail(err)
	}
	if err := ctx.countStep(name); err != nil { // run_limits.go: the MaxSteps guard
		return fail(err)
	}
	fs, err := ctx.planFanout(s, f.Name(), len(inputs), ctx.options(stepOpts))
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
	in, cwo, err := ctx.fanoutStart(s, fs, f.Name(), f.info, raw, names, opts)
	if err != nil {
		return fail(err)
	}
	s.rec().Child = &runs.Child{ID: cwo.WorkflowID, Workflow: f.Name(), Status: runs.StatusRunning}
	ctx.run.publish()
	var res entity.FanoutResult
	err = workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx.wctx, cwo), protocol.FanoutWorkflowType, in).Get(ctx.wctx, &res)
	berr, err := ctx.chargeFanout(s, fs, res, err)
	if err != nil {
		return nil, err
	}
	perr := fanoutErrors(name, res, names, func(j int, b json.RawMessage) error { return json.Unmarshal(b, &results[j]) })
	return results, ctx.endFanout(s, res, perr, berr, len(inputs))
}

// fanout is a fan-out runner's start: its items' depth, queue, and the key and money
// reserved for them.
type fanout struct {
	depth    int
	queue    string
	key      string
	capUSD   string
	reserved bool
}

// planFanout runs the guards of the fan-out step s of n runs of the flow flowName and
// reserves their money.
func (c *Context) planFanout(s *step, flowName string, n int, o stepOptions) (fanout, error) {
	rt := c.run
	fs := fanout{depth: rt.state.Depth + 1}
	if err := rt.setup.guards.checkDepth(s.name, fs.depth); err != nil {
		return fs, err
	}
	if err := rt.setup.guards.checkFanOut(s.name, rt.children.count+n); err != nil {
		return fs, err
	}
	var err error
	if fs.queue, err = childQueue(c, o); err != nil {
		return fs, err
	}
	if err := c.checkServed(flowName, fs.queue); err != nil {
		return fs, err
	}
	rt.children.count += n
	fs.key = s.rec().ActivityID
	fs.capUSD, fs.reserved, err = c.reserveChild(fs.key, o)
	return fs, err
}

// fanoutStart is the fan-out runner's input and child workflow options for the items
// raw, named names.
func (c *Context) fanoutStart(s *step, fs fanout, flowName string, fi core.WorkflowInfo, raw []json.RawMessage, names []string, opts ForEachOptions) (entity.FanoutState, workflow.ChildWorkflowOptions, error) {
	rt, st := c.run, c.run.state
	info := workflow.GetInfo(c.wctx)
	runnerID := info.WorkflowExecution.ID + "/" + fs.key
	createdBy, _ := workflow.GetTypedSearchAttributes(c.wctx).GetKeyword(searchattr.CreatedByKey)
	pi := parentInfo{Step: s.name, Depth: fs.depth, Guards: rt.setup.guards, TreeTokens: rt.children.treeTokens(st),
		StartedAt: st.StartedAt, CreatedBy: createdBy, CapUSD: fs.capUSD}
	var memo map[string]any
	b, _ := json.Marshal(pi)
	if err := json.Unmarshal(b, &memo); err != nil {
		return entity.FanoutState{}, workflow.ChildWorkflowOptions{}, fmt.Errorf("encode the items' parent info: %w", err)
	}
	in := entity.FanoutState{
		Flow: flowName, TaskQueue: fs.queue, IDPrefix: runnerID, Names: names, Inputs: raw, ParentMemo: memo,
		CreatedBy: createdBy, Category: fi.Category, Version: fi.Version,
		MaxParallel: max(opts.MaxParallel, 1), Halt: opts.OnItemFail == Halt, PerRun: fanoutPerRun,
	}
	if opts.MaxParallel <= 0 {
		in.MaxParallel = len(raw)
	}
	cwo := workflow.ChildWorkflowOptions{
		WorkflowID:          runnerID,
		ParentClosePolicy:   enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
		WaitForCancellation: true,
		StaticSummary:       fmt.Sprintf("fan-out of %d %s runs for %s", len(raw), flowName, info.WorkflowExecution.ID),
	}
	return in, cwo, nil
}

// chargeFanout charges the fan-out step s the runner's cost and tokens and settles its
// reservation (berr: the cap refused the spend). When the runner failed (err), it ends the
// step and returns the step's error.
func (c *Context) chargeFanout(s *step, fs fanout, res entity.FanoutResult, err error) (berr, serr error) {
	rt, st := c.run, c.run.state
	rec := s.rec().Child
	tokens := runs.Tokens{Input: res.InputTokens, Output: res.OutputTokens}
	rec.CostUSD, rec.Tokens = res.CostUSD, tokens
	chargeStep(st, s.i, res.CostUSD, tokens)
	rt.children.tokens = addTokens(rt.children.tokens, tokens)
	berr = c.settleCost(fs.key, s.name, fs.reserved, res.CostUSD)
	if err != nil {
		rec.Status, rec.Error = statusOf(err, 0), errorMessage(err)
		status := runs.StepFailed
		if isCancellation(err) {
			status = runs.StepCancelled
		}
		s.close(s.now(), status, 1, errorMessage(err), "", nil)
		rt.publish()
		return berr, s.err(err)
	}
	return berr, nil
}

// fanoutErrors is the failed and cancelled items of the fan-out group name; decode reads
// item j's output.
func fanoutErrors(name string, res entity.FanoutResult, names []string, decode func(j int, b json.RawMessage) error) *ParallelError {
	perr := &ParallelError{Group: name, what: "foreach"}
	for j := range names {
		switch e := res.Errors[j]; {
		case e == "":
			if len(res.Outputs[j]) > 0 {
				if err := decode(j, res.Outputs[j]); err != nil {
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
	return perr
}

// endFanout ends the fan-out step s of n items: failed when an item failed (perr) or the
// cap refused the spend (berr).
func (c *Context) endFanout(s *step, res entity.FanoutResult, perr *ParallelError, berr error, n int) error {
	rt, rec := c.run, s.rec().Child
	end := s.now()
	rec.Status = runs.StatusCompleted
	detail := fmt.Sprintf("%d of %d items completed", n-len(perr.Failed)-len(perr.Cancelled), n)
	if perr.First != nil {
		rec.Status, rec.Error = runs.StatusFailed, perr.Error()
		s.close(end, runs.StepFailed, 1, perr.Error(), detail, nil)
		rt.publish()
		return perr
	}
	if berr != nil {
		s.close(end, runs.StepFailed, 1, berr.Error(), detail, nil)
		rt.publish()
		return s.err(berr)
	}
	s.close(end, runs.StepCompleted, 1, "", detail, nil)
	rt.publish()
	tokens := runs.Tokens{Input: res.InputTokens, Output: res.OutputTokens}
	if gerr := rt.setup.guards.checkTokens(s.name, rt.children.treeTokens(rt.state)); gerr != nil && tokens.Total() > 0 {
		return s.err(gerr)
	}
	return nil
}
