package flow

import (
	"testing"

	"github.com/gateflow/gateflow/runs"
)

// FuzzParseWait: waits come back from search attributes and flowctl arguments. Whatever
// ParseWait accepts prints back to itself and parses to the same Wait.
func FuzzParseWait(f *testing.F) {
	for _, s := range []string{"approval:ship", "input:notes", "signal:deploy-done/v1.2.3", "signal:x", "budget", "resume", "resume:release", "permit:deploys", "approval:", ":x", "bogus:x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := runs.ParseWait(s)
		if err != nil {
			return
		}
		again, err := runs.ParseWait(w.String())
		if err != nil {
			t.Fatalf("%q parsed to %+v, whose String %q does not parse: %v", s, w, w.String(), err)
		}
		if again != w {
			t.Fatalf("%q: %+v, then %+v", s, w, again)
		}
		_ = w.Status()
		_ = w.Command("run-1")
	})
}
