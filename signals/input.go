package signals

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/auth"
)

// InputRequest is what a human input step asks for: a prompt, the JSON Schema the answer
// must match, who may answer, and how long the step waits.
type InputRequest struct {
	// Prompt is the question shown to people; required.
	Prompt string `json:"prompt"`
	// Schema is the JSON Schema the answer must match; empty accepts any JSON value.
	Schema json.RawMessage `json:"schema,omitempty"`
	// Assignees are the users and "group:" names (approval.GroupPrefix) who may answer;
	// empty means anyone with an identity. Group membership is resolved by the caller
	// (see Check).
	Assignees []string `json:"assignees,omitempty"`
	// Timeout is how long the step waits for an answer; zero waits for ever.
	Timeout time.Duration `json:"timeout,omitempty"`
	// MaxAnswerBytes is the largest answer accepted, in bytes of JSON; 0 means
	// DefaultMaxAnswerBytes, and at most MaxAnswerBytesLimit may be asked for (see limits.go).
	MaxAnswerBytes int `json:"max_answer_bytes,omitempty"`
}

func requestError(field, reason string, err error) *FieldError {
	return &FieldError{Type: "input request", Field: field, Reason: reason, Err: err}
}

// Validate checks the request: a non-blank prompt, a schema that compiles (see
// CompileSchema), assignees that are non-blank and name a group after "group:", and a
// timeout that is not negative. The first broken rule is returned as a *FieldError whose
// Err is the *CompileError for a bad schema.
func (r InputRequest) Validate() error {
	if strings.TrimSpace(r.Prompt) == "" {
		return requestError("prompt", "required", nil)
	}
	if _, err := CompileSchema(r.Schema); err != nil {
		return requestError("schema", err.Error(), err)
	}
	for i, a := range r.Assignees {
		if strings.TrimSpace(a) == "" || strings.TrimSpace(strings.TrimPrefix(a, approval.GroupPrefix)) == "" {
			return requestError("assignees", fmt.Sprintf("entry %d is blank", i), nil)
		}
	}
	if r.Timeout < 0 {
		return requestError("timeout", fmt.Sprintf("%s is negative; use 0 to wait for ever", r.Timeout), nil)
	}
	return r.validateLimit()
}

// Allowed reports whether the user by may answer, looking at user entries only: true
// when there are no assignees, or when by equals an entry exactly. An empty identity is
// never allowed. "group:" entries need a membership lookup and are ignored here; use
// Check to take them into account.
func (r InputRequest) Allowed(by string) bool {
	return r.allowed(by, nil)
}

func (r InputRequest) allowed(by string, isMember func(group, user string) bool) bool {
	if by == "" {
		return false
	}
	if len(r.Assignees) == 0 {
		return true
	}
	for _, a := range r.Assignees {
		if group, ok := strings.CutPrefix(a, approval.GroupPrefix); ok {
			if isMember != nil && isMember(group, by) {
				return true
			}
			continue
		}
		if a == by {
			return true
		}
	}
	return false
}

// Check decides whether by may answer with payload, in this order: an identity is
// required (CodeNoIdentity), by must be allowed (CodeNotAllowed; "group:" entries are
// resolved with isMember, which the caller provides and which may be nil when there are
// no groups), and the payload must match the schema (CodeSchema). Every refusal is an
// *AnswerError. Check does not know whether the step is still open; Input.Check does.
func (r InputRequest) Check(by string, payload json.RawMessage, isMember func(group, user string) bool) error {
	schema, err := CompileSchema(r.Schema)
	if err != nil {
		return &AnswerError{Code: CodeSchema, By: by, Errors: []string{"the request's schema is invalid: " + err.Error()}, Err: err}
	}
	return r.check(schema, by, payload, isMember)
}

func (r InputRequest) check(schema *Schema, by string, payload json.RawMessage, isMember func(group, user string) bool) error {
	if strings.TrimSpace(by) == "" {
		return &AnswerError{Code: CodeNoIdentity}
	}
	if !r.allowed(by, isMember) {
		return &AnswerError{Code: CodeNotAllowed, By: by}
	}
	if err := r.CheckSize(payload); err != nil {
		return err
	}
	if err := schema.Validate(payload); err != nil {
		se, _ := err.(*SchemaError)
		var errs []string
		if se != nil {
			errs = se.Errors
		}
		return &AnswerError{Code: CodeSchema, By: by, Errors: errs, Err: err}
	}
	return nil
}

// InputAnswer is an accepted answer to a human input step.
type InputAnswer struct {
	// Name is the step's name.
	Name string `json:"name"`
	// Payload is the answer, valid against the request's schema.
	Payload json.RawMessage `json:"payload"`
	// By is who answered.
	By string `json:"by"`
	// At is when the answer was accepted (workflow time).
	At time.Time `json:"at"`
	// Verified is what the run verified about who answered (package auth); nil for an
	// unverified answer.
	Verified *auth.Verified `json:"verified,omitempty"`
}

// AnswerCode says why an answer was refused.
type AnswerCode string

// Reasons an answer is refused.
const (
	// CodeNoIdentity: the caller gave no identity.
	CodeNoIdentity AnswerCode = "no_identity"
	// CodeNotAllowed: the caller is not among the assignees.
	CodeNotAllowed AnswerCode = "not_allowed"
	// CodeSchema: the payload is not valid JSON or does not match the schema.
	CodeSchema AnswerCode = "schema"
	// CodeClosed: the step was already answered or its deadline passed.
	CodeClosed AnswerCode = "closed"
	// CodeTooLarge: the answer is bigger than the request's MaxAnswerBytes.
	CodeTooLarge AnswerCode = "too_large"
)

// AnswerError is an answer refused by Check; the Update's Validator returns it so the
// submitter sees it at once and nothing enters history.
type AnswerError struct {
	// Code says why.
	Code AnswerCode
	// Name is the step's name, when known.
	Name string
	// By is the identity that answered.
	By string
	// Errors are the schema messages, for CodeSchema.
	Errors []string
	// Size and Limit are the answer's size and the limit it broke, in bytes, for
	// CodeTooLarge.
	Size, Limit int
	// Err is the underlying error (a *SchemaError for CodeSchema).
	Err error
}

// Error implements error.
func (e *AnswerError) Error() string {
	step := "input"
	if e.Name != "" {
		step = fmt.Sprintf("input %q", e.Name)
	}
	switch e.Code {
	case CodeNoIdentity:
		return step + ": an answer needs an identity (flowctl --as or FLOW_USER)"
	case CodeNotAllowed:
		return fmt.Sprintf("%s: %q is not among the assignees", step, e.By)
	case CodeClosed:
		return step + ": closed (already answered or past its deadline)"
	case CodeSchema:
		return step + ": answer does not match the schema: " + strings.Join(e.Errors, "; ")
	case CodeTooLarge:
		return fmt.Sprintf("%s: the answer is %d bytes of JSON; the limit is %d (max_answer_bytes)", step, e.Size, e.Limit)
	default:
		return step + ": refused (" + string(e.Code) + ")"
	}
}

// Unwrap returns the underlying error.
func (e *AnswerError) Unwrap() error { return e.Err }

// Input is a human input step in a run: its request, when it opened and its answer once
// accepted. It is the state the "gateflow.input" Update's Validator and handler share.
// It serialises to JSON (the compiled schema is rebuilt on demand).
type Input struct {
	// Name is the step's name.
	Name string `json:"name"`
	// Request is what the step asks.
	Request InputRequest `json:"request"`
	// OpenedAt is when the step opened (workflow time).
	OpenedAt time.Time `json:"opened_at"`
	// Answer is the accepted answer; nil while open.
	Answer *InputAnswer `json:"answer,omitempty"`

	schema *Schema
}

// NewInput opens a step: it validates the request and compiles its schema once.
func NewInput(name string, req InputRequest, openedAt time.Time) (*Input, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	schema, err := CompileSchema(req.Schema)
	if err != nil {
		return nil, err
	}
	return &Input{Name: name, Request: req, OpenedAt: openedAt, schema: schema}, nil
}

// Deadline returns when the step stops accepting answers, and false when it waits for ever.
func (in *Input) Deadline() (time.Time, bool) {
	if in.Request.Timeout <= 0 {
		return time.Time{}, false
	}
	return in.OpenedAt.Add(in.Request.Timeout), true
}

// Closed reports whether the step no longer accepts answers at now: it has an answer, or
// its deadline has been reached.
func (in *Input) Closed(now time.Time) bool {
	if in.Answer != nil {
		return true
	}
	d, ok := in.Deadline()
	return ok && !now.Before(d)
}

// Check decides whether by may answer with payload at now: CodeClosed when the step is
// closed, then the checks of InputRequest.Check. Every refusal is an *AnswerError naming
// the step.
func (in *Input) Check(by string, payload json.RawMessage, now time.Time, isMember func(group, user string) bool) error {
	var err error
	if in.Closed(now) {
		err = &AnswerError{Code: CodeClosed, By: by}
	} else if in.schema == nil {
		if in.schema, err = CompileSchema(in.Request.Schema); err != nil {
			err = &AnswerError{Code: CodeSchema, By: by, Errors: []string{"the request's schema is invalid: " + err.Error()}, Err: err}
		}
	}
	if err == nil {
		err = in.Request.check(in.schema, by, payload, isMember)
	}
	if ae, ok := err.(*AnswerError); ok {
		ae.Name = in.Name
	}
	return err
}

// Accept checks an answer like Check and, when it passes, records and returns it.
func (in *Input) Accept(by string, payload json.RawMessage, now time.Time, isMember func(group, user string) bool) (InputAnswer, error) {
	if err := in.Check(by, payload, now, isMember); err != nil {
		return InputAnswer{}, err
	}
	ans := InputAnswer{Name: in.Name, Payload: append(json.RawMessage(nil), payload...), By: by, At: now}
	if len(ans.Payload) == 0 {
		ans.Payload = json.RawMessage("null")
	}
	in.Answer = &ans
	return ans, nil
}
