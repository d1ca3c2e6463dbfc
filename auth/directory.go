package auth

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/go-jose/go-jose/v4"
)

// DirectoryKey is one public key in a Directory and the identity it belongs to.
type DirectoryKey struct {
	Owner string          `json:"owner"`
	JWK   jose.JSONWebKey `json:"jwk"`
}

// Directory is the public keys of the people who may decide, by key ID: what a worker
// verifies signed decisions against. A run pins the directory it started with (its keys
// are part of its history), so replay and later verdicts do not depend on keys added or
// removed afterwards.
type Directory struct {
	keys map[string]DirectoryKey
}

// NewDirectory makes a directory of keys. Key IDs must be unique and every key public
// and owned.
func NewDirectory(keys ...DirectoryKey) (*Directory, error) {
	d := &Directory{keys: map[string]DirectoryKey{}}
	for _, k := range keys {
		if err := d.add(k); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func (d *Directory) add(k DirectoryKey) error {
	id := k.JWK.KeyID
	switch {
	case id == "":
		return fmt.Errorf("auth: directory key of %q has no key ID", k.Owner)
	case k.Owner == "":
		return fmt.Errorf("auth: directory key %s has no owner", id)
	case !k.JWK.Valid():
		return fmt.Errorf("auth: directory key %s is not a valid JWK", id)
	case !k.JWK.IsPublic():
		return fmt.Errorf("auth: directory key %s is a private key; a directory holds public keys only", id)
	}
	if _, dup := d.keys[id]; dup {
		return fmt.Errorf("auth: directory has key ID %s twice", id)
	}
	d.keys[id] = k
	return nil
}

// Key is the key with ID id.
func (d *Directory) Key(id string) (DirectoryKey, bool) {
	if d == nil {
		return DirectoryKey{}, false
	}
	k, ok := d.keys[id]
	return k, ok
}

// Keys are the directory's keys in key ID order.
func (d *Directory) Keys() []DirectoryKey {
	if d == nil {
		return nil
	}
	out := make([]DirectoryKey, 0, len(d.keys))
	for _, k := range d.keys {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].JWK.KeyID < out[j].JWK.KeyID })
	return out
}

// directoryFile is a directory on disk and on the wire.
type directoryFile struct {
	Keys []DirectoryKey `json:"keys"`
}

// MarshalJSON writes the directory as {"keys": [{"owner": ..., "jwk": {...}}, ...]}.
func (d *Directory) MarshalJSON() ([]byte, error) {
	return json.Marshal(directoryFile{Keys: d.Keys()})
}

// UnmarshalJSON reads what MarshalJSON wrote, with the checks of NewDirectory.
func (d *Directory) UnmarshalJSON(b []byte) error {
	var f directoryFile
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("auth: directory: %w", err)
	}
	nd, err := NewDirectory(f.Keys...)
	if err != nil {
		return err
	}
	*d = *nd
	return nil
}

// LoadDirectory reads a directory file (the JSON MarshalJSON writes).
func LoadDirectory(path string) (*Directory, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth: read directory: %w", err)
	}
	d := &Directory{}
	if err := json.Unmarshal(b, d); err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return d, nil
}
