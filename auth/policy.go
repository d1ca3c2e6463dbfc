package auth

import (
	"fmt"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Policy is what a worker requires of decisions, and what a run pins when it starts: the
// directory of personal keys, the identity provider, and whether unsigned decisions are
// refused. A run verifies every decision against the Policy it pinned, so a worker
// restarted with other keys does not change the verdicts of runs already going.
type Policy struct {
	// Required refuses decisions without a proof, and decisions sent as Signals (which
	// have no Validator, so a refusal would still be in history).
	Required bool `json:"required"`
	// Directory holds the people's public keys for signed decisions.
	Directory *Directory `json:"directory,omitempty"`
	// Issuer is the organisation's identity provider, for decisions that carry its token.
	Issuer *Issuer `json:"issuer,omitempty"`
}

// Check reports a policy that could verify nothing.
func (p *Policy) Check() error {
	if p.Directory == nil && p.Issuer == nil {
		return fmt.Errorf("auth: the policy has neither a key directory nor an identity provider")
	}
	if p.Issuer != nil && (p.Issuer.URL == "" || p.Issuer.Audience == "" || len(p.Issuer.Keys.Keys) == 0) {
		return fmt.Errorf("auth: the identity provider needs an issuer URL, an audience and keys")
	}
	return nil
}

// Verify checks proof, a signed decision or an identity provider's token, for d: a token
// signed by a directory key is checked by Directory.Verify, any other by Issuer.Verify.
func (p *Policy) Verify(proof string, d Decision, o VerifyOptions) (Verified, error) {
	tok, err := jwt.ParseSigned(proof, append([]jose.SignatureAlgorithm{jose.EdDSA}, identityAlgorithms...))
	if err != nil {
		return Verified{}, refuse(ReasonMalformed, "%v", err)
	}
	if len(tok.Headers) != 1 {
		return Verified{}, refuse(ReasonMalformed, "want one signature, the token has %d", len(tok.Headers))
	}
	kid := tok.Headers[0].KeyID
	if _, ok := p.Directory.Key(kid); ok {
		return p.Directory.Verify(proof, d, o)
	}
	if p.Issuer != nil {
		return p.Issuer.Verify(proof, d.By, o)
	}
	return Verified{}, refuse(ReasonUnknownKey, "key %q is not in the run's directory", kid)
}
