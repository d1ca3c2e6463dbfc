package flow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gateflow/gateflow/schedule"

	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/display"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/searchattr"
	"github.com/gateflow/gateflow/internal/startplan"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// ensureSchedules creates or updates the Temporal Schedules of flows, the worker's.
func (w *Worker) ensureSchedules(ctx context.Context, flows []Definition) error {
	sc := w.client.ScheduleClient()
	for _, f := range flows {
		info := f.Info()
		for n, s := range info.Schedules {
			id := protocol.FlowScheduleID(info.Name, n, s.ID, w.opts.TaskQueue)
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

func scheduleOptions(id string, info core.WorkflowInfo, s schedule.Info, queue string) (client.ScheduleOptions, error) {
	overlap, err := s.Overlap.Temporal()
	if err != nil {
		return client.ScheduleOptions{}, err
	}
	input := s.Input
	if len(input) == 0 {
		input = json.RawMessage("null")
	}
	sa := []temporal.SearchAttributeUpdate{
		searchattr.StatusKey.ValueSet(string(runs.StatusRunning)),
		searchattr.CreatedByKey.ValueSet("schedule"),
	}
	if info.Category != "" {
		sa = append(sa, searchattr.CategoryKey.ValueSet(info.Category))
	}
	if info.Version != "" {
		sa = append(sa, searchattr.VersionKey.ValueSet(info.Version))
	}
	// The flow's start defaults apply to scheduled runs as to started ones.
	def, err := startplan.WithFlowDefaults(info, core.StartOptions{})
	if err != nil {
		return client.ScheduleOptions{}, fmt.Errorf("schedule of %s: %w", info.Name, err)
	}
	sa = append(sa, searchattr.PriorityKey.ValueSet(int64(def.Priority)))
	if len(def.Labels) > 0 {
		sa = append(sa, searchattr.LabelsKey.ValueSet(startplan.LabelList(def.Labels)))
	}
	queue = protocol.TaggedQueue(queue, def.WorkerTags)
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
			Memo:                  map[string]any{protocol.MemoOptions: protocol.RunOptions{Labels: def.Labels}},
			TypedSearchAttributes: temporal.NewSearchAttributes(sa...),
			StaticSummary:         display.Preview(info.Name+" (scheduled "+s.Spec+")", 200),
			Priority:              temporal.Priority{PriorityKey: def.Priority},
		},
	}, nil
}
