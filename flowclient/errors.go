package flowclient

import (
	"fmt"

	"github.com/gateflow/gateflow/internal/flowlink"
)

// RunExistsError refuses a start whose ID belongs to a live run.
type RunExistsError struct {
	ID    string
	RunID string
	// Reason, when set, says why instead (an exclusive concurrency key held by ID).
	Reason string
}

// Error implements error.
func (e *RunExistsError) Error() string {
	if e.Reason != "" {
		return e.Reason
	}
	return fmt.Sprintf("run %s already exists and is still running", e.ID)
}

// RunNotFoundError is returned for a run ID the server does not know.
type RunNotFoundError struct{ ID string }

// Error implements error.
func (e *RunNotFoundError) Error() string { return fmt.Sprintf("run %s not found", e.ID) }

// RefusedError is a vote, answer or signal the run (or the client, before sending) refused;
// Reason says why. Nothing was recorded.
type RefusedError struct {
	Run    string
	What   string // "vote on ship", "input release-notes", "signal deploy-done"
	Reason string
}

// Error implements error.
func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s refused by run %s: %s", e.What, e.Run, e.Reason)
}

// UnknownWorkflowError refuses a start whose flow name no worker serves on the queue.
type UnknownWorkflowError struct {
	Name      string
	TaskQueue string
	Known     []string
	// Removed is set when the flow is known but served no more for new runs (its
	// flow.WorkflowInfo.Removed).
	Removed string
}

// Error implements error.
func (e *UnknownWorkflowError) Error() string {
	return (*flowlink.UnknownWorkflowError)(e).Error()
}

// InputError refuses a start, or another call of the client, whose input or options are
// not valid (the flow's input schema, an ID, a label, an answer too big...). Nothing was
// sent.
type InputError struct {
	Workflow string
	Err      error
}

// Error implements error.
func (e *InputError) Error() string { return (*flowlink.InputError)(e).Error() }

// Unwrap returns the cause.
func (e *InputError) Unwrap() error { return e.Err }
