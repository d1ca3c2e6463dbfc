package auth

import (
	"testing"
	"time"
)

// FuzzVerify feeds arbitrary tokens to both verifiers: they refuse, never panic, and
// never accept a token not signed by a directory key.
func FuzzVerify(f *testing.F) {
	alice, err := NewKey("alice-1", "alice")
	if err != nil {
		f.Fatal(err)
	}
	dir, err := NewDirectory(alice.Public())
	if err != nil {
		f.Fatal(err)
	}
	h, _ := PayloadHash(map[string]any{"approve": true})
	d := Decision{Namespace: "default", Run: "r", FirstRunID: "first-r", Target: "g", Kind: KindVote, PayloadSHA256: h, By: "alice"}
	good, err := Sign(alice, d, SignOptions{Now: t0})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add("eyJhbGciOiJub25lIn0.e30.")
	f.Add("a.b.c")
	f.Add("")
	is := &Issuer{URL: "https://idp", Audience: "gateflow"}
	f.Fuzz(func(t *testing.T, tok string) {
		v, err := dir.Verify(tok, d, VerifyOptions{Now: t0.Add(time.Second)})
		if err == nil && (tok != good || v.By != "alice") {
			t.Fatalf("accepted a token that is not alice's: %q", tok)
		}
		if _, err := is.Verify(tok, "alice", VerifyOptions{Now: t0}); err == nil {
			t.Fatalf("an issuer without keys accepted %q", tok)
		}
	})
}

// FuzzDirectoryJSON feeds arbitrary key directory files (flow-worker --auth-keys): refused,
// or a directory whose every key is public and owned; never a panic.
func FuzzDirectoryJSON(f *testing.F) {
	alice, err := NewKey("alice-1", "alice")
	if err != nil {
		f.Fatal(err)
	}
	d, err := NewDirectory(alice.Public())
	if err != nil {
		f.Fatal(err)
	}
	good, err := d.MarshalJSON()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"keys":[]}`))
	f.Add([]byte(`{"keys":[{"owner":"","jwk":{}}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var dir Directory
		if dir.UnmarshalJSON(b) != nil {
			return
		}
		for _, k := range dir.Keys() {
			if k.Owner == "" || k.JWK.KeyID == "" || !k.JWK.IsPublic() {
				t.Fatalf("accepted a key without owner or ID, or a private one: %+v", k)
			}
		}
	})
}
