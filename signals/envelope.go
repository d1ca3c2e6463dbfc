package signals

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gateflow/gateflow/internal/strictjson"
)

// SignalName is the Temporal Signal that carries an Envelope to a run or a mailbox.
const SignalName = "gateflow.signal"

// InputUpdateName is the Temporal Update that carries an answer to a human input step.
const InputUpdateName = "gateflow.input"

// Limits on the fields of an Envelope.
const (
	// MaxNameLen is the longest signal name, in characters.
	MaxNameLen = 200
	// MaxKeyLen is the longest signal key, in characters.
	MaxKeyLen = 200
	// MaxIDLen is the longest signal id, in characters.
	MaxIDLen = 200
	// MaxSenderLen is the longest sender identity, in characters.
	MaxSenderLen = 200
	// MaxPayloadBytes is the largest signal payload, in bytes. Signals are kept in
	// workflow state (a Buffer holds up to DefaultBufferLimit of them), so they stay small.
	MaxPayloadBytes = 256 << 10
)

// namePattern is the rule for flow names (see flow.ValidateName), which signal names share.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.\-/]{0,199}$`)

// Envelope is one signal as it travels in the Signal "gateflow.signal": which wait it is
// for (Name and Key), its idempotency ID, its JSON payload and who sent it.
type Envelope struct {
	// Name is what waits listen for, e.g. "deploy-done".
	Name string `json:"name"`
	// Key narrows the name to one occurrence (a version, an order id). Empty is a key of
	// its own: it matches waits with an empty key only.
	Key string `json:"key,omitempty"`
	// ID makes the signal idempotent: a run or mailbox delivers a repeated ID once. A
	// sender that has none assigns one (NewID) before sending.
	ID string `json:"id"`
	// Payload is the signal's JSON value; empty means null.
	Payload json.RawMessage `json:"payload,omitempty"`
	// Sender identifies who sent it: a user ("alice") or a run.
	Sender string `json:"sender"`
	// SentAt is the sender's time of sending; informational only.
	SentAt time.Time `json:"sent_at,omitzero"`
}

// UnmarshalJSON decodes an envelope strictly (package strictjson): a key that is not
// exactly one of the envelope's field names (an unknown key, or "Sender" beside "sender"),
// or a key given twice, is an error, so the server's Authorizer and the run read the same
// sender. The payload is the sender's own JSON: only its duplicate keys are refused.
func (e *Envelope) UnmarshalJSON(b []byte) error {
	type plain Envelope
	if err := strictjson.Unmarshal(b, (*plain)(e)); err != nil {
		return fmt.Errorf("signals: envelope: %w", err)
	}
	return nil
}

// FieldError reports a field that breaks a rule of this package, such as an Envelope
// without a sender or an InputRequest with a negative timeout.
type FieldError struct {
	// Type is what was checked: "envelope" or "input request".
	Type string
	// Field is the JSON name of the field, e.g. "name" or "schema".
	Field string
	// Reason says what is wrong, e.g. "required".
	Reason string
	// Err is the underlying error, if any (a *CompileError for a bad schema).
	Err error
}

// Error implements error.
func (e *FieldError) Error() string {
	return "signals: " + e.Type + " " + e.Field + ": " + e.Reason
}

// Unwrap returns the underlying error, if any.
func (e *FieldError) Unwrap() error { return e.Err }

func envelopeError(field, format string, args ...any) *FieldError {
	return &FieldError{Type: "envelope", Field: field, Reason: fmt.Sprintf(format, args...)}
}

// ValidateName reports whether name can be a signal name: 1–200 letters, digits and
// "_.-/", starting with a letter or digit (the rule for flow names).
func ValidateName(name string) error {
	if !namePattern.MatchString(name) {
		return envelopeError("name", "%q: want 1-200 letters, digits or _.-/ starting with a letter or digit", name)
	}
	return nil
}

// Validate checks the envelope: a valid name, a key and an id of at most 200 valid UTF-8
// characters (both optional; an empty id means the caller still has to assign one), a
// payload that is valid JSON of at most MaxPayloadBytes (empty means null), and a sender.
// The first broken rule is returned as a *FieldError.
func (e Envelope) Validate() error {
	if err := ValidateName(e.Name); err != nil {
		return err
	}
	if err := checkText("key", e.Key, MaxKeyLen); err != nil {
		return err
	}
	if err := checkText("id", e.ID, MaxIDLen); err != nil {
		return err
	}
	if len(e.Payload) > MaxPayloadBytes {
		return envelopeError("payload", "%d bytes, more than the limit of %d", len(e.Payload), MaxPayloadBytes)
	}
	if len(e.Payload) > 0 && !json.Valid(e.Payload) {
		return envelopeError("payload", "not valid JSON")
	}
	if strings.TrimSpace(e.Sender) == "" {
		return envelopeError("sender", "required")
	}
	return checkText("sender", e.Sender, MaxSenderLen)
}

func checkText(field, s string, max int) error {
	if !utf8.ValidString(s) {
		return envelopeError(field, "not valid UTF-8")
	}
	if n := utf8.RuneCountInString(s); n > max {
		return envelopeError(field, "%d characters, more than the limit of %d", n, max)
	}
	return nil
}

// PayloadOrNull returns the payload, or the JSON null when it is empty.
func (e Envelope) PayloadOrNull() json.RawMessage {
	if len(bytes.TrimSpace(e.Payload)) == 0 {
		return json.RawMessage("null")
	}
	return e.Payload
}

// NewID derives a deterministic signal id from where the signal comes from (origin, e.g.
// the sending run's id, or a user and request id), its name and key, and a sequence
// number that the origin never reuses. The same inputs give the same id, so a workflow
// that resends after replay or retry is deduplicated; different origins never collide.
// The id is "sig-" followed by 32 hex digits.
func NewID(origin, name, key string, seq int) string {
	h := sha256.New()
	for _, part := range []string{origin, name, key, strconv.Itoa(seq)} {
		h.Write([]byte(strconv.Itoa(len(part))))
		h.Write([]byte{':'})
		h.Write([]byte(part))
	}
	return "sig-" + hex.EncodeToString(h.Sum(nil)[:16])
}

// Wait is what a run keeps about one wait for a signal (flow.WaitSignal): what it waits
// for, since when, until when, and what arrived.
type Wait struct {
	Name     string     `json:"name"`
	Key      string     `json:"key,omitempty"`
	Since    time.Time  `json:"since"`
	Deadline *time.Time `json:"deadline,omitempty"`
	Received *Envelope  `json:"received,omitempty"`
}
