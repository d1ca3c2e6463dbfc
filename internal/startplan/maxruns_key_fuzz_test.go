package startplan

import (
	"encoding/json"
	"testing"
)

// FuzzRunsKey feeds concurrency key templates (from definitions and the catalog) and
// start inputs (from any client) to the key parser and renderer: no panic, and a rendered
// key is never empty and never longer than MaxRunsKeyMax.
func FuzzRunsKey(f *testing.F) {
	f.Add("repo-{repo}", `{"repo": "web"}`)
	f.Add("{org}/{repo}", `{"org": "acme", "repo": 3}`)
	f.Add("{a.b}", `{"a": {"b": true}}`)
	f.Add("{x}", `{"x": null}`)
	f.Add("}{", `[]`)
	f.Fuzz(func(t *testing.T, tpl, input string) {
		if _, err := parseRunsKey(tpl); err != nil {
			return
		}
		key, err := RenderRunsKey(tpl, json.RawMessage(input))
		if err != nil {
			return
		}
		if key == "" || len(key) > MaxRunsKeyMax {
			t.Fatalf("rendered key %q (template %q, input %q)", key, tpl, input)
		}
	})
}
