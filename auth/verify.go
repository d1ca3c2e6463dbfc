package auth

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Reason says why a decision was refused.
type Reason string

// Refusal reasons.
const (
	// ReasonMalformed: the token is not a compact JWS, uses an algorithm not allowed, or
	// its claims do not decode.
	ReasonMalformed Reason = "malformed"
	// ReasonUnknownKey: the token's key ID is not in the directory (or the issuer's JWKS).
	ReasonUnknownKey Reason = "unknown_key"
	// ReasonBadSignature: the signature does not verify with the named key.
	ReasonBadSignature Reason = "bad_signature"
	// ReasonExpired and ReasonNotYetValid: outside the token's validity (with leeway), or a
	// lifetime longer than allowed.
	ReasonExpired     Reason = "expired"
	ReasonNotYetValid Reason = "not_yet_valid"
	// ReasonAudience: the token is for another namespace or system.
	ReasonAudience Reason = "audience"
	// ReasonMismatch: the token signs another run, gate, kind or payload than the one it
	// came with (a replayed or altered decision).
	ReasonMismatch Reason = "mismatch"
	// ReasonNotOwner: the signing key, or the identity provider's subject, is not the
	// identity the decision claims (by).
	ReasonNotOwner Reason = "not_owner"
	// ReasonNotAllowed: the identity is proven, but a Policy rule does not let it make
	// this kind of decision.
	ReasonNotAllowed Reason = "not_allowed"
)

// RefusedError is a decision that did not verify. Callers branch on Reason; Error names
// what was wrong without echoing the token.
type RefusedError struct {
	Reason Reason
	Detail string
}

// Error says why, with the reason code.
func (e *RefusedError) Error() string {
	return fmt.Sprintf("decision refused (%s): %s", e.Reason, e.Detail)
}

func refuse(r Reason, format string, args ...any) error {
	return &RefusedError{Reason: r, Detail: fmt.Sprintf(format, args...)}
}

// IsRefused reports whether err is a *RefusedError, and which reason.
func IsRefused(err error) (Reason, bool) {
	var re *RefusedError
	if errors.As(err, &re) {
		return re.Reason, true
	}
	return "", false
}

// Method says how a decision's identity was verified.
type Method string

// Verification methods.
const (
	// MethodSignature: signed with a key of the run's pinned directory.
	MethodSignature Method = "signature"
	// MethodIdentityProvider: a token of the organisation's identity provider (OIDC).
	MethodIdentityProvider Method = "identity_provider"
)

// Verified is what a verified decision proves: who (By) with which key, how, and when the
// token was issued. Runs record it next to the decision; Nonce lets a run refuse the
// same token twice.
type Verified struct {
	By       string    `json:"by"`
	KeyID    string    `json:"key_id"`
	Method   Method    `json:"method"`
	Issuer   string    `json:"issuer,omitempty"`
	IssuedAt time.Time `json:"issued_at"`
	Expiry   time.Time `json:"expiry"`
	Nonce    string    `json:"nonce,omitempty"`
	// Unbound: the token binds no first run ID, only the workflow ID (accepted with
	// VerifyOptions.AllowUnbound).
	Unbound bool `json:"unbound,omitempty"`
}

// VerifyOptions tune verification. The zero value is fine.
type VerifyOptions struct {
	// Now is the time to check validity at; zero means time.Now. Workflow code passes
	// workflow.Now, so a replay reaches the same verdict.
	Now time.Time
	// Leeway absorbs clock skew between signer and worker; zero means 30 seconds.
	Leeway time.Duration
	// MaxLifetime refuses tokens valid for longer (expiry minus issue time); zero means one
	// hour.
	MaxLifetime time.Duration
	// AllowUnbound accepts a token that binds no first run ID (signed before decisions
	// bound the run; Verified.Unbound says so), for runs that started before their worker
	// bound decisions to the run, whose recorded proofs bind none. A token that binds a
	// first run ID must bind the wanted one all the same. New runs leave it false: a proof
	// bound only to the workflow ID could come from an earlier run with the same ID.
	AllowUnbound bool
}

func (o VerifyOptions) resolved() VerifyOptions {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.Leeway <= 0 {
		o.Leeway = 30 * time.Second
	}
	if o.MaxLifetime <= 0 {
		o.MaxLifetime = time.Hour
	}
	return o
}

// Verify checks a signed decision: token must be signed (EdDSA) by a key of d owned by
// want.By, be valid now, be for want's namespace, and bind exactly want (workflow ID,
// first run ID, target, kind, payload hash). It returns what the token proves, or a *RefusedError.
func (d *Directory) Verify(token string, want Decision, o VerifyOptions) (Verified, error) {
	o = o.resolved()
	if err := want.Check(); err != nil {
		return Verified{}, err
	}
	tok, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		return Verified{}, refuse(ReasonMalformed, "%v", err)
	}
	if len(tok.Headers) != 1 {
		return Verified{}, refuse(ReasonMalformed, "want one signature, the token has %d", len(tok.Headers))
	}
	kid := tok.Headers[0].KeyID
	key, ok := d.Key(kid)
	if !ok {
		return Verified{}, refuse(ReasonUnknownKey, "key %q is not in the run's directory", kid)
	}
	var c claims
	if err := tok.Claims(key.JWK.Key, &c); err != nil {
		return Verified{}, refuse(ReasonBadSignature, "key %s: %v", kid, err)
	}
	if key.Owner != want.By {
		return Verified{}, refuse(ReasonNotOwner, "key %s belongs to %s, the decision claims %s", kid, key.Owner, want.By)
	}
	if err := checkTimes(c.IssuedAt, c.NotBefore, c.Expiry, o); err != nil {
		return Verified{}, err
	}
	if c.Audience != Audience(want.Namespace) {
		return Verified{}, refuse(ReasonAudience, "the token is for %q, not %q", c.Audience, Audience(want.Namespace))
	}
	got := c.Decision
	unbound := got.FirstRunID == ""
	if unbound && o.AllowUnbound {
		got.FirstRunID = want.FirstRunID
	}
	if got != want {
		return Verified{}, refuse(ReasonMismatch, "the token signs %s", describe(got, want))
	}
	return Verified{By: key.Owner, KeyID: kid, Method: MethodSignature, IssuedAt: unixTime(c.IssuedAt),
		Expiry: unixTime(c.Expiry), Nonce: c.Nonce, Unbound: unbound}, nil
}

// checkTimes checks issue, not-before and expiry times (seconds) against o.
func checkTimes(iat, nbf, exp int64, o VerifyOptions) error {
	if exp == 0 || iat == 0 {
		return refuse(ReasonMalformed, "the token has no issue or expiry time")
	}
	if life := time.Duration(exp-iat) * time.Second; life > o.MaxLifetime || life <= 0 {
		return refuse(ReasonExpired, "the token is valid for %s; at most %s is allowed", life, o.MaxLifetime)
	}
	if o.Now.After(unixTime(exp).Add(o.Leeway)) {
		return refuse(ReasonExpired, "the token expired at %s", unixTime(exp).Format(time.RFC3339))
	}
	start := iat
	if nbf > start {
		start = nbf
	}
	if o.Now.Add(o.Leeway).Before(unixTime(start)) {
		return refuse(ReasonNotYetValid, "the token is valid from %s", unixTime(start).Format(time.RFC3339))
	}
	return nil
}

// describe names the first field where got differs from want.
func describe(got, want Decision) string {
	switch {
	case got.Namespace != want.Namespace:
		return fmt.Sprintf("namespace %q, not %q", got.Namespace, want.Namespace)
	case got.Run != want.Run:
		return fmt.Sprintf("run %q, not %q", got.Run, want.Run)
	case got.FirstRunID == "":
		return fmt.Sprintf("no run, only the workflow ID %q: it was signed before decisions bound the run; sign it again", got.Run)
	case got.FirstRunID != want.FirstRunID:
		return fmt.Sprintf("run %q of %q, not %q: another run with the same workflow ID", got.FirstRunID, got.Run, want.FirstRunID)
	case got.Target != want.Target:
		return fmt.Sprintf("target %q, not %q", got.Target, want.Target)
	case got.Kind != want.Kind:
		return fmt.Sprintf("a %s, not a %s", got.Kind, want.Kind)
	case got.PayloadSHA256 != want.PayloadSHA256:
		return "another payload"
	case got.By != want.By:
		return fmt.Sprintf("for %q, not %q", got.By, want.By)
	}
	return "another decision"
}
