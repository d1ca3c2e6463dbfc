package flowctl

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/gateflow/gateflow/runs"
)

// resetCommand is `flowctl reset RUN --to-step NAME --reason TEXT`: Temporal's reset of
// the run to the workflow task that began the step, so a new execution of the run (same
// run ID, new Temporal run ID) goes on from there: the steps before it are not run again,
// the step and the ones after it are. Temporal's default reapply type applies: signals
// received after that point are delivered to the new execution again.
func (a *app) resetCommand() *cobra.Command {
	var step, reason string
	cmd := &cobra.Command{
		Use:   "reset RUN --to-step NAME --reason TEXT",
		Short: "Run a run again from a step, as Temporal's reset does (earlier steps are kept, not run again)",
		Long: "reset starts a new execution of the run (its ID stays, the Temporal run ID is new) from the\n" +
			"workflow task that began the step's first attempt: the steps before it keep their results, the\n" +
			"step and everything after it run again. The current execution ends (terminated, if it runs).\n" +
			"NAME is a step's name as `flowctl show` lists it, or its activity ID (branch/name, name#2)\n" +
			"when the name is used in several branches. A step of a child run is reset in that run.",
		Args: exactArgs(1, "RUN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(step) == "" {
				return usageErr("reset needs --to-step NAME: the step to run again from (flowctl show %s lists them)", args[0])
			}
			if err := needReason("reset", reason); err != nil {
				return err
			}
			return a.run(cmd, args, asCaller(), func(x call) (view, error) { return a.reset(x, step, reason) })
		},
	}
	cmd.Flags().StringVar(&step, "to-step", "", "the step to run again from (its name, or its activity ID)")
	cmd.Flags().StringVar(&reason, "reason", "", "why, kept in the run's history")
	return cmd
}

// reset resets run x.args[0] to before step, as x.by for reason.
func (a *app) reset(x call, step, reason string) (view, error) {
	run := x.args[0]
	d, err := x.c.Describe(x.ctx, run)
	if err != nil {
		return view{}, err
	}
	if d.State == nil {
		return view{}, fmt.Errorf("reset run %s: its steps cannot be read (%s)", run, orDash(d.StateError))
	}
	target, err := resetStep(run, d.State.Steps, step)
	if err != nil {
		return view{}, err
	}
	events, err := a.historyEvents(x.ctx, run, d.RunID)
	if err != nil {
		return view{}, runCallError(x.ctx, x.c, "reset", run, err)
	}
	eventID, err := resetEventID(run, target, events)
	if err != nil {
		return view{}, err
	}
	resp, err := x.c.Temporal().ResetWorkflowExecution(x.ctx, &workflowservice.ResetWorkflowExecutionRequest{
		Namespace:                 a.namespace,
		WorkflowExecution:         &commonpb.WorkflowExecution{WorkflowId: run, RunId: d.RunID},
		Reason:                    reason + " (by " + x.by + ")",
		WorkflowTaskFinishEventId: eventID,
		RequestId:                 requestID(),
		Identity:                  x.by,
	})
	if err != nil {
		return view{}, runCallError(x.ctx, x.c, "reset", run, err)
	}
	return view{value: map[string]any{
		"run": run, "step": target.ActivityID, "event_id": eventID, "reason": reason,
		"previous_run_id": d.RunID, "run_id": resp.GetRunId(),
	}, text: say("Run %s reset to before step %s (%s): new execution %s.\n  %s\n",
		run, target.ActivityID, a.asWho(x.by), resp.GetRunId(), a.hint("flowctl watch "+run))}, nil
}

// historyEvents is the whole history of the run's execution runID.
func (a *app) historyEvents(ctx context.Context, run, runID string) ([]*historypb.HistoryEvent, error) {
	it := a.tc.GetWorkflowHistory(ctx, run, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var events []*historypb.HistoryEvent
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, err
		}
		events = append(events, ev)
	}
	return events, nil
}

// resetStep is the step of steps that name means: the one whose activity ID it is, else
// the first (the first attempt) of those with that name, when they are all in one branch.
// Unknown names are not found (exit 3), with the run's step names; a name used in several
// branches is ambiguous (exit 2), with the activity IDs to say instead.
func resetStep(run string, steps []runs.Step, name string) (runs.Step, error) {
	name = strings.TrimSpace(name)
	for _, s := range steps {
		if s.ActivityID == name {
			return s, nil
		}
	}
	var named []runs.Step
	var branches []string
	for _, s := range steps {
		if s.Name == name {
			named = append(named, s)
			if !slices.Contains(branches, s.Branch) {
				branches = append(branches, s.Branch)
			}
		}
	}
	switch {
	case len(branches) == 1:
		return named[0], nil
	case len(branches) > 1:
		var ids []string
		for _, b := range branches {
			for _, s := range named {
				if s.Branch == b {
					ids = append(ids, s.ActivityID)
					break
				}
			}
		}
		return runs.Step{}, usageErr("run %s has a step %q in %d branches; say which with --to-step: %s",
			run, name, len(branches), strings.Join(ids, ", "))
	}
	for _, s := range steps {
		if rest, ok := strings.CutPrefix(name, s.ActivityID+"/"); ok && s.Child != nil && rest != "" {
			return runs.Step{}, &exitError{code: ExitNotFound, err: fmt.Errorf(
				"run %s has no step %q: %s is a step of its child run %s; reset that run (--to-step %s), or this one to %s",
				run, name, rest, s.Child.ID, rest, s.ActivityID)}
		}
	}
	var known []string
	for _, s := range steps {
		if !slices.Contains(known, s.ActivityID) {
			known = append(known, s.ActivityID)
		}
	}
	list := "none yet"
	if len(known) > 0 {
		list = strings.Join(known, ", ")
	}
	return runs.Step{}, &exitError{code: ExitNotFound, err: fmt.Errorf(
		"run %s has no step %q (a step it never started cannot be reset to); its steps: %s", run, name, list)}
}

// resetEventID is the ID of the WorkflowTaskCompleted event of the workflow task that
// began step in events: the task that scheduled its activity (a polled gate's first poll)
// or started its child run; for a step with neither (an approval, a sleep), the task that
// started at the step's start time, the run's clock then.
func resetEventID(run string, step runs.Step, events []*historypb.HistoryEvent) (int64, error) {
	child := ""
	if step.Child != nil {
		child = step.Child.ID
	}
	for _, ev := range events {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			at := ev.GetActivityTaskScheduledEventAttributes()
			if id := at.GetActivityId(); id == step.ActivityID || id == step.ActivityID+"#poll-1" {
				return at.GetWorkflowTaskCompletedEventId(), nil
			}
		case enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
			at := ev.GetStartChildWorkflowExecutionInitiatedEventAttributes()
			if child != "" && at.GetWorkflowId() == child {
				return at.GetWorkflowTaskCompletedEventId(), nil
			}
		}
	}
	for i, ev := range events {
		if ev.GetEventType() != enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED || !ev.GetEventTime().AsTime().Equal(step.StartedAt) {
			continue
		}
		for _, next := range events[i+1:] {
			if next.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED {
				return next.GetEventId(), nil
			}
		}
	}
	return 0, &exitError{code: ExitNotFound, err: fmt.Errorf(
		"run %s: the history of its current execution does not show where step %s began (it is of kind %s); reset to the step before or after it",
		run, step.ActivityID, step.Kind)}
}

// requestID is a random ID that makes the reset request idempotent.
func requestID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
