package flow

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gateflow/gateflow/gates"
	"github.com/gateflow/gateflow/internal/display"
)

// Gate opens the polled gate name and waits until its resolver (the worker's resolver of
// type req.Type) decides it, a person does (req.AllowManual), or its deadline passes.
//
// The gate is one step of kind gate. Each poll is one activity, gateflow.gate.poll, that
// runs the resolver on a worker; between polls the run sleeps on a durable timer of
// req.PollInterval, so a gate that waits for hours holds no worker and survives restarts.
// Meanwhile the run's status is awaiting_gate and it waits for "gate:NAME/TYPE"
// (RunState.Waiting, the FlowWaiting search attribute).
//
// It returns the gate's Result and, as its error:
//
//   - nil when the gate was approved (by a poll, a person, or the deadline with
//     gates.ApproveOnTimeout), or the deadline passed with gates.ContinueOnTimeout
//     (Result.Outcome is then gates.OutcomeTimedOut);
//   - a *gates.RejectedError (errors.Is gates.ErrRejected) when a poll or a person
//     rejected it, or the deadline did with gates.RejectOnTimeout; returned by the
//     handler, it ends the run as rejected;
//   - a *gates.TimedOutError (errors.Is gates.ErrTimedOut) when the deadline passed with
//     gates.FailOnTimeout, the default (step status timed_out);
//   - a *StepError when the gate could not be polled: a request that does not validate or
//     names a type the worker has no resolver for (ErrorInvalidStep; no activity is
//     scheduled), params the resolver refuses, gates.MaxFailedPolls failed polls in a row,
//     or the run's cancellation.
//
// With req.AllowManual, `flowctl approve RUN NAME` and `flowctl reject RUN NAME --reason
// ...` (Client.Vote) decide the gate at once, even in the middle of a sleep or a poll, and
// the Result and the step record who did. Without it such votes are refused and leave no
// trace. Votes sent before the run reached the gate are applied when it opens (or
// recorded as refused in RunState.Refused).
func (c *Context) Gate(name string, req gates.Request) (gates.Result, error) {
	return c.runGate(name, req)
}

// GateRecord is what a run keeps about a polled gate (ctx.Gate), in its step's record.
type GateRecord struct {
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
func (g GateRecord) Text() string {
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

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// UsesGates declares the polled gate types the flow's handler passes to ctx.Gate, so that
// a worker that serves the flow without a resolver for one of them refuses to start
// (Worker.Validate names the flow, the type and the types it has) instead of the gate
// failing when a run reaches it. A blank type is an error of the definition.
func UsesGates(types ...string) Option {
	return func(i *WorkflowInfo) error {
		for _, t := range types {
			if strings.TrimSpace(t) == "" {
				return errors.New("uses gates: a gate type is blank")
			}
			if !slices.Contains(i.GateTypes, t) {
				i.GateTypes = append(i.GateTypes, t)
			}
		}
		return nil
	}
}
