package flow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/internal/searchattr"
)

// ScheduleInfo is a schedule a flow declares with Schedule; the worker creates or updates a
// Temporal Schedule for it when it starts.
type ScheduleInfo struct {
	// Spec is a cron expression ("0 9 * * 1-5") or "@every 10m", "@hourly", "@daily".
	Spec string `json:"spec"`
	// Input is the scheduled runs' input (JSON).
	Input json.RawMessage `json:"input,omitempty"`
	// Overlap is what happens when a run is due while the last one still runs: skip (the
	// default), buffer_one, buffer_all, cancel_other, terminate_other or allow_all.
	Overlap string `json:"overlap,omitempty"`
	// Paused creates the schedule paused.
	Paused bool `json:"paused,omitempty"`
}

// ScheduleOption adjusts a schedule.
type ScheduleOption func(*ScheduleInfo) error

// ScheduleInput sets the scheduled runs' input (encoded as JSON).
func ScheduleInput(v any) ScheduleOption {
	return func(s *ScheduleInfo) error {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("schedule input: %w", err)
		}
		s.Input = b
		return nil
	}
}

// Overlap sets the schedule's overlap policy (see ScheduleInfo.Overlap).
func Overlap(policy string) ScheduleOption {
	return func(s *ScheduleInfo) error {
		if _, err := overlapPolicy(policy); err != nil {
			return err
		}
		s.Overlap = policy
		return nil
	}
}

// SchedulePaused creates the schedule paused (flowctl schedules unpause starts it).
func SchedulePaused() ScheduleOption {
	return func(s *ScheduleInfo) error { s.Paused = true; return nil }
}

// Schedule runs the flow on a schedule: spec is a cron expression ("*/15 * * * *") or
// "@every 10m". An invalid expression is refused at Define (see Flow.Err). The worker that
// serves the flow creates or updates one Temporal Schedule per declared schedule when it
// starts; scheduled runs check the monthly quotas before any step.
func Schedule(spec string, opts ...ScheduleOption) Option {
	return func(i *WorkflowInfo) error {
		if _, err := cron.ParseStandard(spec); err != nil {
			return fmt.Errorf("schedule %q: %v", spec, err)
		}
		s := ScheduleInfo{Spec: spec}
		for _, o := range opts {
			if err := o(&s); err != nil {
				return err
			}
		}
		i.Schedules = append(i.Schedules, s)
		return nil
	}
}

var overlaps = map[string]enumspb.ScheduleOverlapPolicy{
	"":                enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
	"skip":            enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
	"buffer_one":      enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ONE,
	"buffer_all":      enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ALL,
	"cancel_other":    enumspb.SCHEDULE_OVERLAP_POLICY_CANCEL_OTHER,
	"terminate_other": enumspb.SCHEDULE_OVERLAP_POLICY_TERMINATE_OTHER,
	"allow_all":       enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL,
}

func overlapPolicy(s string) (enumspb.ScheduleOverlapPolicy, error) {
	p, ok := overlaps[s]
	if !ok {
		return 0, fmt.Errorf("overlap %q: want skip, buffer_one, buffer_all, cancel_other, terminate_other or allow_all", s)
	}
	return p, nil
}

// ScheduleID is the Temporal Schedule ID of a flow's n-th schedule on a task queue.
func ScheduleID(workflow string, n int, queue string) string {
	return fmt.Sprintf("gateflow-schedule/%s/%d@%s", workflow, n, queue)
}

// ensureSchedules creates or updates the Temporal Schedules of the worker's flows.
func (w *Worker) ensureSchedules(ctx context.Context) error {
	sc := w.client.ScheduleClient()
	for _, f := range w.flows {
		info := f.Info()
		for n, s := range info.Schedules {
			id := ScheduleID(info.Name, n, w.opts.TaskQueue)
			opts, err := scheduleOptions(id, info, s, w.opts.TaskQueue)
			if err != nil {
				return err
			}
			h := sc.GetHandle(ctx, id)
			_, err = h.Describe(ctx)
			var nf *serviceerror.NotFound
			switch {
			case errors.As(err, &nf):
				if _, err := sc.Create(ctx, opts); err != nil {
					return fmt.Errorf("create schedule %s: %w", id, err)
				}
			case err != nil:
				return fmt.Errorf("describe schedule %s: %w", id, err)
			default:
				if err := h.Update(ctx, client.ScheduleUpdateOptions{DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
					sched := in.Description.Schedule
					sched.Spec = &opts.Spec
					sched.Action = opts.Action
					if sched.Policy == nil {
						sched.Policy = &client.SchedulePolicies{}
					}
					sched.Policy.Overlap = opts.Overlap
					return &client.ScheduleUpdate{Schedule: &sched}, nil
				}}); err != nil {
					return fmt.Errorf("update schedule %s: %w", id, err)
				}
			}
		}
	}
	return nil
}

func scheduleOptions(id string, info WorkflowInfo, s ScheduleInfo, queue string) (client.ScheduleOptions, error) {
	overlap, err := overlapPolicy(s.Overlap)
	if err != nil {
		return client.ScheduleOptions{}, err
	}
	input := s.Input
	if len(input) == 0 {
		input = json.RawMessage("null")
	}
	sa := []temporal.SearchAttributeUpdate{
		searchattr.StatusKey.ValueSet(string(StatusRunning)),
		searchattr.CreatedByKey.ValueSet("schedule"),
	}
	if info.Category != "" {
		sa = append(sa, searchattr.CategoryKey.ValueSet(info.Category))
	}
	if info.Version != "" {
		sa = append(sa, searchattr.VersionKey.ValueSet(info.Version))
	}
	return client.ScheduleOptions{
		ID:      id,
		Spec:    client.ScheduleSpec{CronExpressions: []string{s.Spec}},
		Overlap: overlap,
		Paused:  s.Paused,
		Note:    "created by a gateflow worker for " + info.Name,
		Action: &client.ScheduleWorkflowAction{
			ID:                    info.Name + "-scheduled",
			Workflow:              info.Name,
			Args:                  []any{input},
			TaskQueue:             queue,
			Memo:                  map[string]any{MemoOptions: RunOptions{}},
			TypedSearchAttributes: temporal.NewSearchAttributes(sa...),
			StaticSummary:         Preview(info.Name+" (scheduled "+s.Spec+")", 200),
		},
	}, nil
}

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
			if ScheduleID(workflow, n, c.opts.TaskQueue) == id {
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

// ControlSchedule triggers (a run now), pauses or unpauses the schedule id, or the first
// schedule of the workflow named id.
func (c *Client) ControlSchedule(ctx context.Context, id string, action ScheduleAction, note string) (string, error) {
	if !strings.HasPrefix(id, "gateflow-schedule/") {
		id = ScheduleID(id, 0, c.opts.TaskQueue)
	}
	h := c.tc.ScheduleClient().GetHandle(ctx, id)
	var err error
	switch action {
	case "trigger":
		err = h.Trigger(ctx, client.ScheduleTriggerOptions{})
	case "pause":
		err = h.Pause(ctx, client.SchedulePauseOptions{Note: note})
	case "unpause":
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
