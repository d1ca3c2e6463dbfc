package gates

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Polling limits and defaults.
const (
	// DefaultPollInterval is the time between polls of a request that sets none.
	DefaultPollInterval = 30 * time.Second
	// MinPollInterval is the shortest PollInterval accepted.
	MinPollInterval = time.Second
	// DefaultPollTimeout bounds one poll of a request that sets no PollTimeout.
	DefaultPollTimeout = time.Minute
	// MaxPolls is the most polls one gate makes. Every poll adds about a dozen events to
	// the run's history (Temporal allows 51,200), so a Timeout needing more polls than
	// this at its PollInterval is refused, and a gate without a Timeout times out after
	// MaxPolls polls. Wait longer by polling less often.
	MaxPolls = 2000
	// MaxFailedPolls is how many failed polls in a row (the resolver returned an error
	// other than a *ParamsError, three activity attempts each) fail the gate.
	MaxFailedPolls = 5
	// MaxParamsLen is the largest Params accepted, in bytes of JSON: every poll carries
	// them in the run's history.
	MaxParamsLen = 8 << 10
)

// OnTimeout says what a gate's deadline does when it passes with the gate undecided (or
// when the gate made MaxPolls polls). The empty value means FailOnTimeout.
type OnTimeout string

const (
	// FailOnTimeout (the default): the step ends timed_out and the handler gets a
	// *TimedOutError (errors.Is ErrTimedOut); returned, it fails the run.
	FailOnTimeout OnTimeout = "fail"
	// ApproveOnTimeout: the gate is approved by its deadline ("go ahead unless it went
	// red"); the step completes and Result.By is TimeoutActor.
	ApproveOnTimeout OnTimeout = "approve"
	// RejectOnTimeout: the gate is rejected by its deadline; the step ends timed_out and
	// the handler gets a *RejectedError (errors.Is ErrRejected) whose reason says so;
	// returned, it ends the run as rejected.
	RejectOnTimeout OnTimeout = "reject"
	// ContinueOnTimeout: the gate ends undecided and the handler goes on: the step
	// completes, the error is nil and Result.Outcome is OutcomeTimedOut.
	ContinueOnTimeout OnTimeout = "continue"
)

// TimeoutActor is Result.By for a gate its deadline decided.
const TimeoutActor = "timeout"

// Request is what a handler asks of a polled gate: ctx.Gate(name, Request{...}).
type Request struct {
	// Type names the resolver (a Resolver's Type registered on the worker: "http",
	// "command", or your own). A type the worker does not have fails the step at once.
	Type string `json:"type"`
	// Params are the resolver's params (HTTPParams, CommandParams, a map, your resolver's
	// struct), encoded once as a JSON object when the gate opens (at most MaxParamsLen
	// bytes) and handed to every poll as Params.Params. Nil means none.
	Params any `json:"params,omitempty"`
	// PollInterval is the time between the end of one poll and the start of the next,
	// at least MinPollInterval; 0 means DefaultPollInterval. The run sleeps on a durable
	// timer meanwhile. In JSON it is a number of nanoseconds, like the other durations.
	PollInterval time.Duration `json:"poll_interval,omitempty"`
	// PollTimeout bounds one poll; 0 means DefaultPollTimeout.
	PollTimeout time.Duration `json:"poll_timeout,omitempty"`
	// Timeout is how long the gate waits from the moment it opens; 0 means no deadline
	// (but at most MaxPolls polls).
	Timeout time.Duration `json:"timeout,omitempty"`
	// OnTimeout says what the deadline does; empty means FailOnTimeout.
	OnTimeout OnTimeout `json:"on_timeout,omitempty"`
	// AllowManual lets people decide the gate before its resolver does, with the approval
	// Update (flowctl approve RUN GATE, flowctl reject RUN GATE --reason ...). Without it
	// such votes are refused. The Result records who decided.
	AllowManual bool `json:"allow_manual,omitempty"`
}

// Normalize checks the request and returns it with its defaults filled in and Params
// encoded (a json.RawMessage holding a JSON object, or null). The error is a sentence
// without the gate's name: an empty Type, a negative or too short PollInterval, a negative
// PollTimeout or Timeout, a Timeout needing more than MaxPolls polls, an unknown
// OnTimeout, or Params that are not a JSON object or too large.
func (r Request) Normalize() (Request, error) {
	r.Type = strings.TrimSpace(r.Type)
	if r.Type == "" {
		return r, errors.New("the gate type is empty; name a resolver registered on the worker (http, command, ...)")
	}
	switch {
	case r.PollInterval < 0:
		return r, fmt.Errorf("poll interval is %s; want 0 (meaning %s) or at least %s", r.PollInterval, DefaultPollInterval, MinPollInterval)
	case r.PollInterval == 0:
		r.PollInterval = DefaultPollInterval
	case r.PollInterval < MinPollInterval:
		return r, fmt.Errorf("poll interval is %s; the minimum is %s", r.PollInterval, MinPollInterval)
	}
	switch {
	case r.PollTimeout < 0:
		return r, fmt.Errorf("poll timeout is %s; want 0 (meaning %s) or more", r.PollTimeout, DefaultPollTimeout)
	case r.PollTimeout == 0:
		r.PollTimeout = DefaultPollTimeout
	}
	if r.Timeout < 0 {
		return r, fmt.Errorf("timeout is %s; want 0 (no deadline) or more", r.Timeout)
	}
	if n := r.Timeout / r.PollInterval; n > MaxPolls {
		return r, fmt.Errorf("timeout %s at a poll interval of %s is %d polls; the limit is %d (poll less often)",
			r.Timeout, r.PollInterval, int64(n), MaxPolls)
	}
	switch r.OnTimeout {
	case "":
		r.OnTimeout = FailOnTimeout
	case FailOnTimeout, ApproveOnTimeout, RejectOnTimeout, ContinueOnTimeout:
	default:
		return r, fmt.Errorf("on_timeout %q is not one of fail, approve, reject or continue", string(r.OnTimeout))
	}
	raw, err := encodeParams(r.Params)
	if err != nil {
		return r, err
	}
	r.Params = raw
	return r, nil
}

// encodeParams encodes params as a JSON object (or null).
func encodeParams(params any) (json.RawMessage, error) {
	var raw []byte
	switch p := params.(type) {
	case nil:
		return json.RawMessage("null"), nil
	case json.RawMessage:
		raw = p
	case []byte:
		raw = p
	default:
		b, err := json.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("params cannot be encoded as JSON: %w", err)
		}
		raw = b
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return json.RawMessage("null"), nil
	}
	if !json.Valid(raw) {
		return nil, errors.New("params are not valid JSON")
	}
	if raw[0] != '{' && !bytes.Equal(raw, []byte("null")) {
		return nil, fmt.Errorf("params must be a JSON object, not %s", jsonKind(raw[0]))
	}
	if len(raw) > MaxParamsLen {
		return nil, fmt.Errorf("params are %d bytes of JSON; the limit is %d", len(raw), MaxParamsLen)
	}
	return json.RawMessage(raw), nil
}

func jsonKind(first byte) string {
	switch first {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

// Outcome is how a gate ended.
type Outcome string

// Gate outcomes.
const (
	// OutcomeApproved: the resolver, a person (AllowManual) or the deadline
	// (ApproveOnTimeout) approved the gate.
	OutcomeApproved Outcome = "approved"
	// OutcomeRejected: the resolver, a person or the deadline (RejectOnTimeout) rejected
	// the gate.
	OutcomeRejected Outcome = "rejected"
	// OutcomeTimedOut: the deadline passed with the gate undecided (FailOnTimeout,
	// ContinueOnTimeout).
	OutcomeTimedOut Outcome = "timed_out"
)

// Result is how a polled gate ended, as ctx.Gate returns it and the step records it.
type Result struct {
	// Outcome is approved, rejected or timed_out.
	Outcome Outcome `json:"outcome"`
	// By is who decided: the resolver type ("http") when a poll did, the person's identity
	// when someone decided by hand (Manual), or TimeoutActor.
	By string `json:"by"`
	// Manual is set when a person decided (AllowManual).
	Manual bool `json:"manual,omitempty"`
	// Comment is why the gate was approved (the poll's or the person's comment).
	Comment string `json:"comment,omitempty"`
	// Reason is why it was rejected, or for a deadline what it did.
	Reason string `json:"reason,omitempty"`
	// Message is what the last pending poll said (or the last failed poll's error).
	Message string `json:"message,omitempty"`
	// Polls is how many polls the gate made.
	Polls int `json:"polls"`
	// DecidedAt is the run's clock when the gate ended.
	DecidedAt time.Time `json:"decided_at"`
}

// Describe is the result on one line: "approved by http after 3 polls: pipeline passed",
// "rejected by alice (manual) after 1 poll: not today", "timed_out after 12 polls".
func (r Result) Describe() string {
	s := string(r.Outcome)
	if r.By != "" && r.By != TimeoutActor {
		s += " by " + r.By
		if r.Manual {
			s += " (manual)"
		}
	}
	if r.By == TimeoutActor && r.Outcome != OutcomeTimedOut {
		s += " at the deadline"
	}
	s += fmt.Sprintf(" after %d poll%s", r.Polls, plural(r.Polls))
	if t := r.text(); t != "" {
		s += ": " + t
	}
	return s
}

// text is the comment of an approval, the reason of a rejection, or what the last poll
// said for a gate that timed out.
func (r Result) text() string {
	switch r.Outcome {
	case OutcomeApproved:
		return r.Comment
	case OutcomeRejected:
		return r.Reason
	}
	return r.Message
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// ErrRejected is matched (errors.Is) by every *RejectedError.
var ErrRejected = errors.New("gate rejected")

// ErrTimedOut is matched (errors.Is) by every *TimedOutError.
var ErrTimedOut = errors.New("gate timed out")

// RejectedError is what ctx.Gate returns when the gate was rejected, by a poll, a person
// or its deadline (RejectOnTimeout). The handler may handle it (errors.As) and carry on;
// returned, it ends the run as rejected.
type RejectedError struct {
	// Gate is the gate's name.
	Gate string
	// Result is the gate's result (Outcome OutcomeRejected); Reason says why.
	Result Result
}

// Error reads "gate ci-green: rejected by http after 3 polls: pipeline failed".
func (e *RejectedError) Error() string { return "gate " + e.Gate + ": " + e.Result.Describe() }

// Reason is why the gate was rejected.
func (e *RejectedError) Reason() string { return e.Result.Reason }

// Is makes errors.Is(err, ErrRejected) true.
func (e *RejectedError) Is(target error) bool { return target == ErrRejected }

// TimedOutError is what ctx.Gate returns when the gate's deadline passed undecided with
// FailOnTimeout (the default). The step's status is timed_out.
type TimedOutError struct {
	// Gate is the gate's name.
	Gate string
	// Timeout is the request's Timeout (0 when the gate stopped after MaxPolls polls).
	Timeout time.Duration
	// Result is the gate's result (Outcome OutcomeTimedOut).
	Result Result
}

// Error reads "gate ci-green: timed out after 2h0m0s (240 polls) without a decision; last
// poll: pipeline running".
func (e *TimedOutError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "gate %s: timed out", e.Gate)
	if e.Timeout > 0 {
		fmt.Fprintf(&b, " after %s (%d poll%s)", e.Timeout, e.Result.Polls, plural(e.Result.Polls))
	} else {
		fmt.Fprintf(&b, " after %d polls, the most a gate makes", e.Result.Polls)
	}
	b.WriteString(" without a decision")
	if e.Result.Message != "" {
		b.WriteString("; last poll: " + e.Result.Message)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrTimedOut) true.
func (e *TimedOutError) Is(target error) bool { return target == ErrTimedOut }
