package llm

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/shopspring/decimal"
)

// ScriptRule is one canned answer of a Scripted provider. A rule answers a call when all
// of its conditions hold (Match, Turn, AfterTool, ResultMatch; an unset one always holds),
// so a tool loop can be scripted: "turn 1 calls tool A, after A's result call B, after B's
// result answer".
type ScriptRule struct {
	// Match is a substring of the prompt (or of a user message) this rule answers; ""
	// matches any prompt.
	Match string
	// Turn, when not zero, is the only model turn the rule answers: 1 is the first call
	// of a conversation, 2 the call after the model's first answer (one assistant message
	// in the request), and so on.
	Turn int
	// AfterTool, when set, makes the rule answer only right after a result of this tool:
	// one of the results that end the conversation (the previous turn's calls).
	AfterTool string
	// ResultMatch, when set, makes the rule answer only when one of the tool results that
	// end the conversation contains it.
	ResultMatch string
	// Text is the answer's text.
	Text string
	// ToolCalls are the tools the answer calls, in order (the response then stops with
	// StopToolUse). An empty ID is "call_<turn>_<n>" (n from 1); empty Arguments are {}.
	// Each tool must be one of the request's Tools.
	ToolCalls []ToolCall
	// InputTokens and OutputTokens are the usage reported; zero means computed from the
	// texts: ScriptedTokens of the system prompt and the conversation, and of the answer
	// (its text, tool names and arguments).
	InputTokens, OutputTokens int64
	// CostUSD, when set, is reported as the provider's own cost.
	CostUSD *decimal.Decimal
	// Err, when set, is returned instead of an answer (for example a *RateLimitError).
	Err error
}

// Scripted is a deterministic Provider for examples and tests: each call is answered by
// the first rule that matches it (see ScriptRule). It is safe for concurrent use.
type Scripted struct {
	rules []ScriptRule

	mu    sync.Mutex
	calls int
	per   []int
}

// NewScripted returns a Scripted provider trying rules in order.
func NewScripted(rules ...ScriptRule) *Scripted {
	return &Scripted{rules: append([]ScriptRule(nil), rules...), per: make([]int, len(rules))}
}

// Name returns ProviderScripted.
func (s *Scripted) Name() string { return ProviderScripted }

// Complete answers req from the first matching rule. No match is an error naming the
// prompt's first 80 characters, the turn, and how to add a rule.
func (s *Scripted) Complete(ctx context.Context, req Request) (Response, error) {
	st := scriptState(req)
	s.mu.Lock()
	s.calls++
	idx := -1
	for i, r := range s.rules {
		if r.matches(st) {
			idx = i
			s.per[i]++
			break
		}
	}
	s.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return Response{}, fmt.Errorf("%s: %w", ProviderScripted, err)
	}
	if err := req.Validate(); err != nil {
		return Response{}, fmt.Errorf("%s: %w", ProviderScripted, err)
	}
	if idx < 0 {
		return Response{}, st.noMatch()
	}
	r := s.rules[idx]
	if r.Err != nil {
		return Response{}, r.Err
	}
	calls, err := r.toolCalls(st.turn, req.Tools)
	if err != nil {
		return Response{}, fmt.Errorf("%s: rule %d: %w", ProviderScripted, idx+1, err)
	}
	u := Usage{InputTokens: r.InputTokens, OutputTokens: r.OutputTokens}
	if u.InputTokens == 0 {
		u.InputTokens = ScriptedTokens(req.System + " " + st.text)
	}
	if u.OutputTokens == 0 {
		u.OutputTokens = ScriptedTokens(r.Text + " " + callsText(calls))
	}
	res := Response{Text: r.Text, ToolCalls: calls, Usage: u, Model: req.Model, StopReason: "stop", Stop: StopEnd}
	if len(calls) > 0 {
		res.StopReason, res.Stop = "tool_calls", StopToolUse
	}
	if r.CostUSD != nil {
		c := *r.CostUSD
		res.CostUSD = &c
	}
	return res, nil
}

// scriptCall is what rules match a call on.
type scriptCall struct {
	prompt string   // the prompt, or the first user message
	user   []string // the prompt and the user messages
	turn   int      // 1 + the assistant messages
	// results are the tool results that end the conversation (those of the last
	// assistant message's calls), in order, and tools the tools they came from.
	tools, results []string
	text           string // every text of the conversation, for the token count
}

func scriptState(req Request) scriptCall {
	st := scriptCall{turn: 1}
	names := map[string]string{} // call ID → tool name
	var text []string
	for _, m := range req.Conversation() {
		text = append(text, m.Text)
		if m.Role != RoleTool {
			st.tools, st.results = nil, nil
		}
		switch m.Role {
		case RoleUser:
			st.user = append(st.user, m.Text)
		case RoleAssistant:
			st.turn++
			for _, tc := range m.ToolCalls {
				names[tc.ID] = tc.Name
				text = append(text, tc.Name, string(tc.Arguments))
			}
		case RoleTool:
			st.tools, st.results = append(st.tools, names[m.ToolCallID]), append(st.results, m.Text)
		}
	}
	if len(st.user) > 0 {
		st.prompt = st.user[0]
	}
	st.text = strings.Join(text, " ")
	return st
}

func (r ScriptRule) matches(st scriptCall) bool {
	if r.Turn != 0 && r.Turn != st.turn {
		return false
	}
	if r.AfterTool != "" && !slices.Contains(st.tools, r.AfterTool) {
		return false
	}
	if r.ResultMatch != "" && !slices.ContainsFunc(st.results, func(s string) bool { return strings.Contains(s, r.ResultMatch) }) {
		return false
	}
	if len(st.user) == 0 {
		return r.Match == ""
	}
	return slices.ContainsFunc(st.user, func(u string) bool { return strings.Contains(u, r.Match) })
}

// noMatch is the error of a call no rule answers: what was asked, and how to add a rule
// (in Go and in the rules file) that answers it.
func (st scriptCall) noMatch() error {
	where := fmt.Sprintf("turn %d", st.turn)
	match := strconv.Quote(strings.Join(strings.Fields(headRunes(st.prompt, 24)), " "))
	goRule, fileRule := "Match: "+match, "match: "+match
	if st.turn > 1 {
		goRule += fmt.Sprintf(", Turn: %d", st.turn)
		fileRule += fmt.Sprintf(", turn: %d", st.turn)
	}
	if n := len(st.tools); n > 0 {
		last := st.tools[n-1]
		where += fmt.Sprintf(", after a result of tool %q", last)
		goRule += fmt.Sprintf(", AfterTool: %q", last)
		fileRule += fmt.Sprintf(", after_tool: %q", last)
	}
	return fmt.Errorf("%s: no rule matches the prompt %q (%s); add one: llm.ScriptRule{%s, Text: \"...\"} in Go "+
		"(llm.NewScripted, testsuite Env.ScriptAgent), or \"- {%s, text: ...}\" in the rules file (flow-worker --provider-rules)",
		ProviderScripted, headRunes(st.prompt, 80), where, goRule, fileRule)
}

// toolCalls is the rule's tool calls for a turn: IDs filled in, arguments checked and
// compacted, every tool one the request declares.
func (r ScriptRule) toolCalls(turn int, tools []Tool) ([]ToolCall, error) {
	var out []ToolCall
	for i, tc := range r.ToolCalls {
		if !slices.ContainsFunc(tools, func(t Tool) bool { return t.Name == tc.Name }) {
			return nil, fmt.Errorf("calls tool %q, which the request does not declare (tools: %s)", tc.Name, toolNames(tools))
		}
		args, err := DecodeArguments(tc.Arguments)
		if err != nil {
			return nil, fmt.Errorf("tool call %d (%q): arguments: %w", i+1, tc.Name, err)
		}
		if tc.ID == "" {
			tc.ID = fmt.Sprintf("call_%d_%d", turn, i+1)
		}
		out = append(out, ToolCall{ID: tc.ID, Name: tc.Name, Arguments: args})
	}
	return out, nil
}

func toolNames(tools []Tool) string {
	if len(tools) == 0 {
		return "none"
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

func callsText(calls []ToolCall) string {
	var b strings.Builder
	for _, c := range calls {
		b.WriteString(c.Name + " " + string(c.Arguments) + " ")
	}
	return b.String()
}

// Calls returns how many calls the provider received, matched or not.
func (s *Scripted) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// RuleCalls returns how many calls rule i (in NewScripted order) answered.
func (s *Scripted) RuleCalls(i int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i < 0 || i >= len(s.per) {
		return 0
	}
	return s.per[i]
}

// ScriptedTokens is the Scripted provider's deterministic token count for a text:
// ceil(words × 4 / 3), where words are separated by white space.
func ScriptedTokens(text string) int64 {
	words := int64(len(strings.Fields(text)))
	return (words*4 + 2) / 3
}

// headRunes returns the first n runes of s, with "…" when it was longer.
func headRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos] + "…"
		}
		i++
	}
	return s
}
