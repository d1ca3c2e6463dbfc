package llm

import (
	"bytes"
	"encoding/json"
	"reflect"
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
		"- turn: 1\n  tool_calls: [{name: disk_usage, arguments: {host: db-1}}]\n- after_tool: disk_usage\n  result_match: \"100%\"\n  text: done\n",
		"- tool_calls: [{name: a, arguments: {x: [1, {y: null}]}, id: c1}]\n", "- tool_calls: [{name: \"a b\"}]\n",
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
			if r.Text == "" && len(r.ToolCalls) == 0 {
				t.Fatalf("rule %d has no text and no tool calls: %+v", i+1, r)
			}
			for _, c := range r.ToolCalls {
				if validToolName(c.Name) != nil {
					t.Fatalf("rule %d calls an invalid tool name %q", i+1, c.Name)
				}
				if a, err := DecodeArguments(c.Arguments); err != nil || string(a) != string(argumentsOrEmpty(c.Arguments)) {
					t.Fatalf("rule %d: arguments %q are not one compact JSON object (%v)", i+1, c.Arguments, err)
				}
			}
			if r.InputTokens < 0 || r.OutputTokens < 0 || r.Turn < 0 || (r.CostUSD != nil && r.CostUSD.IsNegative()) {
				t.Fatalf("rule %d has a negative figure: %+v", i+1, r)
			}
		}
	})
}

// FuzzDecodeArguments: whatever a model sends as tool-call arguments, DecodeArguments never
// panics, and what it accepts is one compact JSON object, without a key twice in any
// object, that decodes to the same value.
func FuzzDecodeArguments(f *testing.F) {
	for _, seed := range []string{``, `{}`, ` {"a": 1} `, `{"a":[1,{"b":null}],"c":"\u00e9"}`, `[]`, `"x"`, `{"a":1}{}`,
		`{"a":1} x`, `{"a":`, `{"a":1,"a":2}`, `{"n": 1e400}`, "{\"s\": \"\xff\"}"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := DecodeArguments(data)
		if err != nil {
			return
		}
		var before, after any
		if len(bytes.TrimSpace(data)) > 0 {
			if decodeNumbers(data, &before) != nil {
				t.Fatalf("accepted %q, which is not JSON", data)
			}
		}
		if err := decodeNumbers(out, &after); err != nil {
			t.Fatalf("output %q is not JSON: %v", out, err)
		}
		if _, ok := after.(map[string]any); !ok {
			t.Fatalf("output %q is not an object", out)
		}
		var compact bytes.Buffer
		if json.Compact(&compact, out) != nil || compact.String() != string(out) {
			t.Fatalf("output %q is not compact", out)
		}
		if before != nil && !reflect.DeepEqual(before, after) {
			t.Fatalf("%q decodes to %v, its output to %v", data, before, after)
		}
	})
}

// decodeNumbers decodes JSON keeping numbers as written (1e400 is JSON, not a float64).
func decodeNumbers(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}
