package core

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrNotValidated is matched by a decision (vote, answer, budget raise, pause) the
	// client sent but whose run did not answer in time, typically because its worker is
	// down: the Temporal server keeps it (in memory: a restart of the server drops it), and
	// the run checks it (and counts it if it is valid) when a worker is back. It is neither
	// accepted nor refused yet.
	ErrNotValidated = errors.New("submitted, not yet validated")
	// ErrNoCatalog is returned when no worker has published a catalog on the task queue.
	ErrNoCatalog = errors.New("no worker has published a catalog on this task queue (is flow-worker running with the same --task-queue?)")
)

// UnknownWorkflowError refuses a start whose flow name no worker serves on the queue.
type UnknownWorkflowError struct {
	Name      string
	TaskQueue string
	Known     []string
	// Removed is set when the flow is known but served no more for new runs (its
	// WorkflowInfo.Removed).
	Removed string
}

// Error implements error.
func (e *UnknownWorkflowError) Error() string {
	if e.Removed != "" {
		return fmt.Sprintf("workflow %q on task queue %s is not served for new runs: %s", e.Name, e.TaskQueue, e.Removed)
	}
	known := "none"
	if len(e.Known) > 0 {
		known = strings.Join(e.Known, ", ")
	}
	return fmt.Sprintf("unknown workflow %q on task queue %s (known: %s)", e.Name, e.TaskQueue, known)
}

// InputError refuses a start, or another call of the client, whose input or options are
// not valid (the flow's input schema, an ID, a label, an answer too big...). Nothing was
// sent.
type InputError struct {
	Workflow string
	Err      error
}

// Error implements error.
func (e *InputError) Error() string { return fmt.Sprintf("bad input for %s: %v", e.Workflow, e.Err) }

// Unwrap returns the cause.
func (e *InputError) Unwrap() error { return e.Err }
