package auth

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// DefaultLifetime is how long a signed decision stays valid after it is issued: long
// enough for a slow network and a busy worker, short enough that a captured token is of
// little use.
const DefaultLifetime = 5 * time.Minute

// Key is a person's signing key: a private key with its key ID (the "kid" the key's
// public half has in the directory). Generate one with NewKey; keep it with SaveKey.
type Key struct {
	// ID is the key ID, unique in the directory ("alice-2026-12").
	ID string
	// Owner is the identity the key belongs to.
	Owner string
	// Private is the Ed25519 signing key.
	Private ed25519.PrivateKey
}

// NewKey makes an Ed25519 key for owner with key ID id.
func NewKey(id, owner string) (Key, error) {
	if id == "" || owner == "" {
		return Key{}, fmt.Errorf("auth: a key needs an ID and an owner")
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return Key{}, fmt.Errorf("auth: generate key: %w", err)
	}
	return Key{ID: id, Owner: owner, Private: priv}, nil
}

// Public is the key's public half as a directory entry.
func (k Key) Public() DirectoryKey {
	return DirectoryKey{Owner: k.Owner, JWK: jose.JSONWebKey{Key: k.Private.Public(), KeyID: k.ID, Use: "sig", Algorithm: string(jose.EdDSA)}}
}

// keyFile is a private key on disk: a JWK with the owner beside it.
type keyFile struct {
	Owner string          `json:"owner"`
	JWK   jose.JSONWebKey `json:"jwk"`
}

// SaveKey writes k to path (mode 0600) as JSON: its owner and the private JWK.
func SaveKey(path string, k Key) error {
	b, err := json.MarshalIndent(keyFile{Owner: k.Owner, JWK: jose.JSONWebKey{Key: k.Private, KeyID: k.ID, Use: "sig", Algorithm: string(jose.EdDSA)}}, "", "  ")
	if err != nil {
		return fmt.Errorf("auth: encode key %s: %w", k.ID, err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("auth: write key: %w", err)
	}
	return nil
}

// LoadKey reads a key SaveKey wrote.
func LoadKey(path string) (Key, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Key{}, fmt.Errorf("auth: read key: %w", err)
	}
	var f keyFile
	if err := json.Unmarshal(b, &f); err != nil {
		return Key{}, fmt.Errorf("auth: key file %s: %w", path, err)
	}
	priv, ok := f.JWK.Key.(ed25519.PrivateKey)
	if !ok {
		return Key{}, fmt.Errorf("auth: key file %s holds no Ed25519 private key", path)
	}
	if f.JWK.KeyID == "" || f.Owner == "" {
		return Key{}, fmt.Errorf("auth: key file %s has no key ID or owner", path)
	}
	return Key{ID: f.JWK.KeyID, Owner: f.Owner, Private: priv}, nil
}

// SignOptions tune Sign. The zero value is fine.
type SignOptions struct {
	// Now is the issue time; zero means time.Now.
	Now time.Time
	// Lifetime is how long the signature is valid; zero means DefaultLifetime.
	Lifetime time.Duration
	// Nonce makes the token unique; empty means 16 random bytes.
	Nonce string
}

// Sign signs d with k and returns the compact JWS (a JWT) to send with the decision. d.By
// must be the key's owner: nobody signs for someone else.
func Sign(k Key, d Decision, o SignOptions) (string, error) {
	if err := d.Check(); err != nil {
		return "", err
	}
	if d.By != k.Owner {
		return "", fmt.Errorf("auth: key %s belongs to %s, not %s", k.ID, k.Owner, d.By)
	}
	if len(k.Private) != ed25519.PrivateKeySize {
		return "", fmt.Errorf("auth: key %s has no Ed25519 private key", k.ID)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: jose.JSONWebKey{Key: k.Private, KeyID: k.ID}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", fmt.Errorf("auth: signer for key %s: %w", k.ID, err)
	}
	now, life, nonce := o.Now, o.Lifetime, o.Nonce
	if now.IsZero() {
		now = time.Now()
	}
	if life <= 0 {
		life = DefaultLifetime
	}
	if nonce == "" {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return "", fmt.Errorf("auth: nonce: %w", err)
		}
		nonce = hex.EncodeToString(b)
	}
	c := claims{Decision: d, Audience: Audience(d.Namespace), IssuedAt: now.Unix(), Expiry: now.Add(life).Unix(), Nonce: nonce}
	tok, err := jwt.Signed(signer).Claims(c).Serialize()
	if err != nil {
		return "", fmt.Errorf("auth: sign: %w", err)
	}
	return tok, nil
}
