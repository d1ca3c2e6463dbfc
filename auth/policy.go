package auth

import (
	"fmt"
	"slices"
	"strings"

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
	// Rules say who may make decisions of a kind on any run (gates and inputs have their
	// own approvers and assignees): people's names, "group:NAME", and "creator" for the
	// person who started the run. A kind without a rule is open to anyone.
	// Example: {"budget": ["group:budget-admins", "creator"], "pause": ["group:ops"]}.
	Rules map[Kind][]string `json:"rules,omitempty"`
	// Members are the members of the groups the rules name, as the worker's directory had
	// them when the run pinned the policy.
	Members map[string][]string `json:"members,omitempty"`
}

// Allow checks the rule for kind: by may decide when the rule lists them, a group
// (Members) they are in, or "creator" and they started the run.
func (p *Policy) Allow(kind Kind, by, creator string) error {
	rule, ok := p.Rules[kind]
	if !ok {
		return nil
	}
	for _, who := range rule {
		switch {
		case who == by:
			return nil
		case who == "creator" && creator != "" && by == creator:
			return nil
		case strings.HasPrefix(who, "group:") && slices.Contains(p.Members[strings.TrimPrefix(who, "group:")], by):
			return nil
		}
	}
	return refuse(ReasonNotAllowed, "%s decisions are for %s; %s is not among them", kind, strings.Join(rule, ", "), by)
}

// Groups are the groups the rules name, sorted.
func (p *Policy) Groups() []string {
	var out []string
	for _, rule := range p.Rules {
		for _, who := range rule {
			if g, ok := strings.CutPrefix(who, "group:"); ok && !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Check reports a policy that could verify nothing and enforces nothing, or requires proofs
// it cannot verify, and rules for unknown kinds.
func (p *Policy) Check() error {
	for kind, rule := range p.Rules {
		if !kind.Valid() {
			return fmt.Errorf("auth: rule for %q: not one of vote, answer, budget, cancel, pause", kind)
		}
		if len(rule) == 0 {
			return fmt.Errorf("auth: rule for %s lists nobody", kind)
		}
	}
	if p.Directory == nil && p.Issuer == nil && (p.Required || len(p.Rules) == 0) {
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
