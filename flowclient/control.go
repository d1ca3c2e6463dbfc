package flowclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/decisions"
	"github.com/gateflow/gateflow/internal/entity"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/startplan"
)

// CancelRequest asks Client.Cancel to cancel a run.
type CancelRequest struct {
	// Run is the run's ID.
	Run string
	// Reason says why; it shows in the run's error ("cancelled by alice: reason").
	Reason string
	// By is who cancels; empty means the client's identity.
	By string
}

// Cancel cancels a run (and its children, which its cancellation reaches) with the Update
// gateflow.cancel, so the run checks the request first: the sender's proof when its worker
// verifies decisions (signed with ClientOptions.Key, or ClientOptions.IdentityToken), and
// the policy's rule for who may cancel. Then OnError steps run, and the run ends cancelled
// with "by WHO: reason" as its error. A refused cancellation (ended run, not allowed, no
// proof) returns a *RefusedError and leaves no trace; an unknown run a *RunNotFoundError;
// a run that does not answer within DecisionTimeout ErrNotValidated. A run of a worker
// from before the Update gets Temporal's cancellation request, with who and why as the
// Signal gateflow.cancel.
func (c *Client) Cancel(ctx context.Context, r CancelRequest) error {
	msg := protocol.RunCancel{By: c.who(r.By), Reason: r.Reason}
	d, derr := decisions.Cancel(c.opts.Namespace, r.Run, msg)
	proof, err := c.proof(ctx, r.Run, "cancel", d, derr)
	if err != nil {
		return err
	}
	msg.Proof = proof
	var status runs.Status
	err = c.update(ctx, r.Run, "cancel", protocol.UpdateCancel, msg, &status)
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.HasPrefix(refused.Reason, "unknown update") {
		return err
	}
	if err := c.tc.SignalWorkflow(ctx, r.Run, "", protocol.SignalCancel, protocol.CancelReason{By: msg.By, Reason: r.Reason}); err != nil {
		return c.refusal(ctx, r.Run, "cancel", err)
	}
	if err := c.tc.CancelWorkflow(ctx, r.Run, ""); err != nil {
		return c.refusal(ctx, r.Run, "cancel", err)
	}
	return nil
}

// Plan runs the flow name with input on a worker with every step stubbed: nothing runs,
// approvals are assumed granted, inputs and signals give zero values, and the returned
// state lists the steps in order with their kinds, options and the money they would
// reserve. Branches that depend on step results follow the zero values.
func (c *Client) Plan(ctx context.Context, name string, input any) (*runs.Description, error) {
	run, err := c.start(ctx, name, input, core.StartOptions{ID: "plan-" + startplan.NewRunID(name)}, true)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	return c.Wait(ctx, run.ID)
}

// Paused lists the paused workflow types of the client's task queue.
func (c *Client) Paused(ctx context.Context) ([]runs.PausedType, error) {
	list, err := entity.ReadPaused(ctx, c.tc, c.opts.TaskQueue)
	if err != nil {
		return nil, err
	}
	out := make([]runs.PausedType, len(list))
	for i, p := range list {
		out[i] = runs.PausedType(p)
	}
	return out, nil
}

// PauseRequest asks Client.Pause to hold new runs of a workflow type, or Client.Resume to
// let them go; or Client.PauseRun to pause one run, and Client.ResumeRun to resume it.
type PauseRequest struct {
	// Workflow is the flow's name; it must be in the task queue's catalog. Pause and
	// Resume read it; PauseRun and ResumeRun need it empty.
	Workflow string
	// Run is the run's ID, for PauseRun and ResumeRun; Pause and Resume need it empty.
	Run string
	// Reason says why (shown by flowctl workflows, and in the paused run's state); Resume
	// and ResumeRun ignore it.
	Reason string
	// By is who pauses or resumes; empty means the client's identity.
	By string
}

// Pause holds new runs of r.Workflow in pending until Resume; running ones go on. It
// returns once clients see the type paused.
func (c *Client) Pause(ctx context.Context, r PauseRequest) error {
	return c.control(ctx, protocol.ControlPause, r)
}

// Resume releases the held runs of r.Workflow and lets new ones start.
func (c *Client) Resume(ctx context.Context, r PauseRequest) error {
	r.Reason = ""
	return c.control(ctx, protocol.ControlResume, r)
}

func (c *Client) control(ctx context.Context, signal string, r PauseRequest) error {
	if r.Run != "" {
		return &core.InputError{Workflow: signal + " " + r.Workflow, Err: errors.New("give a workflow type or a run, not both (PauseRun and ResumeRun take a run)")}
	}
	cat, err := c.Workflows(ctx)
	if err != nil {
		return err
	}
	if _, ok := cat.Lookup(r.Workflow); !ok {
		return &core.UnknownWorkflowError{Name: r.Workflow, TaskQueue: c.opts.TaskQueue, Known: cat.Names()}
	}
	r.By = c.who(r.By)
	m := protocol.ControlMessage{Workflow: r.Workflow, By: r.By, Reason: r.Reason}
	if err := entity.SignalControl(ctx, c.tc, c.opts.TaskQueue, signal, m); err != nil {
		return fmt.Errorf("%s %s: %w", signal, r.Workflow, err)
	}
	// Wait until clients see it, so a start right after a pause is held.
	for i := 0; i < 100; i++ {
		list, err := c.Paused(ctx)
		if err == nil && isPaused(list, r.Workflow) == (signal == protocol.ControlPause) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s %s: not visible yet", signal, r.Workflow)
}

func isPaused(list []runs.PausedType, name string) bool {
	for _, p := range list {
		if strings.EqualFold(p.Workflow, name) {
			return p.Workflow == name
		}
	}
	return false
}
