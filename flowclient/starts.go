package flowclient

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/startplan"
	"github.com/gateflow/gateflow/signals"
)

// RestartOnce starts the once start (flow.Once) of the flow name again: a new run with the
// once start's workflow ID and input, after the last one ended. It terminates nothing: while
// a run with that ID runs it is refused with a *RunExistsError. Otherwise it is a start as
// Client.Start makes it (the same checks, the monthly quotas reserved), with the ID reuse
// that Temporal allows by default (ALLOW_DUPLICATE). A flow without a once start is
// refused with an *core.InputError.
func (c *Client) RestartOnce(ctx context.Context, name string) (*core.Run, error) {
	if err := startplan.ValidateName(name); err != nil {
		return nil, fmt.Errorf("restart once: %w", err)
	}
	cat, err := c.Workflows(ctx)
	if err != nil {
		return nil, fmt.Errorf("restart once %s: %w", name, err)
	}
	info, ok := cat.Lookup(name)
	if !ok {
		return nil, &core.UnknownWorkflowError{Name: name, TaskQueue: c.opts.TaskQueue, Known: cat.Names()}
	}
	if info.Removed != "" {
		return nil, &core.UnknownWorkflowError{Name: name, TaskQueue: c.opts.TaskQueue, Removed: info.Removed}
	}
	if info.Once == nil {
		return nil, &core.InputError{Workflow: name, Err: errors.New("the flow has no once start (flow.Once)")}
	}
	return c.Start(ctx, name, info.Once.Input, core.StartOptions{ID: protocol.OnceID(name, c.opts.TaskQueue)})
}

// SignalStart sends the signal e to the run of the flow name that e's key starts (see
// flow.OnSignal), starting it with e's payload as input if it does not run yet (Temporal's
// SignalWithStartWorkflow, workflow ID "<flow>/on-signal/<name>/<key>"). The run gets e as
// any signal (WaitSignal on e.Name and e.Key receives it). Checks, each with one clear
// error, in order: the envelope (*core.InputError), that a worker serves the flow
// (*core.UnknownWorkflowError), that the flow starts on e.Name (*core.InputError) and the payload
// against the flow's input type (*core.InputError). A key starts one run: once it ended, a
// signal start with the same key is refused with a *RunExistsError. The run checks the
// monthly quotas itself; a paused flow's run is held in pending, as Client.Start holds it.
func (c *Client) SignalStart(ctx context.Context, name string, e signals.Envelope) (*core.Run, error) {
	e, err := c.envelope(e)
	if err != nil {
		return nil, err
	}
	if err := startplan.ValidateName(name); err != nil {
		return nil, fmt.Errorf("signal start: %w", err)
	}
	cat, err := c.Workflows(ctx)
	if err != nil {
		return nil, fmt.Errorf("signal start %s: %w", name, err)
	}
	info, ok := cat.Lookup(name)
	if !ok {
		return nil, &core.UnknownWorkflowError{Name: name, TaskQueue: c.opts.TaskQueue, Known: cat.Names()}
	}
	if info.Removed != "" {
		return nil, &core.UnknownWorkflowError{Name: name, TaskQueue: c.opts.TaskQueue, Removed: info.Removed}
	}
	if !slices.Contains(info.SignalStarts, e.Name) {
		return nil, &core.InputError{Workflow: name, Err: fmt.Errorf("the flow is not started by the signal %s (flow.OnSignal)", e.Name)}
	}
	id := protocol.SignalStartID(name, e.Name, e.Key)
	p, err := startplan.New(cat, c.starter(), name, e.Payload, core.StartOptions{ID: id, CreatedBy: e.Sender}, false, time.Now())
	if err != nil {
		return nil, err
	}
	p.RunOpts.QuotaChecked = false
	paused, err := c.Paused(ctx)
	if err != nil {
		return nil, fmt.Errorf("signal start %s: %w", name, err)
	}
	if isPaused(paused, name) {
		p.Hold()
	}
	o := p.Options()
	o.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
	o.WorkflowIDConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING
	we, err := c.tc.SignalWithStartWorkflow(ctx, id, protocol.SignalName, e, o, name, p.Input)
	if err != nil {
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		if errors.As(err, &started) {
			return nil, &RunExistsError{ID: id, RunID: started.RunId,
				Reason: fmt.Sprintf("the run %s that key %q of signal %s started has ended: a key starts one run", id, e.Key, e.Name)}
		}
		return nil, fmt.Errorf("signal start %s: %w", name, err)
	}
	return &core.Run{ID: we.GetID(), RunID: we.GetRunID(), Workflow: name}, nil
}
