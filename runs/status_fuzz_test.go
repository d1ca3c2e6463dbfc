package runs

import "testing"

// FuzzParseStatus: statuses come from flowctl list --status. ParseStatus accepts exactly
// the names of Statuses, each parsing to itself; a refusal lists the valid names.
func FuzzParseStatus(f *testing.F) {
	for _, s := range []string{"running", "awaiting_approval", "Running", " failed", "", "budget_exceeded"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, err := ParseStatus(s)
		if err != nil {
			if st != "" || err.Error() == "" {
				t.Fatalf("ParseStatus(%q) = %q, %v", s, st, err)
			}
			for _, known := range Statuses() {
				if string(known) == s {
					t.Fatalf("ParseStatus refused the status %q", s)
				}
			}
			return
		}
		if string(st) != s {
			t.Fatalf("ParseStatus(%q) = %q", s, st)
		}
	})
}
