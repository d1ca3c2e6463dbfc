package auth

import (
	"testing"
	"unicode/utf8"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// legacyToken signs d as a client did before decisions bound the run: the claims carry
// no first run ID.
func legacyToken(t *testing.T, k Key, d Decision) string {
	t.Helper()
	d.FirstRunID = ""
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: jose.JSONWebKey{Key: k.Private, KeyID: k.ID}},
		(&jose.SignerOptions{}).WithType("JWT"))
	require.NoError(t, err)
	c := claims{Decision: d, Audience: Audience(d.Namespace), IssuedAt: t0.Unix(), Expiry: t0.Add(DefaultLifetime).Unix(), Nonce: "n1"}
	tok, err := jwt.Signed(signer).Claims(c).Serialize()
	require.NoError(t, err)
	return tok
}

// TestProofsBindTheRun is issue 31's third hole: a proof signed for one run is refused
// on a new run that reuses the workflow ID (another first run ID), and a proof that
// binds no run at all is refused unless the verifier allows it (runs started before
// decisions bound the run), in which case Verified says it is unbound.
func TestProofsBindTheRun(t *testing.T) {
	alice, _, dir := keys(t)
	d := vote(t, "alice")
	tok, err := Sign(alice, d, SignOptions{Now: t0})
	require.NoError(t, err)
	legacy := legacyToken(t, alice, d)
	newRun := d
	newRun.FirstRunID = "first-2"

	v, err := dir.Verify(tok, d, VerifyOptions{Now: t0})
	require.NoError(t, err)
	assert.False(t, v.Unbound)

	for _, o := range []VerifyOptions{{Now: t0}, {Now: t0, AllowUnbound: true}} {
		_, err = dir.Verify(tok, newRun, o)
		reason, _ := IsRefused(err)
		assert.Equal(t, ReasonMismatch, reason, "%v", err)
		assert.ErrorContains(t, err, `the token signs run "first-1" of "ship-42", not "first-2": another run with the same workflow ID`)
	}

	_, err = dir.Verify(legacy, d, VerifyOptions{Now: t0})
	reason, _ := IsRefused(err)
	assert.Equal(t, ReasonMismatch, reason, "%v", err)
	assert.ErrorContains(t, err, `the token signs no run, only the workflow ID "ship-42": it was signed before decisions bound the run; sign it again`)

	v, err = dir.Verify(legacy, d, VerifyOptions{Now: t0, AllowUnbound: true})
	require.NoError(t, err)
	assert.True(t, v.Unbound)
	_, err = dir.Verify(legacy, func() Decision { o := d; o.Target = "deploy"; return o }(), VerifyOptions{Now: t0, AllowUnbound: true})
	assert.ErrorContains(t, err, "the token signs target", "an unbound proof still binds the rest")
}

func TestSignNeedsTheRun(t *testing.T) {
	alice, _, _ := keys(t)
	d := vote(t, "alice")
	d.FirstRunID = ""
	_, err := Sign(alice, d, SignOptions{Now: t0})
	assert.EqualError(t, err, "auth: decision for run ship-42 has no first run ID (the run it is for, not only its workflow ID)")
}

// FuzzRunBinding: whatever two first run IDs, a proof signed for one verifies for the
// other only when they are equal (and always then, for IDs JSON can carry).
func FuzzRunBinding(f *testing.F) {
	alice, err := NewKey("alice-1", "alice")
	if err != nil {
		f.Fatal(err)
	}
	dir, err := NewDirectory(alice.Public())
	if err != nil {
		f.Fatal(err)
	}
	f.Add("first-1", "first-2")
	f.Add("a", "a")
	f.Add("0192b3c4", "0192B3C4")
	f.Fuzz(func(t *testing.T, signed, sent string) {
		if signed == "" || sent == "" {
			return
		}
		d := Decision{Namespace: "default", Run: "ship-42", FirstRunID: signed, Kind: KindCancel, PayloadSHA256: "0000000000000000000000000000000000000000000000000000000000000000", By: "alice"}
		tok, err := Sign(alice, d, SignOptions{Now: t0})
		if err != nil {
			t.Fatal(err)
		}
		want := d
		want.FirstRunID = sent
		_, err = dir.Verify(tok, want, VerifyOptions{Now: t0, AllowUnbound: true})
		if err == nil && signed != sent {
			t.Fatalf("signed for %q, accepted for %q", signed, sent)
		}
		// JSON carries valid UTF-8 only: another ID is refused, never accepted.
		if err != nil && signed == sent && utf8.ValidString(signed) {
			t.Fatalf("signed for %q, refused for it: %v", signed, err)
		}
	})
}
