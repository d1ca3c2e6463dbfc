package flow

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/gateflow/gateflow/internal/protocol"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// triggersVersion gates the trigger starts in the end path: runs that ended before their
// worker had triggers replay without them.
const triggersVersion = "gateflow.triggers"

// startTriggered starts, as the last part of the run's end, the worker's flows that a run
// of this flow ending with status triggers (OnRunOf), each through the activity
// protocol.TriggerStartActivity with a deterministic workflow ID, so a retried activity
// or a replay never starts a second run. A start that fails (an output the flow's input
// type refuses, a server that stays unreachable) is logged; the run keeps its outcome.
func (rt *runner) startTriggered(wctx workflow.Context, status Status) {
	if rt.plan || len(rt.triggers) == 0 {
		return
	}
	end, ok := runEndOf(status)
	if !ok {
		return
	}
	var targets []string
	for _, t := range rt.triggers {
		if slices.Contains(t.when, end) {
			targets = append(targets, t.flow)
		}
	}
	if len(targets) == 0 {
		return
	}
	if workflow.GetVersion(wctx, triggersVersion, workflow.DefaultVersion, 1) != 1 {
		return
	}
	exec := workflow.GetInfo(wctx).WorkflowExecution
	input := rt.state.Output
	if len(input) == 0 {
		input = json.RawMessage("null")
	}
	futures := make([]workflow.Future, len(targets))
	for i, name := range targets {
		actx := workflow.WithActivityOptions(wctx, workflow.ActivityOptions{
			ActivityID:          "trigger:" + name,
			StartToCloseTimeout: time.Minute,
			RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 30 * time.Second, MaximumAttempts: 10},
			Summary:             "start " + name + " (triggered by this run " + string(end) + ")",
		})
		futures[i] = workflow.ExecuteActivity(actx, protocol.TriggerStartActivity, protocol.TriggerStart{
			Flow: name, ID: protocol.TriggeredID(name, exec.ID, exec.RunID), Input: input,
			ByFlow: rt.info.Name, ByID: exec.ID, ByRunID: exec.RunID, Outcome: string(end),
		})
	}
	log := workflow.GetLogger(wctx)
	for i, f := range futures {
		var run Run
		if err := f.Get(wctx, &run); err != nil {
			log.Warn("start the triggered flow", "flow", targets[i], "error", err)
			continue
		}
		log.Info("started the triggered flow", "flow", targets[i], "run", run.ID)
	}
}
