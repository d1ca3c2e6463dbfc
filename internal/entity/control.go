package entity

import (
	"context"
	"fmt"
	"sort"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/internal/protocol"
)

// ControlState is the control entity's state (and its input across continue-as-new): the
// paused workflow types of a task queue and the runs each holds in pending.
type ControlState struct {
	Paused map[string]protocol.PausedType `json:"paused"`
	Held   map[string][]string            `json:"held"` // workflow type → held run IDs
}

func (s *ControlState) init() {
	if s.Paused == nil {
		s.Paused = map[string]protocol.PausedType{}
	}
	if s.Held == nil {
		s.Held = map[string][]string{}
	}
}

// Pause pauses m.Workflow: new runs of it are held until Resume.
func (s *ControlState) Pause(m protocol.ControlMessage, now time.Time) {
	s.init()
	s.Paused[m.Workflow] = protocol.PausedType{Workflow: m.Workflow, By: m.By, Reason: m.Reason, Since: now}
}

// Resume resumes workflow and returns the runs to release.
func (s *ControlState) Resume(workflow string) []string {
	s.init()
	delete(s.Paused, workflow)
	return s.release(workflow)
}

// Hold keeps run m.RunID of m.Workflow until its type is resumed. When the type is not
// paused (it was resumed while the run was on its way) it returns the runs to release
// now, the new one among them.
func (s *ControlState) Hold(m protocol.ControlMessage) []string {
	s.init()
	if !contains(s.Held[m.Workflow], m.RunID) { // a retried hold lists the run once
		s.Held[m.Workflow] = append(s.Held[m.Workflow], m.RunID)
	}
	if _, paused := s.Paused[m.Workflow]; paused {
		return nil
	}
	return s.release(m.Workflow)
}

func (s *ControlState) release(workflow string) []string {
	held := s.Held[workflow]
	delete(s.Held, workflow)
	return held
}

// PausedList is the paused types sorted by name, as the Memo shows them.
func (s *ControlState) PausedList() []protocol.PausedType {
	list := make([]protocol.PausedType, 0, len(s.Paused))
	for _, p := range s.Paused {
		list = append(list, p)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Workflow < list[j].Workflow })
	return list
}

const controlMaxEvents = 500

// controlWorkflow keeps a task queue's paused workflow types and the runs they hold.
func controlWorkflow(ctx workflow.Context, st ControlState) error {
	st.init()
	pause := workflow.GetSignalChannel(ctx, protocol.ControlPause)
	resume := workflow.GetSignalChannel(ctx, protocol.ControlResume)
	hold := workflow.GetSignalChannel(ctx, protocol.ControlHold)
	release := func(ids []string, name string) {
		for _, id := range ids {
			if err := workflow.SignalExternalWorkflow(ctx, id, "", protocol.SignalResume, name).Get(ctx, nil); err != nil {
				// The held run is gone (terminated); nothing waits for it any more.
				workflow.GetLogger(ctx).Warn("release a held run", "run", id, "workflow", name, "error", err)
			}
		}
	}
	for n := 0; ; n++ {
		if n >= controlMaxEvents && pause.Len() == 0 && resume.Len() == 0 && hold.Len() == 0 {
			return workflow.NewContinueAsNewError(ctx, protocol.ControlWorkflowType, st)
		}
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(pause, func(c workflow.ReceiveChannel, _ bool) {
			var m protocol.ControlMessage
			c.Receive(ctx, &m)
			st.Pause(m, workflow.Now(ctx))
		})
		sel.AddReceive(resume, func(c workflow.ReceiveChannel, _ bool) {
			var m protocol.ControlMessage
			c.Receive(ctx, &m)
			release(st.Resume(m.Workflow), m.Workflow)
		})
		sel.AddReceive(hold, func(c workflow.ReceiveChannel, _ bool) {
			var m protocol.ControlMessage
			c.Receive(ctx, &m)
			release(st.Hold(m), m.Workflow)
		})
		sel.Select(ctx)
		if err := workflow.UpsertMemo(ctx, map[string]any{protocol.MemoPaused: st.PausedList()}); err != nil {
			return err
		}
	}
}

// controlActivities signal the control entity for runs.
type controlActivities struct{}

func (controlActivities) hold(ctx context.Context, queue string, m protocol.ControlMessage) error {
	return SignalControl(ctx, activity.GetClient(ctx), queue, protocol.ControlHold, m)
}

// SignalControl sends m to the control entity of queue, starting it if needed.
func SignalControl(ctx context.Context, tc client.Client, queue, signal string, m protocol.ControlMessage) error {
	id := protocol.ControlID(queue)
	_, err := tc.SignalWithStartWorkflow(ctx, id, signal, m, client.StartWorkflowOptions{
		ID: id, TaskQueue: queue, StaticSummary: "gateflow paused workflow types of task queue " + queue,
	}, protocol.ControlWorkflowType, ControlState{})
	return err
}

// ReadPaused lists the paused workflow types of queue from the control entity's Memo (no
// worker needed); none when the entity was never started.
func ReadPaused(ctx context.Context, tc client.Client, queue string) ([]protocol.PausedType, error) {
	resp, err := tc.DescribeWorkflowExecution(ctx, protocol.ControlID(queue), "")
	if err != nil {
		if protocol.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("read paused workflows: %w", err)
	}
	var list []protocol.PausedType
	if _, err := protocol.DecodeMemo(resp.GetWorkflowExecutionInfo().GetMemo(), protocol.MemoPaused, &list); err != nil {
		return nil, err
	}
	return list, nil
}
