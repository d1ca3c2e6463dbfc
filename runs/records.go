package runs

import (
	"fmt"
	"time"

	"github.com/gateflow/gateflow/gates"
	"github.com/gateflow/gateflow/internal/display"
)

// Gate is what a run keeps about a polled gate (ctx.Gate), in its step's record.
type Gate struct {
	// Type is the gate resolver's type ("http", "command", ...).
	Type string `json:"type"`
	// Polls is how many polls the gate made; FailedPolls how many of the last ones failed
	// in a row (the resolver returned an error).
	Polls       int `json:"polls"`
	FailedPolls int `json:"failed_polls,omitempty"`
	// PollInterval is the time between polls; Deadline when the gate stops waiting (none
	// without a Timeout).
	PollInterval time.Duration `json:"poll_interval,omitempty"`
	Deadline     *time.Time    `json:"deadline,omitempty"`
	// OnTimeout is what the deadline does (fail, approve, reject, continue).
	OnTimeout gates.OnTimeout `json:"on_timeout,omitempty"`
	// AllowManual says people may decide the gate with a vote.
	AllowManual bool `json:"allow_manual,omitempty"`
	// Message is what the last pending poll said, or why the last poll failed.
	Message string `json:"message,omitempty"`
	// Decision is how the gate ended (approved, rejected, timed_out), empty while it
	// waits.
	Decision gates.Outcome `json:"decision,omitempty"`
	// By is who decided: the resolver type, a person's identity (Manual) or "timeout".
	By     string `json:"by,omitempty"`
	Manual bool   `json:"manual,omitempty"`
	// Comment is why the gate was approved; Reason why it was rejected.
	Comment string `json:"comment,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// DecidedAt is when the gate ended.
	DecidedAt *time.Time `json:"decided_at,omitempty"`
}

// Text says how the gate stands, on one line: "http, 3 polls every 30s, until
// 2026-05-02T10:00:00Z (then fail), last: checks.state is \"running\"". flowctl show and
// the Web UI details print it for a gate that waits.
func (g Gate) Text() string {
	s := fmt.Sprintf("%s, %d poll%s", g.Type, g.Polls, plural(g.Polls))
	if g.PollInterval > 0 {
		s += " every " + g.PollInterval.String()
	}
	if g.Deadline != nil {
		s += fmt.Sprintf(", until %s (then %s)", g.Deadline.UTC().Format(time.RFC3339), g.OnTimeout)
	} else {
		s += ", no deadline"
	}
	if g.Decision != "" {
		s += ", " + string(g.Decision)
		if g.By != "" {
			s += " by " + g.By
		}
	}
	if g.Message != "" {
		s += ", last: " + display.Preview(display.OneLine(g.Message), 200)
	}
	return s
}

// Quality is what a run keeps about a quality gate (ctx.QualityGate), in
// Step.Quality; QualityGate returns it too.
type Quality struct {
	// Score is the score read from the output (0–100); Threshold the least that passes.
	Score     float64 `json:"score"`
	Threshold float64 `json:"threshold"`
	// Field is the path the score was read from ("" when the source was the number itself).
	Field string `json:"field,omitempty"`
	// Passed reports Score >= Threshold.
	Passed bool `json:"passed"`
	// OnFail is what a failing score did: "fail" or "continue".
	OnFail string `json:"on_fail"`
}

// Decision is what a run keeps about a decision (Decide), in Step.Decision.
type Decision struct {
	// Options are the choices offered; Choice the one picked.
	Options []string `json:"options"`
	Choice  string   `json:"choice,omitempty"`
	// Reason is why, as the agent or the person gave it (optional for people).
	Reason string `json:"reason,omitempty"`
	// By is who decided: the identity of the person who answered, or "agent:" and the
	// model that answered ("agent:gpt-4o-mini-2024-07-18").
	By string `json:"by,omitempty"`
	// AssignTo are the people and groups who could decide; empty when an agent decided.
	AssignTo []string `json:"assign_to,omitempty"`
}

// Label is what a run keeps about a label (Context.Label), in State.Labels: one
// record per label name and branch.
type Label struct {
	Name   string `json:"name"`
	Branch string `json:"branch,omitempty"`
	// Visits is how often the label's latest entry ran its body so far (1 on the first
	// visit); MaxVisits the most it may.
	Visits    int `json:"visits"`
	MaxVisits int `json:"max_visits"`
	// Reentries counts the visits after a Goto over the run, and LastStep names the step
	// whose failure made the latest one.
	Reentries int    `json:"reentries,omitempty"`
	LastStep  string `json:"last_step,omitempty"`
}

// cachedDetail is a cached step's age as the record shows it: "cached 3m ago".
func cachedDetail(age time.Duration) string {
	switch {
	case age < time.Second:
		return "cached <1s ago"
	case age < time.Minute:
		return fmt.Sprintf("cached %ds ago", int(age.Seconds()))
	case age < time.Hour:
		return fmt.Sprintf("cached %dm ago", int(age.Minutes()))
	case age < 48*time.Hour:
		return fmt.Sprintf("cached %dh ago", int(age.Hours()))
	}
	return fmt.Sprintf("cached %dd ago", int(age.Hours()/24))
}

// plural is "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
