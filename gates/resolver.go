package gates

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gateflow/gateflow/internal/proc"
)

// Resolver decides a polled gate, one poll at a time. Register resolvers on the worker
// (flow.WorkerOptions.GateResolvers); a handler names one by its Type in a Request. Poll
// runs on the worker inside the activity gateflow.gate.poll, so it may do I/O; it should
// return within the request's PollTimeout and stop when ctx is done. A Resolver is shared
// by every run on the worker and must be safe for concurrent use.
type Resolver interface {
	// Type is the resolver's name, as Request.Type refers to it ("http", "jira"): not
	// empty, unique on the worker.
	Type() string
	// Poll asks once whether the gate p.Gate of run p.RunID is decided. An error wrapping
	// a *ParamsError fails the gate at once; any other error is a failed poll (see the
	// package documentation).
	Poll(ctx context.Context, p Params) (Poll, error)
}

// Params is what a Resolver gets for one poll.
type Params struct {
	// Type is the resolver type the request named.
	Type string `json:"type"`
	// Gate is the gate's name (the step name given to ctx.Gate) and RunID the run's ID
	// (its Temporal workflow ID).
	Gate  string `json:"gate"`
	RunID string `json:"run_id"`
	// Poll counts the gate's polls from 1.
	Poll int `json:"poll"`
	// Params are the request's params as JSON: Request.Params encoded once when the gate
	// opened (a JSON object, or null when the request had none). Read them with Decode.
	Params json.RawMessage `json:"params,omitempty"`
}

// Decode reads the params into v (a pointer to the resolver's params struct), refusing
// unknown fields, so that a misspelt param is an error rather than silently ignored.
// Params that are null or absent leave v as it is. The error is a *ParamsError.
func (p Params) Decode(v any) error {
	raw := bytes.TrimSpace(p.Params)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &ParamsError{Type: p.Type, Reason: err.Error()}
	}
	return nil
}

// ParamsError says a gate's params cannot work: the gate fails at once instead of being
// polled again. Resolvers return it (or an error wrapping it) from Poll.
type ParamsError struct {
	// Type is the resolver type.
	Type string
	// Reason says what is wrong, as a sentence without the type.
	Reason string
}

// Error reads "gate http: bad params: url is empty".
func (e *ParamsError) Error() string { return fmt.Sprintf("gate %s: bad params: %s", e.Type, e.Reason) }

// State is where a gate stands after a poll.
type State string

// Poll states.
const (
	// StatePending: not decided yet; the gate polls again after its PollInterval.
	StatePending State = "pending"
	// StateApproved: the gate is approved; the step completes with the Comment.
	StateApproved State = "approved"
	// StateRejected: the gate is rejected; the step fails with the Reason.
	StateRejected State = "rejected"
)

// Poll is the answer of one poll. Build it with Approved, Rejected or Pending.
type Poll struct {
	// State is pending, approved or rejected.
	State State `json:"state"`
	// Comment says why an approved gate was approved ("pipeline 812 passed").
	Comment string `json:"comment,omitempty"`
	// Reason says why a rejected gate was rejected ("pipeline 812 failed: unit tests").
	Reason string `json:"reason,omitempty"`
	// Message says how a pending gate stands ("pipeline 812 running: 7 of 9 jobs"); it is
	// shown in the step record while the gate waits.
	Message string `json:"message,omitempty"`
}

// Approved is a poll that approves the gate, with a comment.
func Approved(comment string) Poll { return Poll{State: StateApproved, Comment: comment} }

// Rejected is a poll that rejects the gate, with a reason.
func Rejected(reason string) Poll { return Poll{State: StateRejected, Reason: reason} }

// Pending is a poll that leaves the gate undecided, with an optional message.
func Pending(message string) Poll { return Poll{State: StatePending, Message: message} }

// MaxTextLen is the longest comment, reason or message a poll keeps, in bytes; longer
// texts are cut (Clip), since every poll's answer is recorded in the run's history.
const MaxTextLen = 2 << 10

// Validate reports a poll whose State is not one of pending, approved or rejected.
func (p Poll) Validate() error {
	switch p.State {
	case StatePending, StateApproved, StateRejected:
		return nil
	}
	return fmt.Errorf("poll state %q is not one of pending, approved or rejected", string(p.State))
}

// Clip returns the poll with its texts trimmed, made valid UTF-8 and cut to MaxTextLen.
func (p Poll) Clip() Poll {
	p.Comment = clip(p.Comment, MaxTextLen)
	p.Reason = clip(p.Reason, MaxTextLen)
	p.Message = clip(p.Message, MaxTextLen)
	return p
}

// Text is what the poll says: its comment, reason or message.
func (p Poll) Text() string {
	switch p.State {
	case StateApproved:
		return p.Comment
	case StateRejected:
		return p.Reason
	}
	return p.Message
}

// clip trims s, makes it valid UTF-8 and keeps at most n bytes (an ellipsis marks a cut).
func clip(s string, n int) string {
	s = strings.ToValidUTF8(strings.TrimSpace(s), "\uFFFD")
	if len(s) <= n {
		return s
	}
	end := n - len("…")
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + "…"
}

// tail keeps about the last n bytes of s (an ellipsis marks a cut), trimmed and valid
// UTF-8.
func tail(s string, n int) string { return proc.Tail(s, n) }

// Builtins are the resolvers every worker registers: HTTP ("http") and Command
// ("command"), with their defaults.
func Builtins() []Resolver { return []Resolver{HTTP{}, Command{}} }

// Registry checks a worker's resolvers: the built-ins followed by extra. It returns them by
// type, and an error naming every resolver that is nil, has an empty type, or repeats a
// type (a built-in's too).
func Registry(extra []Resolver) (map[string]Resolver, error) {
	out := map[string]Resolver{}
	var errs []error
	for i, r := range append(Builtins(), extra...) {
		if r == nil {
			errs = append(errs, fmt.Errorf("gate resolver %d is nil", i-len(Builtins())))
			continue
		}
		t := r.Type()
		switch {
		case strings.TrimSpace(t) == "":
			errs = append(errs, fmt.Errorf("gate resolver %T has an empty type", r))
		case strings.TrimSpace(t) != t || strings.ContainsAny(t, "/:\x00"):
			errs = append(errs, fmt.Errorf("gate resolver type %q has surrounding spaces or one of / : (it appears in gate:NAME/TYPE)", t))
		case out[t] != nil:
			what := "twice"
			if isBuiltin(t) {
				what = "twice (" + t + " is built in)"
			}
			errs = append(errs, fmt.Errorf("gate resolver type %q is registered %s", t, what))
		default:
			out[t] = r
		}
	}
	return out, errors.Join(errs...)
}

func isBuiltin(t string) bool {
	for _, b := range Builtins() {
		if b.Type() == t {
			return true
		}
	}
	return false
}
