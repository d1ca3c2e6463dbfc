package auth

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// Kind is what a decision does to a run.
type Kind string

// Decision kinds: a vote on an approval gate, an answer to a human input, a budget raise,
// a cancel, a pause or resume.
const (
	KindVote   Kind = "vote"
	KindAnswer Kind = "answer"
	KindBudget Kind = "budget"
	KindCancel Kind = "cancel"
	KindPause  Kind = "pause"
)

// Valid reports whether k is one of the decision kinds.
func (k Kind) Valid() bool {
	switch k {
	case KindVote, KindAnswer, KindBudget, KindCancel, KindPause:
		return true
	}
	return false
}

// Decision is what one decision says and what its signature binds: which run (namespace,
// workflow ID and the run's first run ID), which gate or input (Target; empty for
// decisions on the whole run), what kind, the hash of the payload sent with it, and who
// makes it. A signature over a Decision is worthless for any other run, gate, kind or
// payload — including a new run that reuses the workflow ID.
type Decision struct {
	Namespace string `json:"ns"`
	// Run is the run's workflow ID.
	Run string `json:"run"`
	// FirstRunID is the run ID of the first execution of the run's chain (Temporal's
	// FirstExecutionRunId): stable across continue-as-new and resets, different for a new
	// run that reuses the workflow ID. Proofs signed before decisions bound it have none
	// (see VerifyOptions.AllowUnbound).
	FirstRunID string `json:"first_run_id,omitempty"`
	Target     string `json:"target,omitempty"`
	Kind       Kind   `json:"kind"`
	// PayloadSHA256 is PayloadHash of the decision's payload (the vote, the answer, the new
	// cap), hex encoded.
	PayloadSHA256 string `json:"payload_sha256"`
	// By is the identity making the decision: a signed decision's subject.
	By string `json:"sub"`
}

// Check reports what is missing from d.
func (d Decision) Check() error {
	switch {
	case d.Namespace == "":
		return fmt.Errorf("auth: decision has no namespace")
	case d.Run == "":
		return fmt.Errorf("auth: decision has no run")
	case d.FirstRunID == "":
		return fmt.Errorf("auth: decision for run %s has no first run ID (the run it is for, not only its workflow ID)", d.Run)
	case !d.Kind.Valid():
		return fmt.Errorf("auth: decision kind %q is not one of vote, answer, budget, cancel, pause", d.Kind)
	case d.By == "":
		return fmt.Errorf("auth: decision has no identity (by)")
	case len(d.PayloadSHA256) != sha256.Size*2:
		return fmt.Errorf("auth: decision payload hash %q is not a hex SHA-256", d.PayloadSHA256)
	}
	return nil
}

// PayloadHash is the hex SHA-256 of v's canonical JSON (objects with sorted keys, no
// insignificant white space), so the signer and the verifier agree on the hash whatever
// order or spacing the JSON travelled in. v is a Go value or a json.RawMessage.
func PayloadHash(v any) (string, error) {
	raw, ok := v.(json.RawMessage)
	if !ok {
		b, err := json.Marshal(v)
		if err != nil {
			return "", fmt.Errorf("auth: payload: %w", err)
		}
		raw = b
	}
	canon, err := canonicalJSON(raw)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

// canonicalJSON re-encodes raw with sorted object keys and no extra white space; numbers
// keep their text.
func canonicalJSON(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("auth: payload is not JSON: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("auth: payload has data after its JSON value")
	}
	return json.Marshal(v) // encoding/json sorts map keys
}

// claims is the JWT body of a signed decision.
type claims struct {
	Decision
	Audience  string `json:"aud"`
	IssuedAt  int64  `json:"iat"`
	NotBefore int64  `json:"nbf,omitempty"`
	Expiry    int64  `json:"exp"`
	Nonce     string `json:"nonce"`
}

// Audience is the audience a signed decision for namespace carries, so a decision signed
// for one namespace (or for another system using the same keys) is refused in another.
func Audience(namespace string) string { return "gateflow:" + namespace }

func unixTime(s int64) time.Time { return time.Unix(s, 0).UTC() }
