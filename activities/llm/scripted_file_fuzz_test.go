package llm

import (
	"strings"
	"testing"
)

// FuzzParseScriptRules: a rules file from outside (flow-worker --provider-rules) never
// panics; a refusal names the file, and what parses is a usable rule list.
func FuzzParseScriptRules(f *testing.F) {
	for _, seed := range []string{
		"- match: Price this call\n  text: priced answer\n  input_tokens: 2000\n  output_tokens: 100\n",
		`[{"match": "disk", "text": "Disk full.", "cost_usd": "0.004"}]`,
		"- text: any prompt\n",
		"- match: x\n  tokens: 3\n",
		"- match: x\n  text: y\n  input_tokens: -1\n",
		"{}", "[]", "", "- [1, 2]\n", "--- \n- text: a\n---\n- text: b\n", "- text: &a x\n  match: *a\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rules, err := ParseScriptRules("rules.yaml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "rules.yaml") {
				t.Fatalf("the error does not name the file: %v", err)
			}
			return
		}
		if len(rules) == 0 {
			t.Fatal("no error and no rules")
		}
		for i, r := range rules {
			if r.Text == "" {
				t.Fatalf("rule %d has no text: %+v", i+1, r)
			}
			if r.InputTokens < 0 || r.OutputTokens < 0 || (r.CostUSD != nil && r.CostUSD.IsNegative()) {
				t.Fatalf("rule %d has a negative figure: %+v", i+1, r)
			}
		}
	})
}
