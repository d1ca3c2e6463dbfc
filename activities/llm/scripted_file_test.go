package llm

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseScriptRules(t *testing.T) {
	cost := decimal.RequireFromString("0.004")
	tests := []struct {
		name    string
		src     string
		want    []ScriptRule
		wantErr string
	}{
		{name: "yaml", src: `
# rules of the triage flow
- match: "Summarise ticket"
  text: Disk full on db-1.
  input_tokens: 1200
  output_tokens: 40
- text: "{\"ok\": true}"
  cost_usd: "0.004"
`, want: []ScriptRule{
			{Match: "Summarise ticket", Text: "Disk full on db-1.", InputTokens: 1200, OutputTokens: 40},
			{Text: `{"ok": true}`, CostUSD: &cost},
		}},
		{name: "json", src: `[{"match": "Review", "text": "LGTM", "output_tokens": 3, "cost_usd": 0.004}]`,
			want: []ScriptRule{{Match: "Review", Text: "LGTM", OutputTokens: 3, CostUSD: &cost}}},
		{name: "not a list", src: "match: x\ntext: y\n", wantErr: "rules.yaml:1: want a list of rules"},
		{name: "empty list", src: "[]", wantErr: "rules.yaml:1: the list of rules is empty"},
		{name: "empty file", src: "", wantErr: "rules.yaml: want one list of rules"},
		{name: "bad yaml", src: "- match: [x\n", wantErr: "rules.yaml:1: invalid YAML or JSON"},
		{name: "rule not a mapping", src: "- just text\n", wantErr: "rules.yaml:1: rule 1: want a mapping"},
		{name: "unknown field", src: "- text: a\n- text: b\n  tokens: 3\n", wantErr: `rules.yaml:2: rule 2: line 3: unknown field "tokens"`},
		{name: "repeated field", src: "- text: a\n  text: b\n", wantErr: `rules.yaml:2: invalid YAML or JSON: mapping key "text" already defined`},
		{name: "missing text", src: "- match: a\n", wantErr: "rules.yaml:1: rule 1: text is missing"},
		{name: "empty text", src: "- text:\n", wantErr: "rules.yaml:1: rule 1: text is missing or empty"}, // make fuzz found it
		{name: "negative tokens", src: "- text: a\n  input_tokens: -1\n", wantErr: "rule 1: line 2: input_tokens: is -1; want 0"},
		{name: "tokens not a number", src: "- text: a\n  output_tokens: many\n", wantErr: "rule 1: line 2: output_tokens: want a whole number"},
		{name: "bad cost", src: "- text: a\n  cost_usd: cheap\n", wantErr: "rule 1: line 2: cost_usd:"},
		{name: "negative cost", src: "- text: a\n  cost_usd: \"-1\"\n", wantErr: "rule 1: line 2: cost_usd: is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseScriptRules("rules.yaml", []byte(tt.src))
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Len(t, got, len(tt.want))
			for i := range tt.want {
				w, g := tt.want[i], got[i]
				assert.Equal(t, w.Match, g.Match)
				assert.Equal(t, w.Text, g.Text)
				assert.Equal(t, w.InputTokens, g.InputTokens)
				assert.Equal(t, w.OutputTokens, g.OutputTokens)
				if w.CostUSD == nil {
					assert.Nil(t, g.CostUSD)
				} else if assert.NotNil(t, g.CostUSD) {
					assert.True(t, w.CostUSD.Equal(*g.CostUSD), "cost %s", g.CostUSD)
				}
			}
		})
	}
}

func TestLoadScriptRules(t *testing.T) {
	p := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(p, []byte("- match: hi\n  text: hello\n"), 0o600))
	rules, err := LoadScriptRules(p)
	require.NoError(t, err)
	require.Len(t, rules, 1)
	assert.Equal(t, "hello", rules[0].Text)

	_, err = LoadScriptRules(filepath.Join(t.TempDir(), "missing.yaml"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "missing.yaml")
}
