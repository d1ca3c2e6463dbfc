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
		{name: "tool calls without text", src: "- turn: 2\n  after_tool: a\n  result_match: ok\n  tool_calls: [{name: b, arguments: {x: [1, \"y\"]}, id: c7}, {name: a}]\n",
			want: []ScriptRule{{Turn: 2, AfterTool: "a", ResultMatch: "ok", ToolCalls: []ToolCall{
				{ID: "c7", Name: "b", Arguments: []byte(`{"x":[1,"y"]}`)}, {Name: "a"}}}}},
		{name: "neither text nor tool calls", src: "- turn: 1\n", wantErr: "rule 1: text is missing or empty (the answer), and there are no tool_calls"},
		{name: "negative turn", src: "- text: a\n  turn: -1\n", wantErr: "rule 1: line 2: turn: want a turn number"},
		{name: "tool calls not a list", src: "- tool_calls: a\n", wantErr: "rule 1: line 1: tool_calls: want a list of calls"},
		{name: "empty tool calls", src: "- tool_calls: []\n", wantErr: "tool_calls: want a list of calls"},
		{name: "tool call not a mapping", src: "- tool_calls: [a]\n", wantErr: "tool_calls: call 1 (line 1): want a mapping"},
		{name: "tool call without name", src: "- tool_calls: [{id: x}]\n", wantErr: "call 1 (line 1): name is missing"},
		{name: "bad tool name", src: "- tool_calls: [{name: \"a b\"}]\n", wantErr: `call 1 (line 1): name: tool name "a b"`},
		{name: "unknown tool call field", src: "- tool_calls: [{name: a, args: {}}]\n", wantErr: `unknown field "args" (want name, arguments, id)`},
		{name: "arguments not a mapping", src: "- tool_calls: [{name: a, arguments: [1]}]\n", wantErr: "arguments: want a mapping"},
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
			assertRules(t, tt.want, got)
		})
	}
}

// assertRules compares rules field by field (costs as decimals, arguments as text).
func assertRules(t *testing.T, want, got []ScriptRule) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		w, g := want[i], got[i]
		assert.Equal(t, w.Match, g.Match)
		assert.Equal(t, w.Text, g.Text)
		assert.Equal(t, w.InputTokens, g.InputTokens)
		assert.Equal(t, w.OutputTokens, g.OutputTokens)
		assert.Equal(t, w.Turn, g.Turn)
		assert.Equal(t, w.AfterTool, g.AfterTool)
		assert.Equal(t, w.ResultMatch, g.ResultMatch)
		assert.Equal(t, len(w.ToolCalls), len(g.ToolCalls))
		for j := range min(len(w.ToolCalls), len(g.ToolCalls)) {
			assert.Equal(t, w.ToolCalls[j].ID, g.ToolCalls[j].ID)
			assert.Equal(t, w.ToolCalls[j].Name, g.ToolCalls[j].Name)
			assert.Equal(t, string(w.ToolCalls[j].Arguments), string(g.ToolCalls[j].Arguments))
		}
		if w.CostUSD == nil {
			assert.Nil(t, g.CostUSD)
		} else if assert.NotNil(t, g.CostUSD) {
			assert.True(t, w.CostUSD.Equal(*g.CostUSD), "cost %s", g.CostUSD)
		}
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

// TestScriptRulesFileToolLoop runs the tool loop of LoadScriptRules's documentation.
func TestScriptRulesFileToolLoop(t *testing.T) {
	src := `
- match: "Triage"
  turn: 1
  tool_calls:
    - name: disk_usage
      arguments: {host: db-1}
- match: "Triage"
  after_tool: disk_usage
  result_match: "100%"
  tool_calls: [{name: restart, arguments: {service: db}, id: call_restart}]
- match: "Triage"
  after_tool: restart
  text: "Disk was full; db restarted."
`
	rules, err := ParseScriptRules("rules.yaml", []byte(src))
	require.NoError(t, err)
	turns := runLoop(t, NewScripted(rules...), map[string]string{"disk_usage": "/var 100%", "restart": "ok"})
	require.Len(t, turns, 3)
	assert.Equal(t, `{"host":"db-1"}`, string(turns[0].ToolCalls[0].Arguments))
	assert.Equal(t, "call_restart", turns[1].ToolCalls[0].ID)
	assert.Equal(t, "Disk was full; db restarted.", turns[2].Text)
}
