package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func vote(t *testing.T, by string) Decision {
	t.Helper()
	h, err := PayloadHash(map[string]any{"approve": true, "comment": "ship it"})
	require.NoError(t, err)
	return Decision{Namespace: "default", Run: "ship-42", FirstRunID: "first-1", Target: "ship", Kind: KindVote, PayloadSHA256: h, By: by}
}

func keys(t *testing.T) (Key, Key, *Directory) {
	t.Helper()
	alice, err := NewKey("alice-1", "alice")
	require.NoError(t, err)
	bob, err := NewKey("bob-1", "bob")
	require.NoError(t, err)
	dir, err := NewDirectory(alice.Public(), bob.Public())
	require.NoError(t, err)
	return alice, bob, dir
}

func TestSignedVoteVerifies(t *testing.T) {
	alice, _, dir := keys(t)
	d := vote(t, "alice")
	tok, err := Sign(alice, d, SignOptions{Now: t0})
	require.NoError(t, err)
	v, err := dir.Verify(tok, d, VerifyOptions{Now: t0.Add(time.Minute)})
	require.NoError(t, err)
	assert.Equal(t, "alice", v.By)
	assert.Equal(t, "alice-1", v.KeyID)
	assert.Equal(t, MethodSignature, v.Method)
	assert.Equal(t, t0, v.IssuedAt)
	assert.Equal(t, t0.Add(DefaultLifetime), v.Expiry)
	assert.Len(t, v.Nonce, 32)
}

func TestForgedAndReplayedDecisionsAreRefused(t *testing.T) {
	alice, bob, dir := keys(t)
	d := vote(t, "alice")
	good, err := Sign(alice, d, SignOptions{Now: t0})
	require.NoError(t, err)
	otherKey, err := NewKey("alice-1", "alice") // same ID, not in the directory
	require.NoError(t, err)
	wrongKey, err := Sign(otherKey, d, SignOptions{Now: t0})
	require.NoError(t, err)
	bobAsBob, err := Sign(bob, vote(t, "bob"), SignOptions{Now: t0})
	require.NoError(t, err)
	stranger, err := NewKey("mallory-1", "mallory")
	require.NoError(t, err)
	unknown, err := Sign(stranger, vote(t, "mallory"), SignOptions{Now: t0})
	require.NoError(t, err)
	long, err := Sign(alice, d, SignOptions{Now: t0, Lifetime: 48 * time.Hour})
	require.NoError(t, err)
	parts := strings.Split(good, ".")
	body, err := jwtBody(parts[1])
	require.NoError(t, err)
	body["run"] = "ship-43"
	tampered := parts[0] + "." + encodeBody(t, body) + "." + parts[2]
	none := "eyJhbGciOiJub25lIiwia2lkIjoiYWxpY2UtMSJ9." + parts[1] + "."

	with := func(f func(*Decision)) Decision { c := d; f(&c); return c }
	cases := []struct {
		name   string
		token  string
		want   Decision
		now    time.Time
		reason Reason
	}{
		{"another run", good, with(func(c *Decision) { c.Run = "ship-43" }), t0, ReasonMismatch},
		{"another gate", good, with(func(c *Decision) { c.Target = "deploy" }), t0, ReasonMismatch},
		{"another kind", good, with(func(c *Decision) { c.Kind = KindCancel }), t0, ReasonMismatch},
		{"another payload", good, with(func(c *Decision) { c.PayloadSHA256 = strings.Repeat("0", 64) }), t0, ReasonMismatch},
		{"another namespace", good, with(func(c *Decision) { c.Namespace = "prod" }), t0, ReasonAudience},
		{"bob's key, by alice", bobAsBob, d, t0, ReasonNotOwner},
		{"expired", good, d, t0.Add(DefaultLifetime + time.Minute), ReasonExpired},
		{"issued in the future", good, d, t0.Add(-time.Hour), ReasonNotYetValid},
		{"lifetime too long", long, d, t0, ReasonExpired},
		{"key not in the directory", unknown, vote(t, "mallory"), t0, ReasonUnknownKey},
		{"same key ID, another key", wrongKey, d, t0, ReasonBadSignature},
		{"tampered claims", tampered, with(func(c *Decision) { c.Run = "ship-43" }), t0, ReasonBadSignature},
		{"alg none", none, d, t0, ReasonMalformed},
		{"not a token", "alice", d, t0, ReasonMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := dir.Verify(tc.token, tc.want, VerifyOptions{Now: tc.now})
			require.Error(t, err)
			reason, ok := IsRefused(err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, tc.reason, reason, "%v", err)
			assert.NotContains(t, err.Error(), tc.token, "the error does not echo the token")
		})
	}
}

func TestSignRefusesToSignForSomeoneElse(t *testing.T) {
	alice, _, _ := keys(t)
	_, err := Sign(alice, vote(t, "bob"), SignOptions{})
	assert.EqualError(t, err, "auth: key alice-1 belongs to alice, not bob")
	_, err = Sign(alice, Decision{Namespace: "default", Run: "r", FirstRunID: "f", Kind: "approve", By: "alice"}, SignOptions{})
	assert.EqualError(t, err, `auth: decision kind "approve" is not one of vote, answer, budget, cancel, pause`)
}

func TestPayloadHashIsCanonical(t *testing.T) {
	a, err := PayloadHash(json.RawMessage(`{"b": 1, "a": [true, "x"]}`))
	require.NoError(t, err)
	b, err := PayloadHash(json.RawMessage(`{"a":[true,"x"],"b":1}`))
	require.NoError(t, err)
	c, err := PayloadHash(map[string]any{"a": []any{true, "x"}, "b": 1})
	require.NoError(t, err)
	assert.Equal(t, a, b)
	assert.Equal(t, a, c)
	d, err := PayloadHash(json.RawMessage(`{"a":[true,"x"],"b":2}`))
	require.NoError(t, err)
	assert.NotEqual(t, a, d)
	_, err = PayloadHash(json.RawMessage(`{"a":1} {}`))
	assert.EqualError(t, err, "auth: payload has data after its JSON value")
}

func TestKeyAndDirectoryFiles(t *testing.T) {
	alice, bob, dir := keys(t)
	path := filepath.Join(t.TempDir(), "alice.key")
	require.NoError(t, SaveKey(path, alice))
	back, err := LoadKey(path)
	require.NoError(t, err)
	assert.Equal(t, alice.ID, back.ID)
	assert.Equal(t, alice.Owner, back.Owner)
	assert.True(t, alice.Private.Equal(back.Private))

	b, err := json.Marshal(dir)
	require.NoError(t, err)
	assert.NotContains(t, string(b), `"d"`, "a directory holds no private key material")
	dpath := filepath.Join(t.TempDir(), "dir.json")
	require.NoError(t, writeFile(dpath, b))
	loaded, err := LoadDirectory(dpath)
	require.NoError(t, err)
	tok, err := Sign(bob, vote(t, "bob"), SignOptions{Now: t0})
	require.NoError(t, err)
	_, err = loaded.Verify(tok, vote(t, "bob"), VerifyOptions{Now: t0})
	require.NoError(t, err)

	_, err = NewDirectory(alice.Public(), alice.Public())
	assert.EqualError(t, err, "auth: directory has key ID alice-1 twice")
	private := alice.Public()
	private.JWK.Key = alice.Private
	_, err = NewDirectory(private)
	assert.EqualError(t, err, "auth: directory key alice-1 is a private key; a directory holds public keys only")
	noOwner := bob.Public()
	noOwner.Owner = ""
	_, err = NewDirectory(noOwner)
	assert.EqualError(t, err, "auth: directory key bob-1 has no owner")
}

// idp is an identity provider with one ES256 key, serving its JWKS over loopback.
type idp struct {
	key  *ecdsa.PrivateKey
	jwks jose.JSONWebKeySet
}

func newIDP(t *testing.T) *idp {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return &idp{key: k, jwks: jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.PublicKey, KeyID: "idp-1", Algorithm: "ES256", Use: "sig"}}}}
}

func (p *idp) token(t *testing.T, c jwt.Claims) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: p.key, KeyID: "idp-1"}}, (&jose.SignerOptions{}).WithType("JWT"))
	require.NoError(t, err)
	tok, err := jwt.Signed(s).Claims(c).Serialize()
	require.NoError(t, err)
	return tok
}

func TestIdentityProviderTokens(t *testing.T) {
	p := newIDP(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(p.jwks)
	}))
	defer srv.Close()
	set, err := FetchJWKS(t.Context(), srv.Client(), srv.URL)
	require.NoError(t, err)
	is := &Issuer{URL: "https://idp.example", Audience: "gateflow", Keys: set}
	claims := func(f func(*jwt.Claims)) jwt.Claims {
		c := jwt.Claims{Issuer: "https://idp.example", Subject: "alice", Audience: jwt.Audience{"gateflow", "other"},
			IssuedAt: jwt.NewNumericDate(t0), Expiry: jwt.NewNumericDate(t0.Add(10 * time.Minute))}
		if f != nil {
			f(&c)
		}
		return c
	}
	v, err := is.Verify(p.token(t, claims(nil)), "alice", VerifyOptions{Now: t0.Add(time.Minute)})
	require.NoError(t, err)
	assert.Equal(t, Verified{By: "alice", KeyID: "idp-1", Method: MethodIdentityProvider, Issuer: "https://idp.example",
		IssuedAt: t0, Expiry: t0.Add(10 * time.Minute)}, v)

	cases := []struct {
		name   string
		token  string
		by     string
		reason Reason
	}{
		{"another subject", p.token(t, claims(nil)), "bob", ReasonNotOwner},
		{"another issuer", p.token(t, claims(func(c *jwt.Claims) { c.Issuer = "https://evil.example" })), "alice", ReasonAudience},
		{"another audience", p.token(t, claims(func(c *jwt.Claims) { c.Audience = jwt.Audience{"other"} })), "alice", ReasonAudience},
		{"expired", p.token(t, claims(func(c *jwt.Claims) { c.Expiry = jwt.NewNumericDate(t0) })), "alice", ReasonExpired},
		{"no expiry", p.token(t, claims(func(c *jwt.Claims) { c.Expiry = nil })), "alice", ReasonMalformed},
		{"another key", func() string { q := newIDP(t); return q.token(t, claims(nil)) }(), "alice", ReasonBadSignature},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := is.Verify(tc.token, tc.by, VerifyOptions{Now: t0.Add(time.Minute)})
			reason, ok := IsRefused(err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, tc.reason, reason, "%v", err)
		})
	}
}

func TestPolicyPicksTheVerifierByKey(t *testing.T) {
	alice, _, dir := keys(t)
	p := newIDP(t)
	pol := &Policy{Required: true, Directory: dir, Issuer: &Issuer{URL: "https://idp", Audience: "gateflow", Keys: p.jwks}}
	require.NoError(t, pol.Check())
	d := vote(t, "alice")
	signed, err := Sign(alice, d, SignOptions{Now: t0})
	require.NoError(t, err)
	v, err := pol.Verify(signed, d, VerifyOptions{Now: t0})
	require.NoError(t, err)
	assert.Equal(t, MethodSignature, v.Method)
	idTok := p.token(t, jwt.Claims{Issuer: "https://idp", Subject: "alice", Audience: jwt.Audience{"gateflow"},
		IssuedAt: jwt.NewNumericDate(t0), Expiry: jwt.NewNumericDate(t0.Add(time.Minute))})
	v, err = pol.Verify(idTok, d, VerifyOptions{Now: t0})
	require.NoError(t, err)
	assert.Equal(t, MethodIdentityProvider, v.Method)

	// The pinned policy survives JSON (it travels in the run's history).
	b, err := json.Marshal(pol)
	require.NoError(t, err)
	var back Policy
	require.NoError(t, json.Unmarshal(b, &back))
	_, err = back.Verify(signed, d, VerifyOptions{Now: t0})
	require.NoError(t, err)
	_, err = back.Verify(idTok, d, VerifyOptions{Now: t0})
	require.NoError(t, err)

	noIDP := &Policy{Directory: dir}
	_, err = noIDP.Verify(idTok, d, VerifyOptions{Now: t0})
	reason, _ := IsRefused(err)
	assert.Equal(t, ReasonUnknownKey, reason, "%v", err)
	assert.EqualError(t, (&Policy{}).Check(), "auth: the policy has neither a key directory nor an identity provider")
}

func TestPolicyRules(t *testing.T) {
	p := &Policy{Rules: map[Kind][]string{KindBudget: {"group:budget-admins", "creator"}, KindPause: {"olga"}},
		Members: map[string][]string{"budget-admins": {"bea"}}}
	assert.Equal(t, []string{"budget-admins"}, p.Groups())
	assert.NoError(t, p.Allow(KindBudget, "bea", "carl"), "a group member")
	assert.NoError(t, p.Allow(KindBudget, "carl", "carl"), "the run's creator")
	assert.NoError(t, p.Allow(KindPause, "olga", ""), "a named person")
	assert.NoError(t, p.Allow(KindVote, "anyone", ""), "no rule: the gate's own approvers decide")
	err := p.Allow(KindBudget, "mallory", "carl")
	reason, ok := IsRefused(err)
	require.True(t, ok)
	assert.Equal(t, ReasonNotAllowed, reason)
	assert.EqualError(t, err, "decision refused (not_allowed): budget decisions are for group:budget-admins, creator; mallory is not among them")
	assert.Error(t, p.Allow(KindBudget, "", ""), "no identity, no creator match")
	assert.EqualError(t, (&Policy{Rules: map[Kind][]string{"raise": {"x"}}}).Check(), `auth: rule for "raise": not one of vote, answer, budget, cancel, pause`)
}
