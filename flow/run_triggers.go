package flow

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/startplan"
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
func (rt *runner) startTriggered(wctx workflow.Context, status runs.Status) {
	if rt.setup.plan || len(rt.after.triggers) == 0 {
		return
	}
	end, ok := runEndOf(status)
	if !ok {
		return
	}
	var targets []trigger
	for _, t := range rt.after.triggers {
		if slices.Contains(t.when, end) {
			targets = append(targets, t)
		}
	}
	if len(targets) == 0 {
		return
	}
	if workflow.GetVersion(wctx, triggersVersion, workflow.DefaultVersion, 1) != 1 {
		return
	}
	exec := workflow.GetInfo(wctx).WorkflowExecution
	output := rt.state.Output
	if len(output) == 0 {
		output = json.RawMessage("null")
	}
	log := workflow.GetLogger(wctx)
	var names []string
	var futures []workflow.Future
	for _, t := range targets {
		input, ok := rt.triggerInput(wctx, t, end, output)
		if !ok {
			continue
		}
		actx := workflow.WithActivityOptions(wctx, workflow.ActivityOptions{
			ActivityID:          "trigger:" + t.flow,
			StartToCloseTimeout: time.Minute,
			RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 30 * time.Second, MaximumAttempts: 10},
			Summary:             "start " + t.flow + " (triggered by this run " + string(end) + ")",
		})
		names = append(names, t.flow)
		futures = append(futures, workflow.ExecuteActivity(actx, protocol.TriggerStartActivity, protocol.TriggerStart{
			Flow: t.flow, ID: protocol.TriggeredID(t.flow, exec.ID, exec.RunID), Input: input,
			ByFlow: rt.info.Name, ByID: exec.ID, ByRunID: exec.RunID, Outcome: string(end),
		}))
	}
	for i, f := range futures {
		var run core.Run
		if err := f.Get(wctx, &run); err != nil {
			log.Warn("start the triggered flow", "flow", names[i], "error", err)
			continue
		}
		log.Info("started the triggered flow", "flow", names[i], "run", run.ID)
	}
}

// triggerInputVersion gates the TriggerInput answers a run's end records: runs that ended
// before their worker had them replay starting with the output as it is.
const triggerInputVersion = "gateflow.trigger-input"

// mappedTrigger is what a TriggerInput answered, as the ended run records it.
type mappedTrigger struct {
	Start bool            `json:"start"`
	Input json.RawMessage `json:"input,omitempty"`
	Err   string          `json:"error,omitempty"`
}

// triggerInput is the input the trigger t starts its flow with, and whether it starts it:
// the output as it is, or what t's TriggerInput answers, recorded once (a SideEffect) so
// a replay uses the answer, not the function as it is then.
func (rt *runner) triggerInput(wctx workflow.Context, t trigger, end core.RunEnd, output json.RawMessage) (json.RawMessage, bool) {
	if t.mapInput == nil {
		return output, true
	}
	if workflow.GetVersion(wctx, triggerInputVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return output, true
	}
	var m mappedTrigger
	enc := workflow.SideEffect(wctx, func(workflow.Context) any { return callTriggerMap(t.mapInput, end, output) })
	log := workflow.GetLogger(wctx)
	if err := enc.Get(&m); err != nil {
		log.Warn("read the triggered flow's input", "flow", t.flow, "error", err)
		return nil, false
	}
	switch {
	case m.Err != "":
		log.Warn("the trigger's input failed: nothing started", "flow", t.flow, "error", m.Err)
		return nil, false
	case !m.Start:
		log.Info("the trigger's condition is false: nothing started", "flow", t.flow)
		return nil, false
	}
	return m.Input, true
}

// callTriggerMap calls fn and encodes its answer; a panic of fn is its error.
func callTriggerMap(fn core.TriggerMap, end core.RunEnd, output json.RawMessage) (m mappedTrigger) {
	defer func() {
		if r := recover(); r != nil {
			m = mappedTrigger{Err: fmt.Sprintf("trigger input panicked: %v", r)}
		}
	}()
	input, start, err := fn(end, output)
	switch {
	case err != nil:
		return mappedTrigger{Err: err.Error()}
	case !start:
		return mappedTrigger{}
	}
	b, err := startplan.EncodeInput(input)
	if err != nil {
		return mappedTrigger{Err: fmt.Sprintf("trigger input: %v", err)}
	}
	if len(b) == 0 {
		b = json.RawMessage("null")
	}
	return mappedTrigger{Start: true, Input: b}
}
