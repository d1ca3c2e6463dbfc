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

// eventsChange is the workflow.GetVersion change of event delivery: version 1 delivers each
// event in an activity of its own (runs recorded so replay so); version 2 filters by the
// sinks' subscriptions and batches the events of a workflow task into one local activity.
const eventsChange = "gateflow.events"

// eventsPart delivers the run's events to the worker's sinks without holding the run up;
// the run waits for them before it ends.
type eventsPart struct {
	// version of eventsChange; 0: no deliveries (no sinks, or none wants this workflow).
	version int
	// wants tells the event types some sink wants from this run's workflow (version 2).
	wants func(events.Type) bool
	// seq numbers the run's events.
	seq int
	// deliveries are the version 1 activities in flight.
	deliveries []workflow.Future
	// batch holds the events emitted and not yet handed to a delivery (version 2);
	// flushing: a coroutine is delivering batches.
	batch    []events.Event
	flushing bool
}

// newEventsPart sets up event delivery for a run of workflow name on a worker with sinks.
// A run none of the sinks wants an event of delivers nothing and records nothing.
func newEventsPart(wctx workflow.Context, sinks []events.Sink, name string) *eventsPart {
	p := &eventsPart{}
	if !anyWants(sinks, name, "") {
		return p
	}
	// Runs started before the worker had event sinks replay without events.
	p.version = int(workflow.GetVersion(wctx, eventsChange, workflow.DefaultVersion, 2))
	p.wants = func(t events.Type) bool { return anyWants(sinks, name, t) }
	return p
}

func anyWants(sinks []events.Sink, workflow string, t events.Type) bool {
	for _, s := range sinks {
		if events.Wants(s, workflow, t) {
			return true
		}
	}
	return false
}

// eventActivities deliver events to the worker's sinks (run_events_deliver.go).
type eventActivities struct{ sinks []events.Sink }

// deliver is the version 1 activity: one event.
func (a eventActivities) deliver(ctx context.Context, e events.Event) error {
	a.deliverAll(ctx, []events.Event{e})
	return nil
}

// deliverBatch is the version 2 local activity: the events of one workflow task, in order.
func (a eventActivities) deliverBatch(ctx context.Context, batch []events.Event) error {
	a.deliverAll(ctx, batch)
	return nil
}

// emit sends an event to the worker's sinks, without holding the run up; end waits for
// the deliveries.
// emits reports whether emit delivers events of type t in this run: the step events'
// callers, which run on every step, ask first and build no event data for a run that no
// sink wants it from.
func (rt *runner) emits(t events.Type) bool {
	p := rt.events
	switch {
	case p.version == 0 || rt.setup.plan:
		return false
	case p.version == 1:
		return t != events.StepRetrying // runs recorded with version 1 did not emit it
	}
	return p.wants(t)
}

func (rt *runner) emit(wctx workflow.Context, t events.Type, step, status, message string, data map[string]any) {
	if !rt.emits(t) {
		return
	}
	p := rt.events
	p.seq++
	info := workflow.GetInfo(wctx)
	e := events.Event{
		ID: fmt.Sprintf("%s/%d", info.WorkflowExecution.RunID, p.seq), Type: t, Run: info.WorkflowExecution.ID,
		Workflow: rt.info.Name, Step: step, Status: status, Message: message, Data: data, At: runNow(wctx),
	}
	if p.version == 1 {
		dctx, _ := workflow.NewDisconnectedContext(wctx)
		actx := workflow.WithActivityOptions(dctx, workflow.ActivityOptions{
			StartToCloseTimeout: time.Minute,
			Summary:             "event " + string(t),
			RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute, MaximumAttempts: 20},
		})
		p.deliveries = append(p.deliveries, workflow.ExecuteActivity(actx, protocol.EventActivity, e))
		return
	}
	p.batch = append(p.batch, e)
	if !p.flushing {
		// The coroutine runs once the emitting one blocks: it takes every event emitted
		// until then (in this workflow task) as one batch.
		p.flushing = true
		dctx, _ := workflow.NewDisconnectedContext(rt.root)
		workflow.Go(dctx, p.flush)
	}
}

// flush delivers the batches, one local activity at a time (so in order), until none is
// left.
func (p *eventsPart) flush(ctx workflow.Context) {
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: deliveryBudget + 10*time.Second,
		// The activity retries each sink itself and reports no error; this covers a lost
		// or timed-out attempt.
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 2},
	})
	for len(p.batch) > 0 {
		batch := p.batch
		p.batch = nil
		if err := workflow.ExecuteLocalActivity(lctx, protocol.EventBatchActivity, batch).Get(ctx, nil); err != nil {
			workflow.GetLogger(ctx).Warn("deliver events", "events", len(batch), "error", err)
		}
	}
	p.flushing = false
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
	if p.flushing {
		_ = workflow.Await(dctx, func() bool { return !p.flushing })
	}
}
