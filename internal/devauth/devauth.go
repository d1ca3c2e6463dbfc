// Package devauth is the development-only token issuer of `flow-worker --dev --auth` and
// `flowctl login`: one ECDSA P-256 signing key kept in a file, bearer JWTs minted from it
// in the shape Temporal's default JWT claim mapper reads ("sub" and "permissions"), and the
// file where `flowctl login` keeps the token it minted so flowctl (package connect) sends
// it to that server.
//
// It is not an identity provider: whoever can read the key file can mint a token for
// anyone. It exists so the server-side checks (internal/devserver's Authorizer) can be
// exercised with no external IdP.
package devauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Permissions a token can carry, in Temporal's "namespace:role" form. SystemScope is the
// cluster-wide scope of Temporal's claim mapper.
const (
	SystemScope = "temporal-system"
	RoleWorker  = "worker"
	RoleAdmin   = "admin"
)

// Key is the dev signing key.
type Key struct {
	// Private signs tokens.
	Private *ecdsa.PrivateKey
	// ID is the key ID ("kid") tokens name; derived from the public key.
	ID string
}

// Public is the key's public half.
func (k *Key) Public() *ecdsa.PublicKey { return &k.Private.PublicKey }

// DefaultKeyPath is where `flow-worker --dev --auth` keeps its key: next to dbFile when it
// is set, else in the temporary directory.
func DefaultKeyPath(dbFile string) string {
	if dbFile != "" {
		return dbFile + ".auth-key.json"
	}
	return filepath.Join(os.TempDir(), "gateflow-dev-auth-key.json")
}

// LoadOrCreate reads the key at path, or generates one and writes it there (mode 0600).
func LoadOrCreate(path string) (*Key, bool, error) {
	k, err := Load(path)
	if err == nil {
		return k, false, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, false, err
	}
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, false, fmt.Errorf("dev auth key: generate: %w", err)
	}
	k = &Key{Private: priv, ID: keyID(&priv.PublicKey)}
	raw, err := json.MarshalIndent(jose.JSONWebKey{Key: priv, KeyID: k.ID, Algorithm: string(jose.ES256), Use: "sig"}, "", "  ")
	if err != nil {
		return nil, false, fmt.Errorf("dev auth key: encode: %w", err)
	}
	if err := os.WriteFile(path, append(raw, '\n'), 0o600); err != nil {
		return nil, false, fmt.Errorf("dev auth key: write %s: %w", path, err)
	}
	return k, true, nil
}

// Load reads a key LoadOrCreate wrote. A missing file's error wraps os.ErrNotExist.
func Load(path string) (*Key, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("dev auth key %s: %w", path, err)
	}
	var jwk jose.JSONWebKey
	if err := json.Unmarshal(raw, &jwk); err != nil {
		return nil, fmt.Errorf("dev auth key %s: not a JWK: %w", path, err)
	}
	priv, ok := jwk.Key.(*ecdsa.PrivateKey)
	if !ok || priv.Curve != elliptic.P256() {
		return nil, fmt.Errorf("dev auth key %s: want an EC P-256 private key, got %T", path, jwk.Key)
	}
	return &Key{Private: priv, ID: keyID(&priv.PublicKey)}, nil
}

func keyID(pub *ecdsa.PublicKey) string {
	der, err := (&jose.JSONWebKey{Key: pub}).Thumbprint(crypto.SHA256)
	if err != nil {
		// A P-256 public key always has a thumbprint; keep a stable fallback anyway.
		sum := sha256.Sum256(pub.X.Bytes())
		der = sum[:]
	}
	return "gateflow-dev-" + hex.EncodeToString(der[:8])
}

// Token is what Mint puts in a token.
type Token struct {
	// Subject is the person or worker the token names ("sub").
	Subject string
	// Permissions are Temporal "namespace:role" permissions, e.g. "default:worker".
	Permissions []string
	// TTL is how long the token is valid. Default 12h.
	TTL time.Duration
}

// Mint signs t with k as an ES256 JWT.
func (k *Key) Mint(t Token, now time.Time) (string, error) {
	if err := CheckSubject(t.Subject); err != nil {
		return "", err
	}
	if t.TTL <= 0 {
		t.TTL = 12 * time.Hour
	}
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: k.Private},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", k.ID))
	if err != nil {
		return "", fmt.Errorf("dev token: %w", err)
	}
	claims := jwt.Claims{Subject: t.Subject, Issuer: "gateflow-dev", IssuedAt: jwt.NewNumericDate(now),
		NotBefore: jwt.NewNumericDate(now.Add(-time.Minute)), Expiry: jwt.NewNumericDate(now.Add(t.TTL))}
	perms := struct {
		Permissions []string `json:"permissions"`
	}{Permissions: t.Permissions}
	if perms.Permissions == nil {
		perms.Permissions = []string{}
	}
	s, err := jwt.Signed(sig).Claims(claims).Claims(perms).Serialize()
	if err != nil {
		return "", fmt.Errorf("dev token for %s: %w", t.Subject, err)
	}
	return s, nil
}

// CheckSubject refuses names that cannot be a token's subject.
func CheckSubject(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return fmt.Errorf("the name is empty")
	case name != strings.TrimSpace(name):
		return fmt.Errorf("name %q has leading or trailing spaces", name)
	case len(name) > 200:
		return fmt.Errorf("name is %d bytes long, the limit is 200", len(name))
	case strings.ContainsAny(name, "\x00\n\r\t"):
		return fmt.Errorf("name %q has control characters", name)
	}
	return nil
}
