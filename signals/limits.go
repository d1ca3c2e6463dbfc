package signals

import (
	"encoding/json"
	"fmt"
)

// Limits on answers to human input steps. An accepted answer is kept in the run's state
// (and so in its query result and, once the run closes, its Memo), so a run only accepts
// answers small enough to keep: a bigger one is refused with a *AnswerError of
// CodeTooLarge before it enters history.
const (
	// DefaultMaxAnswerBytes is the largest answer a request accepts when it sets no
	// MaxAnswerBytes, in bytes of JSON.
	DefaultMaxAnswerBytes = 64 << 10
	// MaxAnswerBytesLimit is the largest MaxAnswerBytes a request may set, in bytes: the
	// same bound as a signal's payload (MaxPayloadBytes).
	MaxAnswerBytesLimit = MaxPayloadBytes
)

// AnswerLimit is the largest answer r accepts, in bytes of JSON: r.MaxAnswerBytes, or
// DefaultMaxAnswerBytes when it is 0.
func (r InputRequest) AnswerLimit() int {
	if r.MaxAnswerBytes <= 0 {
		return DefaultMaxAnswerBytes
	}
	return r.MaxAnswerBytes
}

// CheckSize refuses a payload bigger than r.AnswerLimit() with a *AnswerError of
// CodeTooLarge that names the size and the limit. It looks at nothing else, so a Validator
// can call it before any costlier check.
func (r InputRequest) CheckSize(payload json.RawMessage) error {
	if n, limit := len(payload), r.AnswerLimit(); n > limit {
		return &AnswerError{Code: CodeTooLarge, Size: n, Limit: limit}
	}
	return nil
}

// CheckSize is InputRequest.CheckSize for the step's request, with the step's name in the
// error.
func (in *Input) CheckSize(payload json.RawMessage) error {
	err := in.Request.CheckSize(payload)
	if ae, ok := err.(*AnswerError); ok {
		ae.Name = in.Name
	}
	return err
}

func (r InputRequest) validateLimit() error {
	if r.MaxAnswerBytes < 0 || r.MaxAnswerBytes > MaxAnswerBytesLimit {
		return requestError("max_answer_bytes", fmt.Sprintf("%d: want 0 (the default, %d) to %d", r.MaxAnswerBytes, DefaultMaxAnswerBytes, MaxAnswerBytesLimit), nil)
	}
	return nil
}
