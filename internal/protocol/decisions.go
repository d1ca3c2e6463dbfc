package protocol

import (
	"fmt"

	"github.com/gateflow/gateflow/internal/strictjson"
)

// The payloads people send to runs (the Updates UpdateInput, UpdateBudget, UpdatePause and
// UpdateCancel, the Signal SignalCancel) decode strictly (package strictjson): a key that
// is not exactly one of the payload's field names (an unknown key, or "By" beside "by"),
// or a key given twice, is an error. The server's Authorizer, the run's Validator and
// flowctl audit thus read the same "by" from the same bytes, and a payload that could be
// read two ways is refused before anything is checked.

// UnmarshalJSON decodes an answer strictly; its data is the answerer's own JSON, checked
// by the input's schema (only its duplicate keys are refused here).
func (a *InputAnswer) UnmarshalJSON(b []byte) error {
	type plain InputAnswer
	return strict(b, (*plain)(a), "input answer")
}

// UnmarshalJSON decodes a budget raise strictly.
func (r *BudgetRaise) UnmarshalJSON(b []byte) error {
	type plain BudgetRaise
	return strict(b, (*plain)(r), "budget raise")
}

// UnmarshalJSON decodes a pause or resume strictly.
func (r *RunPause) UnmarshalJSON(b []byte) error {
	type plain RunPause
	return strict(b, (*plain)(r), "pause")
}

// UnmarshalJSON decodes a cancellation strictly.
func (r *RunCancel) UnmarshalJSON(b []byte) error {
	type plain RunCancel
	return strict(b, (*plain)(r), "cancel")
}

// UnmarshalJSON decodes a cancellation's reason strictly.
func (r *CancelReason) UnmarshalJSON(b []byte) error {
	type plain CancelReason
	return strict(b, (*plain)(r), "cancel reason")
}

func strict(b []byte, v any, what string) error {
	if err := strictjson.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
