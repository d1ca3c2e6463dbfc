package flow

import (
	"context"
	"fmt"
	"time"

	"github.com/gateflow/gateflow/events"
	"github.com/gateflow/gateflow/internal/protocol"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// eventsPart delivers the run's events to the worker's sinks, as activities that do not
// hold the run up; the run waits for them before it ends.
type eventsPart struct {
	// on: the worker has event sinks (and the run started after they were added).
	on bool
	// seq numbers the run's events; deliveries are the activities in flight.
	seq        int
	deliveries []workflow.Future
}

// eventActivities deliver an event to every sink of the worker.
type eventActivities struct{ sinks []events.Sink }

func (a eventActivities) deliver(ctx context.Context, e events.Event) error {
	for _, s := range a.sinks {
		if err := s.Deliver(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

// emit sends an event to the worker's sinks, without holding the run up; end waits for
// the deliveries.
func (rt *runner) emit(wctx workflow.Context, t events.Type, step, status, message string, data map[string]any) {
	if !rt.events.on || rt.plan {
		return
	}
	rt.events.seq++
	info := workflow.GetInfo(wctx)
	e := events.Event{
		ID: fmt.Sprintf("%s/%d", info.WorkflowExecution.RunID, rt.events.seq), Type: t, Run: info.WorkflowExecution.ID,
		Workflow: rt.info.Name, Step: step, Status: status, Message: message, Data: data, At: workflow.Now(wctx),
	}
	dctx, _ := workflow.NewDisconnectedContext(wctx)
	actx := workflow.WithActivityOptions(dctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		Summary:             "event " + string(t),
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute, MaximumAttempts: 20},
	})
	rt.events.deliveries = append(rt.events.deliveries, workflow.ExecuteActivity(actx, protocol.EventActivity, e))
}

// await waits for the run's event deliveries before it ends.
func (p *eventsPart) await(wctx workflow.Context) {
	dctx, _ := workflow.NewDisconnectedContext(wctx)
	for _, f := range p.deliveries {
		if err := f.Get(dctx, nil); err != nil {
			workflow.GetLogger(wctx).Warn("deliver event", "error", err)
		}
	}
	p.deliveries = nil
}
