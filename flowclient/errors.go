package flowclient

import (
	"fmt"
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
