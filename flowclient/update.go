package flowclient

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	updatepb "go.temporal.io/api/update/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc/codes"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/protocol"
)

// pendingCheck bounds how long a decision the run did not answer in time takes to ask the
// server whether it holds it (the server answers at once).
const pendingCheck = 3 * time.Second

// retryPause is the pause before an Update is sent again, with the same ID, when the
// server dropped the wait before the decision's deadline.
const retryPause = 200 * time.Millisecond

// PendingError is a decision (vote, answer, budget raise, pause, cancel) the run did not
// answer within Options.DecisionTimeout, typically because its worker is down. It matches
// core.ErrNotValidated.
//
// Queued says the Temporal server holds it (it was admitted, not yet accepted by the run):
// the server hands it to the run when a worker polls again, and the run then checks it and
// applies it if it is valid. The server keeps admitted Updates in memory only: if it
// restarts, or unloads the run (from its cache, or to move it to another shard) first,
// the decision is dropped without effect. When Queued is false the server could not be asked: the decision may be queued
// or not.
type PendingError struct {
	Run     string
	What    string // "vote on ship", "input release-notes", "pause"
	Timeout time.Duration
	Queued  bool
}

// Error implements error.
func (e *PendingError) Error() string {
	held := "the Temporal server has queued it"
	if !e.Queued {
		held = "the Temporal server could not tell whether it holds it, so it may be queued"
	}
	return fmt.Sprintf("%s on run %s: %v: the worker is not answering (no answer within %s); %s "+
		"and the run will check it, and count it if it is valid, when a worker comes back "+
		"(unless the server drops it first: it keeps it in memory only, until a restart or until it unloads the run; "+
		"`flowctl show %s` tells whether it counted)",
		e.What, e.Run, core.ErrNotValidated, e.Timeout, held, e.Run)
}

// Is matches core.ErrNotValidated.
func (e *PendingError) Is(target error) bool { return target == core.ErrNotValidated }

// NotDeliveredError is a decision the server did not take before DecisionTimeout: it holds
// no trace of it, so nothing happens later; sending it again is safe.
type NotDeliveredError struct {
	Run     string
	What    string
	Timeout time.Duration
}

// Error implements error.
func (e *NotDeliveredError) Error() string {
	return fmt.Sprintf("%s on run %s: not delivered: the Temporal server did not take it within %s and holds no trace of it; nothing will happen, send it again",
		e.What, e.Run, e.Timeout)
}

// update sends the Update name with arg to run, waits for its result and decodes it into
// out; a refusal is a *RefusedError about what.
//
// The run's answer is awaited for at most Options.DecisionTimeout (when ctx has no
// earlier deadline). A decision the run does not answer by then is a *PendingError when
// the server holds it (or cannot be asked), a *NotDeliveredError when it does not. Which
// it is comes from the error's type and from asking the server, never from the text.
func (c *Client) update(ctx context.Context, run, what, name string, arg, out any) error {
	if err := protocol.CheckRunID(run); err != nil {
		return &core.InputError{Workflow: what, Err: err}
	}
	id, err := updateID()
	if err != nil {
		return fmt.Errorf("%s on run %s: %w", what, run, err)
	}
	uctx, cancel := context.WithTimeout(ctx, c.opts.DecisionTimeout)
	defer cancel()
	for {
		var h client.WorkflowUpdateHandle
		h, err = c.tc.UpdateWorkflow(uctx, client.UpdateWorkflowOptions{
			UpdateID: id, WorkflowID: run, UpdateName: name, Args: []any{arg},
			WaitForStage: client.WorkflowUpdateStageCompleted,
		})
		if err == nil {
			err = h.Get(uctx, out)
		}
		if err == nil {
			return nil
		}
		if !unanswered(err) {
			return c.refusal(ctx, run, what, err)
		}
		if !sleepCtx(uctx, retryPause) {
			// The deadline (or the caller's cancellation): the same ID is never sent again.
			return c.pending(ctx, run, what, id, out)
		}
		// The server or the connection dropped the wait early: ask again with the same ID,
		// which the server deduplicates.
	}
}

// pending says what became of the Update id the run did not answer in time. The server is
// asked for the stage the Update has reached, without waiting: it answers at once
// admitted (it holds the Update, no worker has taken it), accepted or completed (the run
// has answered meanwhile: its outcome is read), or NotFound (it holds no Update of that
// ID). Only when the server cannot be asked is the answer "may be queued".
func (c *Client) pending(ctx context.Context, run, what, id string, out any) error {
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pendingCheck)
	defer cancel()
	resp, err := c.tc.WorkflowService().PollWorkflowExecutionUpdate(pctx, &workflowservice.PollWorkflowExecutionUpdateRequest{
		Namespace:  c.opts.Namespace,
		UpdateRef:  &updatepb.UpdateRef{WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: run}, UpdateId: id},
		Identity:   c.opts.Identity,
		WaitPolicy: &updatepb.WaitPolicy{LifecycleStage: enumspb.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED},
	})
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &nf):
		return &NotDeliveredError{Run: run, What: what, Timeout: c.opts.DecisionTimeout}
	case err != nil && (unanswered(err) || errors.As(err, new(*serviceerror.Unavailable))):
		return &PendingError{Run: run, What: what, Timeout: c.opts.DecisionTimeout}
	case err != nil:
		return c.refusal(pctx, run, what, err)
	case resp.GetStage() == enumspb.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED:
		return &PendingError{Run: run, What: what, Timeout: c.opts.DecisionTimeout, Queued: true}
	}
	// Accepted or completed: the run has answered; read the outcome as the SDK decodes it.
	err = c.tc.GetWorkflowUpdateHandle(client.GetWorkflowUpdateHandleOptions{WorkflowID: run, UpdateID: id}).Get(pctx, out)
	switch {
	case err == nil:
		return nil
	case unanswered(err):
		return &PendingError{Run: run, What: what, Timeout: c.opts.DecisionTimeout, Queued: true}
	}
	return c.refusal(pctx, run, what, err)
}

// unanswered reports an error that says only that the wait ended (a deadline, a
// cancellation, of this process or of the server), by its type or gRPC code.
func unanswered(err error) bool {
	var sdk *client.WorkflowUpdateServiceTimeoutOrCanceledError
	if errors.As(err, &sdk) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	switch serviceerror.ToStatus(err).Code() {
	case codes.DeadlineExceeded, codes.Canceled:
		return true
	}
	return false
}

// sleepCtx waits d and reports whether ctx is still live.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return ctx.Err() == nil
	}
}

// updateID is a fresh Update ID, so that the Update can be sent again and asked about.
func updateID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("update ID: %w", err)
	}
	return "gateflow-" + hex.EncodeToString(b[:]), nil
}
