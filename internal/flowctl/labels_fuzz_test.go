package flowctl

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// FuzzParseLabels: flowctl start --label k=v values. parseLabels never panics; a refusal
// names the offending label; an accepted list has one entry per pair, split at the first
// "=", and printing the map back as k=v pairs parses to the same map.
func FuzzParseLabels(f *testing.F) {
	for _, s := range []string{"team=web", "team=web\x1ftier=batch", "team", "=x", "a=b=c", "a=1\x1fa=2", "", "k=\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		pairs := strings.Split(list, "\x1f")
		got, err := parseLabels(pairs)
		if err != nil {
			if got != nil || !strings.Contains(err.Error(), "label ") {
				t.Fatalf("parseLabels(%q): %v, %v", pairs, got, err)
			}
			return
		}
		if len(got) != len(pairs) {
			t.Fatalf("parseLabels(%q) = %v: %d labels from %d pairs", pairs, got, len(got), len(pairs))
		}
		for _, p := range pairs {
			k, v, _ := strings.Cut(p, "=")
			if got[k] != v {
				t.Fatalf("parseLabels(%q): %s=%q, want %q", pairs, k, got[k], v)
			}
		}
		var printed []string
		for _, k := range slices.Sorted(maps.Keys(got)) {
			printed = append(printed, k+"="+got[k])
		}
		again, err := parseLabels(printed)
		if err != nil || !maps.Equal(again, got) {
			t.Fatalf("parseLabels(%q) = %v, printed %q, parsed back to %v, %v", pairs, got, printed, again, err)
		}
	})
}
