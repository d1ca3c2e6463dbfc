package events

import (
	"slices"
	"strings"
	"testing"
)

// FuzzParseTypes: flow-worker --event-types never panics, refuses an unknown type by name,
// and what it accepts are known types only.
func FuzzParseTypes(f *testing.F) {
	for _, seed := range []string{"step.failed,approval.requested", "", ",,", " step.failed ", "step.nope", "step.retrying,run.status_changed"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseTypes(s)
		if err != nil {
			if !strings.Contains(err.Error(), "unknown event type") {
				t.Fatalf("refusal does not say what is wrong: %v", err)
			}
			return
		}
		for _, ty := range got {
			if !slices.Contains(Types, ty) {
				t.Fatalf("accepted an unknown type %q", ty)
			}
		}
	})
}
