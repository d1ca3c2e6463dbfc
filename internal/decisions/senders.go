package decisions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/signals"
)

// Claim is who a message a person sends to a run says it comes from: the payload's Field
// ("by" for decisions, "sender" for a signal envelope) and its value. Required says the
// field may not be empty (decisions); an envelope without a sender is the run's to refuse.
type Claim struct {
	Field    string
	By       string
	Required bool
}

// ErrNotJSONObject is the error of a payload that is not one JSON object.
var ErrNotJSONObject = errors.New("the payload is not a JSON object")

// claimRule reads one message's claim, decoding its payload into the very type the run's
// handler takes, with that type's strict UnmarshalJSON.
type claimRule struct {
	field    string
	required bool
	read     func([]byte) (string, error)
}

func reader[T any](by func(*T) string) func([]byte) (string, error) {
	return func(b []byte) (string, error) {
		var v T
		if err := json.Unmarshal(b, &v); err != nil {
			return "", err
		}
		return by(&v), nil
	}
}

var (
	voteClaim   = claimRule{"by", true, reader(func(v *approval.Vote) string { return v.By })}
	updateRules = map[string]claimRule{
		protocol.UpdateApproval: voteClaim,
		protocol.UpdateInput:    {"by", true, reader(func(v *protocol.InputAnswer) string { return v.By })},
		protocol.UpdateBudget:   {"by", true, reader(func(v *protocol.BudgetRaise) string { return v.By })},
		protocol.UpdatePause:    {"by", true, reader(func(v *protocol.RunPause) string { return v.By })},
		protocol.UpdateCancel:   {"by", true, reader(func(v *protocol.RunCancel) string { return v.By })},
	}
	signalRules = map[string]claimRule{
		protocol.SignalApproval: voteClaim,
		protocol.SignalCancel:   {"by", true, reader(func(v *protocol.CancelReason) string { return v.By })},
		protocol.SignalName:     {"sender", false, reader(func(v *signals.Envelope) string { return v.Sender })},
	}
)

// IsDecisionUpdate reports whether name is one of the Updates people decide with
// (UpdateClaim reads their claims).
func IsDecisionUpdate(name string) bool {
	_, ok := updateRules[name]
	return ok
}

// IsClaimSignal reports whether name is one of the Signals whose payload names its sender
// (SignalClaim reads their claims).
func IsClaimSignal(name string) bool {
	_, ok := signalRules[name]
	return ok
}

// UpdateClaim reads who the payload of the decision Update name (gateflow.approval,
// gateflow.input, gateflow.budget, gateflow.pause, gateflow.cancel) says decides, exactly as
// the run decodes it: strictly, so a payload with an unknown, duplicate or case-variant key
// is an error. ok is false for other Updates.
func UpdateClaim(name string, data []byte) (c Claim, ok bool, err error) {
	return claim(updateRules, name, data)
}

// SignalClaim is UpdateClaim for the Signals people send to runs whose payload names them:
// a vote (gateflow.approval), a cancel reason (gateflow.cancel) and a signal envelope
// (gateflow.signal, field "sender").
func SignalClaim(name string, data []byte) (c Claim, ok bool, err error) {
	return claim(signalRules, name, data)
}

func claim(rules map[string]claimRule, name string, data []byte) (Claim, bool, error) {
	r, ok := rules[name]
	if !ok {
		return Claim{}, false, nil
	}
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return Claim{}, true, ErrNotJSONObject
	}
	by, err := r.read(data)
	if err != nil {
		return Claim{}, true, fmt.Errorf("the payload cannot be read one way only: %w", err)
	}
	return Claim{Field: r.field, By: by, Required: r.required}, true, nil
}
