package flow

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/internal/protocol"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// permitsPart keeps a run in pending while its workflow type is paused (the control entity
// holds it) and until it has a permit of each of its concurrency groups (the semaphore
// entities grant them); it gives the permits back when the run ends.
type permitsPart struct {
	// groups are the concurrency groups whose permits the run holds.
	groups []string
}

// holdIfPaused keeps a run whose type was paused at its start in pending until resumed.
func (p *permitsPart) holdIfPaused(c *Context, opts protocol.RunOptions) error {
	rt := c.run
	if !opts.Paused {
		return nil
	}
	resumed := false
	// One resume is taken; later ones stay unread, as before (run_signals.go).
	listenOnce(rt.control.listener, workflow.GetSignalChannelWithOptions(c.wctx, protocol.SignalResume, workflow.SignalChannelOptions{Description: descResume}), func() { resumed = true })
	// The control entity of the base queue: flowctl resume signals that one, also for a
	// run sent to a tagged queue.
	queue := protocol.BaseQueue(workflow.GetInfo(c.wctx).TaskQueueName)
	actx := workflow.WithActivityOptions(c.wctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second, Summary: "hold while paused"})
	msg := protocol.ControlMessage{Workflow: rt.info.Name, RunID: c.RunID()}
	if err := workflow.ExecuteActivity(actx, protocol.ControlHoldActivity, queue, msg).Get(c.wctx, nil); err != nil {
		return fmt.Errorf("hold while %s is paused: %w", rt.info.Name, err)
	}
	c.wait(runs.Wait{Kind: runs.ForResume, Name: rt.info.Name})
	err := workflow.Await(c.wctx, func() bool { return resumed })
	c.unwait(runs.Wait{Kind: runs.ForResume, Name: rt.info.Name})
	return err
}

// acquire waits in pending for a permit of every concurrency group of the run.
func (p *permitsPart) acquire(c *Context, limits map[string]int) error {
	limits, err := p.withMaxRuns(c, limits) // maxruns.go: the flow's MaxRuns group
	if err != nil {
		return err
	}
	if len(limits) == 0 {
		return nil
	}
	granted := map[string]bool{}
	listen(c.run.control.listener, workflow.GetSignalChannelWithOptions(c.wctx, protocol.SignalPermit, workflow.SignalChannelOptions{Description: descPermit}), func(_ workflow.Context, g string) { granted[g] = true })
	groups := slices.Sorted(maps.Keys(limits))
	p.groups = groups
	actx := workflow.WithActivityOptions(c.wctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second,
		Summary: "acquire concurrency permits", RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 10}})
	for _, g := range groups {
		if err := workflow.ExecuteActivity(actx, protocol.SemaphoreSignalActivity, protocol.SemaphoreAcquire, protocol.SemaphoreMessage{Group: g, Run: c.RunID(), Limit: limits[g]}).Get(c.wctx, nil); err != nil {
			return fmt.Errorf("acquire a permit of %s: %w", g, err)
		}
	}
	for _, g := range groups {
		if granted[g] {
			continue
		}
		c.wait(runs.Wait{Kind: runs.ForPermit, Name: g})
		err := workflow.Await(c.wctx, func() bool { return granted[g] })
		c.unwait(runs.Wait{Kind: runs.ForPermit, Name: g})
		if err != nil {
			return err
		}
	}
	return nil
}

// release gives the run's permits back (on a disconnected context: also after a
// cancellation). A permit that cannot be given back is logged and recorded in the run's
// Problems; the semaphore reclaims it once it sees the run closed.
func (p *permitsPart) release(c *Context) {
	if len(p.groups) == 0 {
		return
	}
	dctx, _ := workflow.NewDisconnectedContext(c.wctx)
	actx := workflow.WithActivityOptions(dctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second,
		Summary: "release concurrency permits", RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 10}})
	id := workflow.GetInfo(c.wctx).WorkflowExecution.ID
	var failed bool
	for _, g := range p.groups {
		m := protocol.SemaphoreMessage{Group: g, Run: id}
		if err := workflow.ExecuteActivity(actx, protocol.SemaphoreSignalActivity, protocol.SemaphoreRelease, m).Get(dctx, nil); err != nil {
			c.Logger().Error("release a concurrency permit", "group", g, "error", err)
			c.run.state.Problems = append(c.run.state.Problems, fmt.Sprintf("release the permit of concurrency group %s: %s", g, errorMessage(err)))
			failed = true
		}
	}
	p.groups = nil
	if failed {
		if err := workflow.UpsertMemo(dctx, map[string]any{protocol.MemoState: cloneState(c.run.state)}); err != nil {
			c.Logger().Warn("keep final state in memo", "error", err)
		}
	}
}
