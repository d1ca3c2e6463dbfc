package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Issuer is an organisation's identity provider (OIDC): its issuer URL, the audience its
// tokens must name for gateflow, and its signing keys (JWKS). A decision may carry such a
// token instead of a personal signature; its subject must be the decision's identity.
type Issuer struct {
	// URL is the issuer ("iss") tokens must carry.
	URL string `json:"url"`
	// Audience is the audience ("aud") tokens must include.
	Audience string `json:"audience"`
	// Keys are the issuer's public keys.
	Keys jose.JSONWebKeySet `json:"keys"`
}

// identityAlgorithms are the signature algorithms accepted from identity providers.
var identityAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.ES256, jose.ES384, jose.PS256, jose.EdDSA}

// Verify checks an identity provider's token: signed by one of the issuer's keys, issued
// by it for its Audience, valid now, and with subject by.
func (is *Issuer) Verify(token, by string, o VerifyOptions) (Verified, error) {
	o = o.resolved()
	tok, err := jwt.ParseSigned(token, identityAlgorithms)
	if err != nil {
		return Verified{}, refuse(ReasonMalformed, "%v", err)
	}
	if len(tok.Headers) != 1 {
		return Verified{}, refuse(ReasonMalformed, "want one signature, the token has %d", len(tok.Headers))
	}
	kid := tok.Headers[0].KeyID
	keys := is.Keys.Key(kid)
	if len(keys) == 0 {
		return Verified{}, refuse(ReasonUnknownKey, "key %q is not among the keys of %s", kid, is.URL)
	}
	var c jwt.Claims
	if err := tok.Claims(keys[0].Key, &c); err != nil {
		return Verified{}, refuse(ReasonBadSignature, "key %s: %v", kid, err)
	}
	if c.Issuer != is.URL {
		return Verified{}, refuse(ReasonAudience, "issued by %q, not %q", c.Issuer, is.URL)
	}
	if !slices.Contains([]string(c.Audience), is.Audience) {
		return Verified{}, refuse(ReasonAudience, "the token is for %v, not %q", []string(c.Audience), is.Audience)
	}
	var iat, nbf, exp int64
	if c.IssuedAt != nil {
		iat = c.IssuedAt.Time().Unix()
	}
	if c.NotBefore != nil {
		nbf = c.NotBefore.Time().Unix()
	}
	if c.Expiry != nil {
		exp = c.Expiry.Time().Unix()
	}
	if err := checkTimes(iat, nbf, exp, o); err != nil {
		return Verified{}, err
	}
	if c.Subject != by {
		return Verified{}, refuse(ReasonNotOwner, "the token's subject is %q, the decision claims %q", c.Subject, by)
	}
	return Verified{By: by, KeyID: kid, Method: MethodIdentityProvider, Issuer: is.URL,
		IssuedAt: unixTime(iat), Expiry: unixTime(exp)}, nil
}

// LoadJWKS reads a JWKS file.
func LoadJWKS(path string) (jose.JSONWebKeySet, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return jose.JSONWebKeySet{}, fmt.Errorf("auth: read JWKS: %w", err)
	}
	return parseJWKS(b, path)
}

// FetchJWKS gets a JWKS from url (an identity provider's jwks_uri). Workers fetch it when
// they start; runs pin what they verified with.
func FetchJWKS(ctx context.Context, c *http.Client, url string) (jose.JSONWebKeySet, error) {
	if c == nil {
		c = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return jose.JSONWebKeySet{}, fmt.Errorf("auth: JWKS URL: %w", err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return jose.JSONWebKeySet{}, fmt.Errorf("auth: fetch JWKS: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return jose.JSONWebKeySet{}, fmt.Errorf("auth: fetch JWKS %s: %s", url, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return jose.JSONWebKeySet{}, fmt.Errorf("auth: fetch JWKS: %w", err)
	}
	return parseJWKS(b, url)
}

func parseJWKS(b []byte, from string) (jose.JSONWebKeySet, error) {
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(b, &set); err != nil {
		return set, fmt.Errorf("auth: JWKS %s: %w", from, err)
	}
	if len(set.Keys) == 0 {
		return set, fmt.Errorf("auth: JWKS %s has no keys", from)
	}
	for _, k := range set.Keys {
		if !k.IsPublic() {
			return set, fmt.Errorf("auth: JWKS %s holds a private key (%s)", from, k.KeyID)
		}
	}
	return set, nil
}

// TokenSubject is the subject ("sub") an identity provider's token names, read WITHOUT
// verifying it: a client uses it as its default identity, the run verifies the token.
func TokenSubject(token string) (string, error) {
	tok, err := jwt.ParseSigned(token, identityAlgorithms)
	if err != nil {
		return "", fmt.Errorf("auth: identity token: %w", err)
	}
	var c jwt.Claims
	if err := tok.UnsafeClaimsWithoutVerification(&c); err != nil {
		return "", fmt.Errorf("auth: identity token claims: %w", err)
	}
	if c.Subject == "" {
		return "", fmt.Errorf("auth: identity token has no subject")
	}
	return c.Subject, nil
}
