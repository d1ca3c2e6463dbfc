package devauth

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

func TestKeyMintAndLogin(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "key.json")
	k, created, err := LoadOrCreate(path)
	if err != nil || !created {
		t.Fatalf("create: %v %v", created, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v", st.Mode().Perm())
	}
	k2, created, err := LoadOrCreate(path)
	if err != nil || created || k2.ID != k.ID {
		t.Fatalf("reload: %v %v %s/%s", created, err, k2.ID, k.ID)
	}
	now := time.Now()
	tok, err := k.Mint(Token{Subject: "alice", Permissions: []string{"default:worker"}, TTL: time.Hour}, now)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	if parsed.Headers[0].KeyID != k.ID {
		t.Fatalf("kid %q, want %q", parsed.Headers[0].KeyID, k.ID)
	}
	var std jwt.Claims
	var extra struct {
		Permissions []string `json:"permissions"`
	}
	if err := parsed.Claims(k.Public(), &std, &extra); err != nil {
		t.Fatal(err)
	}
	if std.Subject != "alice" || len(extra.Permissions) != 1 || extra.Permissions[0] != "default:worker" {
		t.Fatalf("claims %+v %+v", std, extra)
	}
	if err := std.Validate(jwt.Expected{Time: now.Add(2 * time.Hour)}); err == nil {
		t.Fatal("token valid after its TTL")
	}
	for _, bad := range []string{"", " alice", "a\nb", strings.Repeat("x", 201)} {
		if _, err := k.Mint(Token{Subject: bad}, now); err == nil {
			t.Fatalf("minted for %q", bad)
		}
	}

	t.Setenv("GATEFLOW_DEV_LOGIN", filepath.Join(dir, "sub", "login.json"))
	if l, err := LoadLogin("127.0.0.1:7233", now); l != nil || err != nil {
		t.Fatalf("login before any: %v %v", l, err)
	}
	if _, err := SaveLogin(Login{Address: "127.0.0.1:7233", Subject: "alice", Token: tok, Expires: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if l, err := LoadLogin("127.0.0.1:7233", now); err != nil || l == nil || l.Token != tok {
		t.Fatalf("login: %v %v", l, err)
	}
	if l, _ := LoadLogin("127.0.0.1:9999", now); l != nil {
		t.Fatal("login used for another address")
	}
	if l, _ := LoadLogin("127.0.0.1:7233", now.Add(2*time.Hour)); l != nil {
		t.Fatal("expired login used")
	}
	if s := LoginSubject(now); s != "alice" {
		t.Fatalf("subject %q", s)
	}
}

func TestLoadRejectsOtherKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.json")
	raw, _ := json.Marshal(jose.JSONWebKey{Key: []byte("0123456789abcdef0123456789abcdef"), KeyID: "h"})
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "P-256") {
		t.Fatalf("err %v", err)
	}
	if err := os.WriteFile(path, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "not a JWK") {
		t.Fatalf("err %v", err)
	}
}
