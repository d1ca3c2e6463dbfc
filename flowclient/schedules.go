package flowclient

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gateflow/gateflow/internal/protocol"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// ScheduleSummary is one gateflow schedule, as Client.Schedules lists it.
type ScheduleSummary struct {
	ID       string      `json:"id"`
	Workflow string      `json:"workflow"`
	Spec     string      `json:"spec"`
	Paused   bool        `json:"paused"`
	Note     string      `json:"note,omitempty"`
	Next     []time.Time `json:"next,omitempty"`
	Recent   []string    `json:"recent_runs,omitempty"`
	Actions  int         `json:"actions"`
}

// Schedules lists the gateflow schedules of the client's task queue.
func (c *Client) Schedules(ctx context.Context) ([]ScheduleSummary, error) {
	it, err := c.tc.ScheduleClient().List(ctx, client.ScheduleListOptions{PageSize: 1000})
	if err != nil {
		return nil, fmt.Errorf("list schedules: %w", err)
	}
	suffix := "@" + c.opts.TaskQueue
	// The spec as the flow declares it (the server keeps its own structured form).
	cat, _ := c.Workflows(ctx)
	specOf := func(workflow, id string) string {
		if cat == nil {
			return ""
		}
		info, ok := cat.Lookup(workflow)
		if !ok {
			return ""
		}
		for n, s := range info.Schedules {
			if protocol.FlowScheduleID(workflow, n, s.ID, c.opts.TaskQueue) == id {
				return s.Spec
			}
		}
		return ""
	}
	var out []ScheduleSummary
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("list schedules: %w", err)
		}
		if !strings.HasPrefix(e.ID, "gateflow-schedule/") || !strings.HasSuffix(e.ID, suffix) {
			continue
		}
		d, err := c.tc.ScheduleClient().GetHandle(ctx, e.ID).Describe(ctx)
		if err != nil {
			continue
		}
		s := ScheduleSummary{ID: e.ID, Next: d.Info.NextActionTimes, Actions: d.Info.NumActions}
		if d.Schedule.State != nil {
			s.Paused, s.Note = d.Schedule.State.Paused, d.Schedule.State.Note
		}
		if a, ok := d.Schedule.Action.(*client.ScheduleWorkflowAction); ok {
			if name, ok := a.Workflow.(string); ok {
				s.Workflow = name
			}
		}
		s.Spec = specOf(s.Workflow, e.ID)
		for _, r := range d.Info.RecentActions {
			if r.StartWorkflowResult != nil {
				s.Recent = append(s.Recent, r.StartWorkflowResult.WorkflowID)
			}
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// ScheduleAction is "trigger", "pause" or "unpause".
type ScheduleAction string

// Schedule actions.
const (
	// TriggerSchedule starts a run now, even when the schedule is paused.
	TriggerSchedule ScheduleAction = "trigger"
	// PauseSchedule and UnpauseSchedule stop and restart the schedule's runs.
	PauseSchedule   ScheduleAction = "pause"
	UnpauseSchedule ScheduleAction = "unpause"
)

// ControlSchedule triggers (a run now), pauses or unpauses the schedule id, or the first
// schedule of the workflow named id.
func (c *Client) ControlSchedule(ctx context.Context, id string, action ScheduleAction, note string) (string, error) {
	if !strings.HasPrefix(id, "gateflow-schedule/") {
		name := id
		id = protocol.ScheduleID(name, 0, c.opts.TaskQueue)
		if cat, err := c.Workflows(ctx); err == nil {
			if info, ok := cat.Lookup(name); ok && len(info.Schedules) > 0 {
				id = protocol.FlowScheduleID(name, 0, info.Schedules[0].ID, c.opts.TaskQueue)
			}
		}
	}
	h := c.tc.ScheduleClient().GetHandle(ctx, id)
	var err error
	switch action {
	case TriggerSchedule:
		err = h.Trigger(ctx, client.ScheduleTriggerOptions{})
	case PauseSchedule:
		err = h.Pause(ctx, client.SchedulePauseOptions{Note: note})
	case UnpauseSchedule:
		err = h.Unpause(ctx, client.ScheduleUnpauseOptions{Note: note})
	default:
		return id, fmt.Errorf("schedule action %q: want trigger, pause or unpause", action)
	}
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return id, &RunNotFoundError{ID: id}
		}
		return id, fmt.Errorf("%s schedule %s: %w", action, id, err)
	}
	return id, nil
}
