package devauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

func newKey(t *testing.T) *Key {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &Key{Private: priv, ID: keyID(&priv.PublicKey)}
}

func TestVerify(t *testing.T) {
	k, other := newKey(t), newKey(t)
	now := time.Now()
	mint := func(k *Key, sub string, at time.Time, ttl time.Duration) string {
		t.Helper()
		tok, err := k.Mint(Token{Subject: sub, TTL: ttl}, at)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	good := mint(k, "alice", now, time.Hour)
	v, err := Verify(k.Public(), k.ID, "Bearer "+good+"\n", now)
	if err != nil || v.Subject != "alice" || !v.Expires.Equal(now.Add(time.Hour).Truncate(time.Second)) {
		t.Fatalf("good token: %+v %v", v, err)
	}
	// A token another key signed, even naming this key's ID.
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: other.Private},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", k.ID))
	if err != nil {
		t.Fatal(err)
	}
	forged, err := jwt.Signed(sig).Claims(jwt.Claims{Subject: "alice", Expiry: jwt.NewNumericDate(now.Add(time.Hour))}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	noExpiry, err := jwt.Signed(mustSigner(t, k)).Claims(jwt.Claims{Subject: "alice"}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	noSubject, err := jwt.Signed(mustSigner(t, k)).Claims(jwt.Claims{Expiry: jwt.NewNumericDate(now.Add(time.Hour))}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(good, ".")
	for name, bad := range map[string]string{
		"empty":            "  ",
		"not a JWT":        "hello",
		"alg none":         `eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.` + parts[1] + `.`,
		"other key's kid":  mint(other, "alice", now, time.Hour),
		"forged signature": forged,
		"expired":          mint(k, "alice", now.Add(-2*time.Hour), time.Hour),
		"not yet valid":    mint(k, "alice", now.Add(time.Hour), time.Hour),
		"no expiry":        noExpiry,
		"no subject":       noSubject,
		"too long":         strings.Repeat("a", maxTokenLen+1),
		"tampered payload": parts[0] + "." + parts[1] + "x." + parts[2],
	} {
		if v, err := Verify(k.Public(), k.ID, bad, now); !errors.Is(err, ErrTokenInvalid) {
			t.Errorf("%s: want ErrTokenInvalid, got %+v %v", name, v, err)
		}
	}
}

func mustSigner(t *testing.T, k *Key) jose.Signer {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: k.Private}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", k.ID))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// FuzzVerify: no input makes Verify panic, and whatever it accepts names a valid subject.
func FuzzVerify(f *testing.F) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	k := &Key{Private: priv, ID: keyID(&priv.PublicKey)}
	now := time.Now()
	tok, err := k.Mint(Token{Subject: "alice"}, now)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(tok)
	f.Add("Bearer " + tok)
	f.Add("a.b.c")
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Verify(k.Public(), k.ID, s, now)
		if err == nil && CheckSubject(v.Subject) != nil {
			t.Fatalf("accepted subject %q", v.Subject)
		}
	})
}
