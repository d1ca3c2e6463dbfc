package artifactname

import (
	"path"
	"strings"
	"testing"
)

// FuzzCheck feeds arbitrary artifact names: every name Check accepts stays inside the work
// directory once joined to it, and has no backslash or control character.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"dist/app.txt", "a", "../x", "/etc/passwd", "a//b", "a/./b", `a\b`, "a/", "a\x00b", "ok/..."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if Check(name) != nil {
			return
		}
		joined := path.Join("/work", name)
		if !strings.HasPrefix(joined, "/work/") {
			t.Fatalf("Check accepted %q, which leaves the work directory (%s)", name, joined)
		}
		if strings.ContainsAny(name, "\\\x00\n\r") {
			t.Fatalf("Check accepted %q", name)
		}
	})
}
