package runs

import (
	"fmt"
	"strings"
)

// WaitKind is what a run can wait for.
type WaitKind string

// Wait kinds.
const (
	// ForApproval: people's votes on an approval gate (Name is the gate).
	ForApproval WaitKind = "approval"
	// ForInput: an answer to a human input request (Name is the request).
	ForInput WaitKind = "input"
	// ForSignal: a signal (Name, and Key when the wait is keyed).
	ForSignal WaitKind = "signal"
	// ForBudget: a higher money cap for a run paused by its budget.
	ForBudget WaitKind = "budget"
	// ForResume: its paused workflow type to be resumed (Name is the type), or, without a
	// Name, the run itself, paused with Client.PauseRun.
	ForResume WaitKind = "resume"
	// ForPermit: a permit of a concurrency group (Name is the group).
	ForPermit WaitKind = "permit"
	// ForGate: a polled gate to decide (Name is the gate, Key its resolver type).
	ForGate WaitKind = "gate"
	// ForCapacity: a rate-limited provider to have room again (Name is the step).
	ForCapacity WaitKind = "capacity"
)

// Wait is one thing a run waits for. Its String form is what State.Waiting and the
// FlowWaiting search attribute hold: "approval:ship", "input:release-notes",
// "signal:deploy-done", "signal:deploy-done/v1.2.3", "budget", "resume:release",
// "resume" (the run itself is paused), "permit:deploys", "gate:checks/http",
// "capacity:summarize". Filter runs with it in
// `flowctl list --waiting-for` or a visibility query such as FlowWaiting = 'approval:ship'.
type Wait struct {
	Kind WaitKind `json:"kind"`
	Name string   `json:"name,omitempty"`
	Key  string   `json:"key,omitempty"`
}

// String is the wait as State.Waiting and FlowWaiting hold it.
func (w Wait) String() string {
	s := string(w.Kind)
	if w.Name != "" {
		s += ":" + w.Name
	}
	if w.Key != "" {
		s += "/" + w.Key
	}
	return s
}

// ParseWait reads a wait in its String form.
func ParseWait(s string) (Wait, error) {
	kind, rest, _ := strings.Cut(s, ":")
	w := Wait{Kind: WaitKind(kind)}
	switch w.Kind {
	case ForResume:
		if s == string(ForResume) {
			return w, nil // the run itself is paused
		}
		w.Name = rest
	case ForBudget:
		if rest != "" {
			return Wait{}, fmt.Errorf("wait %q: budget takes no name", s)
		}
		return w, nil
	case ForSignal, ForGate:
		w.Name, w.Key, _ = strings.Cut(rest, "/")
	case ForApproval, ForInput, ForPermit, ForCapacity:
		w.Name = rest
	default:
		return Wait{}, fmt.Errorf("wait %q: want approval:GATE, input:NAME, signal:NAME[/KEY], budget, resume, resume:WORKFLOW, permit:GROUP, gate:NAME[/TYPE] or capacity:STEP", s)
	}
	if w.Name == "" {
		return Wait{}, fmt.Errorf("wait %q: the name is empty", s)
	}
	return w, nil
}

// Status is the run's status while it waits for w alone.
func (w Wait) Status() Status {
	switch w.Kind {
	case ForApproval:
		return StatusAwaitingApproval
	case ForInput:
		return StatusAwaitingInput
	case ForSignal:
		return StatusWaitingSignal
	case ForBudget:
		return StatusBudgetPaused
	case ForGate:
		return StatusAwaitingGate
	case ForCapacity:
		return StatusWaitingCapacity
	case ForResume:
		if w.Name == "" {
			return StatusPaused
		}
	}
	return StatusPending
}

// Command is the flowctl command that ends the wait of run, with placeholders for what
// the person chooses.
func (w Wait) Command(run string) string {
	switch w.Kind {
	case ForApproval:
		return fmt.Sprintf("flowctl approve %s %s", run, w.Name)
	case ForInput:
		return fmt.Sprintf("flowctl input %s %s --data '{...}'", run, w.Name)
	case ForSignal:
		if w.Key != "" {
			return fmt.Sprintf("flowctl signal %s --key %s --data '{...}'", w.Name, w.Key)
		}
		return fmt.Sprintf("flowctl signal %s --run %s --data '{...}'", w.Name, run)
	case ForBudget:
		return fmt.Sprintf("flowctl budget raise %s --to USD", run)
	case ForGate:
		return fmt.Sprintf("flowctl approve %s %s", run, w.Name) // when the gate allows a manual decision
	case ForResume:
		if w.Name == "" {
			return "flowctl resume " + run
		}
		return "flowctl resume " + w.Name
	}
	return ""
}
