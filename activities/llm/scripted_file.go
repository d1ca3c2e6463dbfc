package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/shopspring/decimal"
)

// LoadScriptRules reads a Scripted provider's rules from a YAML or JSON file (flow-worker
// --provider-rules), a list tried in order:
//
//	# rules.yaml
//	- match: "Summarise ticket"   # a substring of the prompt; absent or "" matches any prompt
//	  text: "Disk full on db-1."  # the answer; required unless tool_calls is given
//	  input_tokens: 1200          # the usage reported; absent or 0: counted from the texts
//	  output_tokens: 40
//	  cost_usd: "0.004"           # optional: the provider's own cost, instead of the prices'
//	# a tool loop: call disk_usage, then restart after its result, then answer
//	- match: "Triage"
//	  turn: 1                     # only the first model turn (2: after one answer, …)
//	  tool_calls:                 # the answer calls these tools, in order
//	    - name: disk_usage
//	      arguments: {host: db-1} # a mapping; absent: {}
//	- match: "Triage"
//	  after_tool: disk_usage      # only right after a result of this tool
//	  result_match: "100%"        # … that contains this text
//	  tool_calls: [{name: restart, arguments: {service: db}, id: call_restart}]
//	- match: "Triage"
//	  after_tool: restart
//	  text: "Disk was full; db restarted."
//
// ScriptRule documents what each field does. Errors name the file, the line and the rule:
// bad YAML, a rule that is not a mapping, an unknown or repeated field, neither text nor
// tool_calls, negative tokens, cost or turn, a tool call without a valid name or whose
// arguments are not a mapping.
func LoadScriptRules(path string) ([]ScriptRule, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scripted rules: %w", err)
	}
	return ParseScriptRules(path, data)
}

// ParseScriptRules parses the rules LoadScriptRules reads from file's data.
func ParseScriptRules(file string, data []byte) ([]ScriptRule, error) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		var ye yaml.Error
		if errors.As(err, &ye) && ye.GetToken() != nil {
			return nil, fmt.Errorf("%s:%d: invalid YAML or JSON: %s", file, ye.GetToken().Position.Line, ye.GetMessage())
		}
		return nil, fmt.Errorf("%s: invalid YAML or JSON: %w", file, err)
	}
	if len(f.Docs) != 1 || f.Docs[0].Body == nil {
		return nil, fmt.Errorf("%s: want one list of rules (- match: ..., text: ...), got %d documents", file, len(f.Docs))
	}
	seq, ok := unwrap(f.Docs[0].Body).(*ast.SequenceNode)
	if !ok {
		return nil, fmt.Errorf("%s:%d: want a list of rules (- match: ..., text: ...)", file, line(f.Docs[0].Body))
	}
	if len(seq.Values) == 0 {
		return nil, fmt.Errorf("%s:%d: the list of rules is empty", file, line(seq))
	}
	rules := make([]ScriptRule, 0, len(seq.Values))
	for i, n := range seq.Values {
		r, err := parseScriptRule(n)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: rule %d: %w", file, line(n), i+1, err)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

const ruleFields = "match, turn, after_tool, result_match, text, tool_calls, input_tokens, output_tokens, cost_usd"

func parseScriptRule(n ast.Node) (ScriptRule, error) {
	m, ok := unwrap(n).(*ast.MappingNode)
	if !ok {
		return ScriptRule{}, errors.New("want a mapping with " + ruleFields)
	}
	var r ScriptRule
	for _, mv := range m.Values {
		key := mappingKey(mv)
		var err error
		switch key {
		case "match":
			err = yaml.NodeToValue(mv.Value, &r.Match)
		case "turn":
			if err = yaml.NodeToValue(mv.Value, &r.Turn); err != nil || r.Turn < 0 {
				err = errors.New("want a turn number: 1 (the first model call) or more")
			}
		case "after_tool":
			err = yaml.NodeToValue(mv.Value, &r.AfterTool)
		case "result_match":
			err = yaml.NodeToValue(mv.Value, &r.ResultMatch)
		case "text":
			err = yaml.NodeToValue(mv.Value, &r.Text)
		case "tool_calls":
			r.ToolCalls, err = parseToolCalls(mv.Value)
		case "input_tokens":
			err = tokensField(mv.Value, &r.InputTokens)
		case "output_tokens":
			err = tokensField(mv.Value, &r.OutputTokens)
		case "cost_usd":
			r.CostUSD, err = costField(mv.Value)
		default:
			return r, fmt.Errorf("line %d: unknown field %q (want %s)", line(mv.Key), key, ruleFields)
		}
		if err != nil {
			return r, fmt.Errorf("line %d: %s: %v", line(mv.Value), key, firstLine(err))
		}
	}
	if r.Text == "" && len(r.ToolCalls) == 0 {
		return r, errors.New("text is missing or empty (the answer), and there are no tool_calls")
	}
	return r, nil
}

func mappingKey(mv *ast.MappingValueNode) string {
	return strings.Trim(strings.TrimSpace(mv.Key.String()), `"'`)
}

func costField(n ast.Node) (*decimal.Decimal, error) {
	var s string
	if err := yaml.NodeToValue(n, &s); err != nil {
		return nil, err
	}
	d, err := decimal.NewFromString(strings.TrimSpace(s))
	if err != nil {
		return nil, err
	}
	if d.IsNegative() {
		return nil, errors.New("is negative")
	}
	return &d, nil
}

// parseToolCalls reads a rule's tool_calls: a non-empty list of {name, arguments, id}.
func parseToolCalls(n ast.Node) ([]ToolCall, error) {
	seq, ok := unwrap(n).(*ast.SequenceNode)
	if !ok || len(seq.Values) == 0 {
		return nil, errors.New("want a list of calls: - name: tool, arguments: {…}")
	}
	calls := make([]ToolCall, 0, len(seq.Values))
	for i, v := range seq.Values {
		tc, err := parseToolCall(v)
		if err != nil {
			return nil, fmt.Errorf("call %d (line %d): %w", i+1, line(v), err)
		}
		calls = append(calls, tc)
	}
	return calls, nil
}

func parseToolCall(n ast.Node) (ToolCall, error) {
	m, ok := unwrap(n).(*ast.MappingNode)
	if !ok {
		return ToolCall{}, errors.New("want a mapping with name, arguments, id")
	}
	var tc ToolCall
	for _, mv := range m.Values {
		var err error
		switch key := mappingKey(mv); key {
		case "name":
			if err = yaml.NodeToValue(mv.Value, &tc.Name); err == nil {
				err = validToolName(tc.Name)
			}
		case "id":
			err = yaml.NodeToValue(mv.Value, &tc.ID)
		case "arguments":
			tc.Arguments, err = argumentsField(mv.Value)
		default:
			return tc, fmt.Errorf("unknown field %q (want name, arguments, id)", key)
		}
		if err != nil {
			return tc, fmt.Errorf("%s: %v", mappingKey(mv), firstLine(err))
		}
	}
	if tc.Name == "" {
		return tc, errors.New("name is missing (the tool to call)")
	}
	return tc, nil
}

// argumentsField reads a call's arguments: a mapping, sent as its JSON object.
func argumentsField(n ast.Node) (json.RawMessage, error) {
	if _, ok := unwrap(n).(*ast.MappingNode); !ok {
		return nil, errors.New("want a mapping of the tool's arguments")
	}
	var v map[string]any
	if err := yaml.NodeToValue(n, &v); err != nil {
		return nil, err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("not JSON-compatible: %w", err)
	}
	return DecodeArguments(data)
}

func tokensField(n ast.Node, out *int64) error {
	if err := yaml.NodeToValue(n, out); err != nil {
		return errors.New("want a whole number of tokens")
	}
	if *out < 0 {
		return fmt.Errorf("is %d; want 0 (counted from the text) or more", *out)
	}
	return nil
}

// unwrap skips comments, tags and anchors around a node.
func unwrap(n ast.Node) ast.Node {
	for {
		switch v := n.(type) {
		case *ast.CommentGroupNode:
			return n
		case *ast.TagNode:
			n = v.Value
		case *ast.AnchorNode:
			n = v.Value
		default:
			return n
		}
	}
}

func line(n ast.Node) int {
	if n == nil || n.GetToken() == nil {
		return 1
	}
	return n.GetToken().Position.Line
}

// firstLine is an error's first line: goccy/go-yaml appends the source around it.
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
