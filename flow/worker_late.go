package flow

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"
)

// Flows added after Start ("late" flows, e.g. a definition file added to a served
// directory) cannot be registered as workflow types: the SDK takes registrations only
// before a worker starts. Start registers one dynamic workflow on each of its Temporal
// workers instead, which the SDK runs for every workflow type registered by no other
// means; it looks the type up in the worker's table of late flows and runs the flow with
// the same run wrapper (runHandler) and configuration as a registered one, so a run of a
// late flow, its handlers, memo, search attributes and events are those of a registered
// flow, and its history replays against either registration (after a restart the flow is
// registered by name).
//
// A type that is not in the table is not served by this worker: the dynamic workflow
// panics, which fails the workflow task as an unknown type does without a dynamic
// workflow (under the default WorkflowPanicPolicy, BlockWorkflow), and Temporal retries
// it, here or on another worker of the queue, until a worker serves the type (with
// WorkerOptions.Worker.WorkflowPanicPolicy set to FailWorkflow the SDK fails such a run
// instead, as it fails every run whose workflow task fails). The table only grows, so a
// run that found its flow finds it on every replay.

// dynamicFn is a flow's workflow function in the form of a dynamic workflow.
type dynamicFn func(workflow.Context, converter.EncodedValues) (any, error)

// lateFlows is the table of the flows added after Start, by name, with the run
// configuration of the flows registered at Start.
type lateFlows struct {
	queue string
	cfg   runConfig

	mu  sync.RWMutex
	fns map[string]dynamicFn
}

// lookup is the late flow named name, or nil.
func (l *lateFlows) lookup(name string) dynamicFn {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.fns[name]
}

// add makes flows servable by the dynamic workflow.
func (l *lateFlows) add(flows []Definition) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range flows {
		l.fns[f.Name()] = f.dynamicWith(l.cfg)
	}
}

// AddFlows adds flows to the worker, as if given to NewWorker (a loader of declarative
// definitions adds what it loaded). Before Start it only adds them: Start checks and
// registers them. After Start, the flows are checked at once as Start checks its own
// (none is added when one is wrong) and served right away under their names without
// restarting the worker, through the dynamic workflow Start registered; AddFlows then
// republishes the catalog and ensures their schedules and once starts. A flow started by
// the runs of another flow (OnRunOf) cannot be added after Start: a worker learns the
// triggers of its flows when it starts.
func (w *Worker) AddFlows(flows ...Definition) error {
	late, err := w.addFlows(flows)
	if err != nil || !late {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.publish(ctx); err != nil {
		return fmt.Errorf("worker: add flows: publish catalog of %s: %w", w.opts.TaskQueue, err)
	}
	if err := w.ensureSchedules(ctx, flows); err != nil {
		return fmt.Errorf("worker: add flows: %w", err)
	}
	if err := w.ensureOnce(ctx, flows); err != nil {
		return fmt.Errorf("worker: add flows: %w", err)
	}
	return nil
}

// addFlows adds flows to the worker; late reports that it started, so that they were
// checked and are served by the dynamic workflow.
func (w *Worker) addFlows(flows []Definition) (late bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.started {
		w.flows = append(w.flows, flows...)
		return false, nil
	}
	err = checkFlows(w.opts, w.flows, flows)
	if err == nil {
		err = checkLate(flows)
	}
	if err != nil {
		return true, fmt.Errorf("worker: add flows: %w", err)
	}
	w.flows = append(w.flows, flows...)
	w.late.add(flows)
	return true, nil
}

// checkLate reports the flows that cannot be added after Start.
func checkLate(flows []Definition) error {
	var errs []error
	for _, f := range flows {
		for _, t := range f.Info().Triggers {
			errs = append(errs, fmt.Errorf("flow %s is started by runs of %s (a trigger): the worker learns triggers when it starts, so it cannot add this flow while it runs; restart it", f.Name(), t.Flow))
		}
	}
	return errors.Join(errs...)
}

// begin checks the worker's flows and marks it started: flows added from now on are
// late. It returns the flows to register.
func (w *Worker) begin() ([]Definition, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := checkFlows(w.opts, nil, w.flows); err != nil {
		return nil, err
	}
	cfg, err := runConfigOf(w.opts, w.flows)
	if err != nil {
		return nil, err
	}
	w.late = &lateFlows{queue: w.opts.TaskQueue, cfg: cfg, fns: map[string]dynamicFn{}}
	w.started = true
	return slices.Clone(w.flows), nil
}

// flowList is a copy of the worker's flows.
func (w *Worker) flowList() []Definition {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.flows)
}

// dynamicWorkflow is the dynamic workflow of the worker: it runs the late flow the run's
// workflow type names, or panics (a failed workflow task, retried) when there is none.
func (w *Worker) dynamicWorkflow(wctx workflow.Context, args converter.EncodedValues) (any, error) {
	name := workflow.GetInfo(wctx).WorkflowType.Name
	w.mu.Lock()
	late := w.late
	w.mu.Unlock()
	var fn dynamicFn
	if late != nil {
		fn = late.lookup(name)
	}
	if fn == nil {
		panic(unknownTypeMessage(name, w.opts.TaskQueue))
	}
	return fn(wctx, args)
}

// unknownTypeMessage is the panic of the dynamic workflow for a type the worker does not
// serve.
func unknownTypeMessage(name, queue string) string {
	return fmt.Sprintf("gateflow worker: no flow named %q is served by this worker of task queue %s: the workflow task fails and is retried until a worker of the queue serves it", name, queue)
}

// dynamicWith runs the flow as workflowWith does, decoding the input and encoding the
// output as the SDK does for a registered workflow function.
func (f *Flow[I, O]) dynamicWith(cfg runConfig) dynamicFn {
	return func(wctx workflow.Context, args converter.EncodedValues) (any, error) {
		var in I
		if args.HasValues() {
			if err := args.Get(&in); err != nil {
				return nil, fmt.Errorf("unable to decode the workflow function input payload with error: %w, function name: %v", err, f.Name())
			}
		}
		out, err := runHandler(wctx, f.info, cfg, f.handler, in)
		return resultOf(out), err
	}
}

// resultOf is out as the SDK encodes a workflow function's result: nothing for a nil
// pointer.
func resultOf[O any](out O) any {
	if v := reflect.ValueOf(&out).Elem(); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	return out
}
