package llm

import (
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
//	  text: "Disk full on db-1."  # the answer; required
//	  input_tokens: 1200          # the usage reported; absent or 0: counted from the texts
//	  output_tokens: 40
//	  cost_usd: "0.004"           # optional: the provider's own cost, instead of the prices'
//
// Errors name the file, the line and the rule: bad YAML, a rule that is not a mapping, an
// unknown or repeated field, a missing text, negative tokens or cost.
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

func parseScriptRule(n ast.Node) (ScriptRule, error) {
	m, ok := unwrap(n).(*ast.MappingNode)
	if !ok {
		return ScriptRule{}, errors.New("want a mapping with match, text, input_tokens, output_tokens, cost_usd")
	}
	var r ScriptRule
	hasText := false
	for _, mv := range m.Values {
		key := strings.TrimSpace(mv.Key.String())
		key = strings.Trim(key, `"'`)
		var err error
		switch key {
		case "match":
			err = yaml.NodeToValue(mv.Value, &r.Match)
		case "text":
			err = yaml.NodeToValue(mv.Value, &r.Text)
			hasText = true
		case "input_tokens":
			err = tokensField(mv.Value, &r.InputTokens)
		case "output_tokens":
			err = tokensField(mv.Value, &r.OutputTokens)
		case "cost_usd":
			var s string
			if err = yaml.NodeToValue(mv.Value, &s); err == nil {
				var d decimal.Decimal
				if d, err = decimal.NewFromString(strings.TrimSpace(s)); err == nil && d.IsNegative() {
					err = errors.New("is negative")
				}
				r.CostUSD = &d
			}
		default:
			return r, fmt.Errorf("line %d: unknown field %q (want match, text, input_tokens, output_tokens, cost_usd)", line(mv.Key), key)
		}
		if err != nil {
			return r, fmt.Errorf("line %d: %s: %v", line(mv.Value), key, firstLine(err))
		}
	}
	if !hasText || r.Text == "" {
		return r, errors.New("text is missing or empty (the answer)")
	}
	return r, nil
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
