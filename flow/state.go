package flow

import (
	"fmt"
	"strings"
	"time"
)

// Status is a run's status, kept in the FlowStatus search attribute and in RunState.
type Status string

// Run statuses.
const (
	StatusPending          Status = "pending"
	StatusRunning          Status = "running"
	StatusAwaitingApproval Status = "awaiting_approval"
	StatusAwaitingInput    Status = "awaiting_input"
	StatusWaitingSignal    Status = "waiting_signal"
	StatusSleeping         Status = "sleeping"
	StatusBudgetPaused     Status = "budget_paused"
	StatusCompleted        Status = "completed"
	StatusWarning          Status = "warning"
	StatusFailed           Status = "failed"
	StatusRejected         Status = "rejected"
	StatusCancelled        Status = "cancelled"
	StatusBudgetExceeded   Status = "budget_exceeded"
)

// Statuses lists every run status in lifecycle order.
var Statuses = []Status{
	StatusPending, StatusRunning, StatusAwaitingApproval, StatusAwaitingInput, StatusWaitingSignal,
	StatusSleeping, StatusBudgetPaused, StatusCompleted, StatusWarning, StatusFailed, StatusRejected,
	StatusCancelled, StatusBudgetExceeded,
}

// ParseStatus checks that s names a run status.
func ParseStatus(s string) (Status, error) {
	for _, st := range Statuses {
		if string(st) == s {
			return st, nil
		}
	}
	names := make([]string, len(Statuses))
	for i, st := range Statuses {
		names[i] = string(st)
	}
	return "", fmt.Errorf("want one of %s", strings.Join(names, ", "))
}

// Terminal reports whether a run with this status has ended.
func (s Status) Terminal() bool {
	switch s {
	case StatusCompleted, StatusWarning, StatusFailed, StatusRejected, StatusCancelled, StatusBudgetExceeded:
		return true
	}
	return false
}

// StepKind says what a step does.
type StepKind string

// Step kinds.
const (
	KindShell StepKind = "shell"
)

// StepStatus is the status of one step.
type StepStatus string

// Step statuses.
const (
	StepRunning   StepStatus = "running"
	StepCompleted StepStatus = "completed"
	StepFailed    StepStatus = "failed"
)

// StepRecord is what a run keeps about one step. It is part of RunState.
type StepRecord struct {
	// Name is the step's name as the handler gave it; ActivityID is the Temporal activity
	// ID, the name itself or, when the name was used before in the run, name#N.
	Name       string     `json:"name"`
	ActivityID string     `json:"activity_id"`
	Kind       StepKind   `json:"kind"`
	Status     StepStatus `json:"status"`
	// Attempt is the activity attempt that produced the outcome (1 for the first).
	Attempt   int        `json:"attempt"`
	StartedAt time.Time  `json:"started_at"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
	Error     string     `json:"error,omitempty"`
	// ExitCode is set for shell steps that ran to an exit.
	ExitCode *int `json:"exit_code,omitempty"`
	// Output is a short preview of what the step produced.
	Output string `json:"output,omitempty"`
}

// Duration is how long the step took, or has been running until now.
func (r StepRecord) Duration(now time.Time) time.Duration {
	if r.EndedAt != nil {
		return r.EndedAt.Sub(r.StartedAt)
	}
	return now.Sub(r.StartedAt)
}

// RunState is a run's state as the Query gateflow.state returns it, and as it is kept in
// the run's Memo when the run ends.
type RunState struct {
	Workflow  string       `json:"workflow"`
	Version   string       `json:"version,omitempty"`
	Status    Status       `json:"status"`
	StartedAt time.Time    `json:"started_at"`
	EndedAt   *time.Time   `json:"ended_at,omitempty"`
	Error     string       `json:"error,omitempty"`
	Steps     []StepRecord `json:"steps"`
}

// beginStep appends a running step and returns its index. Names used before in the run get
// a #N suffix in their activity ID so every activity of the run has its own ID.
func (s *RunState) beginStep(name string, kind StepKind, now time.Time) int {
	uses := 0
	for _, st := range s.Steps {
		if st.Name == name {
			uses++
		}
	}
	id := name
	if uses > 0 {
		id = fmt.Sprintf("%s#%d", name, uses+1)
	}
	s.Steps = append(s.Steps, StepRecord{
		Name: name, ActivityID: id, Kind: kind, Status: StepRunning, Attempt: 1, StartedAt: now,
	})
	return len(s.Steps) - 1
}

// endStep records a step's outcome.
func (s *RunState) endStep(i int, now time.Time, status StepStatus, attempt int, errMsg, output string, exitCode *int) {
	st := &s.Steps[i]
	st.Status = status
	st.EndedAt = &now
	if attempt > 0 {
		st.Attempt = attempt
	}
	st.Error = errMsg
	st.Output = output
	st.ExitCode = exitCode
}

// finish records the run's end.
func (s *RunState) finish(now time.Time, status Status, errMsg string) {
	s.Status = status
	s.EndedAt = &now
	s.Error = errMsg
}

// Preview shortens s to at most n runes for step records and tables, marking the cut.
func Preview(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n <= 1 {
		return "…"
	}
	return string(r[:n-1]) + "…"
}
