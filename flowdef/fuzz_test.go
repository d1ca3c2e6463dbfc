package flowdef

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseAndValidate feeds definition files (YAML or JSON from anyone who can write to
// a served directory or run flowctl validate) to Parse and Validate: neither may panic,
// every error Validate reports carries a position inside the file, and what Parse accepts
// is at most MaxFileSize bytes as canonical JSON (aliases cannot blow it up).
func FuzzParseAndValidate(f *testing.F) {
	for _, dir := range []string{"testdata/valid", "testdata/invalid"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte("name: x\nsteps: [{id: a, uses: shell, with: {command: echo}}]\n"))
	f.Add([]byte(`{"name": "j", "steps": [{"id": "a", "set": {"x": "${{ 1 + 1 }}"}}]}`))
	f.Add([]byte("name: l\nsteps: [{id: a, set: {x: 1}}]\nvars:\n  a: &a [x, x, x, x, x, x, x, x]\n  b: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n  c: &c [*b, *b, *b, *b, *b, *b, *b, *b]\n  d: [*c, *c, *c, *c, *c, *c, *c, *c]\n"))
	f.Add([]byte("name: l\nsteps: [{id: a, set: {x: 1}}]\nvars: {a: &x [1, *x]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		def, err := Parse("f.yaml", data)
		if err != nil || def == nil {
			return
		}
		if n := len(def.Canonical()); n > MaxFileSize {
			t.Fatalf("accepted a definition of %d bytes as canonical JSON, over MaxFileSize", n)
		}
		err = Validate(def, &StaticRegistry{})
		for _, e := range Errors(err) {
			if e.Pos.File != "" && e.Pos.File != "f.yaml" {
				continue // an error of a sub-flow names its own file
			}
			if e.Pos.Line < 0 || e.Pos.Col < 0 {
				t.Fatalf("error with a negative position: %s", e.String())
			}
		}
		_ = def.Hash()
		_ = def.Canonical()
	})
}
