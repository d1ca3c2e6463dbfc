package flow

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"
)

// Pausing workflow types: `flowctl pause WORKFLOW` holds new runs of a type in pending
// until `flowctl resume WORKFLOW`; runs already going are untouched. A control entity
// workflow per task queue keeps the paused types (in its Memo, for clients) and releases
// the held runs on resume.
const (
	// ControlWorkflowType is the control entity workflow's type.
	ControlWorkflowType = "gateflow.control"
	// MemoPaused is the Memo key under which the control workflow keeps the paused types.
	MemoPaused = "gateflow.paused"
	// SignalResume tells a held run its type was resumed.
	SignalResume  = "gateflow.resume"
	controlPause  = "pause"
	controlResume = "resume"
	controlHold   = "hold"
)

// ControlWorkflowID is the ID of a task queue's control workflow.
func ControlWorkflowID(queue string) string { return "gateflow-control@" + queue }

// PausedType is a paused workflow type.
type PausedType struct {
	Workflow string    `json:"workflow"`
	By       string    `json:"by,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	Since    time.Time `json:"since"`
}

type controlMessage struct {
	Workflow string `json:"workflow"`
	By       string `json:"by,omitempty"`
	Reason   string `json:"reason,omitempty"`
	RunID    string `json:"run_id,omitempty"` // for hold: the held run's workflow ID
}

// ControlState is the control workflow's state (and input across continue-as-new).
type ControlState struct {
	Paused map[string]PausedType `json:"paused"`
	Held   map[string][]string   `json:"held"` // workflow type → held run IDs
}

const controlMaxEvents = 500

// controlWorkflow keeps a task queue's paused workflow types and the runs they hold.
func controlWorkflow(ctx workflow.Context, st ControlState) error {
	if st.Paused == nil {
		st.Paused = map[string]PausedType{}
	}
	if st.Held == nil {
		st.Held = map[string][]string{}
	}
	pause := workflow.GetSignalChannel(ctx, controlPause)
	resume := workflow.GetSignalChannel(ctx, controlResume)
	hold := workflow.GetSignalChannel(ctx, controlHold)
	publish := func() error {
		list := make([]PausedType, 0, len(st.Paused))
		for _, p := range st.Paused {
			list = append(list, p)
		}
		sort.Slice(list, func(i, j int) bool { return list[i].Workflow < list[j].Workflow })
		return workflow.UpsertMemo(ctx, map[string]any{MemoPaused: list})
	}
	release := func(name string) {
		for _, id := range st.Held[name] {
			_ = workflow.SignalExternalWorkflow(ctx, id, "", SignalResume, name).Get(ctx, nil)
		}
		delete(st.Held, name)
	}
	for n := 0; ; n++ {
		if n >= controlMaxEvents && pause.Len() == 0 && resume.Len() == 0 && hold.Len() == 0 {
			return workflow.NewContinueAsNewError(ctx, ControlWorkflowType, st)
		}
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(pause, func(c workflow.ReceiveChannel, _ bool) {
			var m controlMessage
			c.Receive(ctx, &m)
			st.Paused[m.Workflow] = PausedType{Workflow: m.Workflow, By: m.By, Reason: m.Reason, Since: workflow.Now(ctx)}
		})
		sel.AddReceive(resume, func(c workflow.ReceiveChannel, _ bool) {
			var m controlMessage
			c.Receive(ctx, &m)
			delete(st.Paused, m.Workflow)
			release(m.Workflow)
		})
		sel.AddReceive(hold, func(c workflow.ReceiveChannel, _ bool) {
			var m controlMessage
			c.Receive(ctx, &m)
			st.Held[m.Workflow] = append(st.Held[m.Workflow], m.RunID)
			if _, paused := st.Paused[m.Workflow]; !paused {
				release(m.Workflow) // resumed while the run was on its way
			}
		})
		sel.Select(ctx)
		if err := publish(); err != nil {
			return err
		}
	}
}

// holdIfPaused keeps a run whose type was paused at its start in pending until resumed.
func (rt *runner) holdIfPaused(c *Context, opts RunOptions) error {
	if !opts.Paused {
		return nil
	}
	resumed := false
	ch := workflow.GetSignalChannel(c.wctx, SignalResume)
	workflow.Go(c.wctx, func(gctx workflow.Context) {
		ch.Receive(gctx, nil)
		resumed = true
	})
	queue := workflow.GetInfo(c.wctx).TaskQueueName
	actx := workflow.WithActivityOptions(c.wctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second, Summary: "hold while paused"})
	msg := controlMessage{Workflow: rt.info.Name, RunID: c.RunID()}
	if err := workflow.ExecuteActivity(actx, controlHoldActivity, queue, msg).Get(c.wctx, nil); err != nil {
		return fmt.Errorf("hold while %s is paused: %w", rt.info.Name, err)
	}
	c.wait("resume:"+rt.info.Name, StatusPending)
	err := workflow.Await(c.wctx, func() bool { return resumed })
	c.unwait("resume:" + rt.info.Name)
	return err
}

const controlHoldActivity = "gateflow.control.hold"

// controlActivities signal the control workflow.
type controlActivities struct{}

func (controlActivities) hold(ctx context.Context, queue string, m controlMessage) error {
	return signalControl(ctx, activity.GetClient(ctx), queue, controlHold, m)
}

func signalControl(ctx context.Context, tc client.Client, queue, signal string, m controlMessage) error {
	id := ControlWorkflowID(queue)
	_, err := tc.SignalWithStartWorkflow(ctx, id, signal, m, client.StartWorkflowOptions{
		ID: id, TaskQueue: queue, StaticSummary: "gateflow paused workflow types of task queue " + queue,
	}, ControlWorkflowType, ControlState{})
	return err
}

// Paused lists the paused workflow types of the client's task queue.
func (c *Client) Paused(ctx context.Context) ([]PausedType, error) {
	resp, err := c.tc.DescribeWorkflowExecution(ctx, ControlWorkflowID(c.opts.TaskQueue), "")
	if err != nil {
		if isNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("read paused workflows: %w", err)
	}
	var list []PausedType
	if _, err := decodeMemo(resp.GetWorkflowExecutionInfo().GetMemo(), MemoPaused, &list); err != nil {
		return nil, err
	}
	return list, nil
}

// Pause holds new runs of workflow in pending until Resume; running ones go on.
func (c *Client) Pause(ctx context.Context, workflowName, reason, by string) error {
	return c.control(ctx, controlPause, workflowName, reason, by)
}

// Resume releases the held runs of workflow and lets new ones start.
func (c *Client) Resume(ctx context.Context, workflowName, by string) error {
	return c.control(ctx, controlResume, workflowName, "", by)
}

func (c *Client) control(ctx context.Context, signal, workflowName, reason, by string) error {
	cat, err := c.Workflows(ctx)
	if err != nil {
		return err
	}
	if _, ok := cat.Lookup(workflowName); !ok {
		return &UnknownWorkflowError{Name: workflowName, TaskQueue: c.opts.TaskQueue, Known: cat.Names()}
	}
	if by == "" {
		by = c.opts.Identity
	}
	if err := signalControl(ctx, c.tc, c.opts.TaskQueue, signal, controlMessage{Workflow: workflowName, By: by, Reason: reason}); err != nil {
		return fmt.Errorf("%s %s: %w", signal, workflowName, err)
	}
	// Wait until clients see it, so a start right after a pause is held.
	for i := 0; i < 100; i++ {
		list, err := c.Paused(ctx)
		if err == nil && isPaused(list, workflowName) == (signal == controlPause) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s %s: not visible yet", signal, workflowName)
}

func isPaused(list []PausedType, name string) bool {
	for _, p := range list {
		if strings.EqualFold(p.Workflow, name) {
			return p.Workflow == name
		}
	}
	return false
}
