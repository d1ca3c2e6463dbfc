package llm

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/shopspring/decimal"
)

// ScriptRule is one canned answer of a Scripted provider.
type ScriptRule struct {
	// Match is a substring of the prompt this rule answers; "" matches any prompt.
	Match string
	// Text is the answer.
	Text string
	// InputTokens and OutputTokens are the usage reported; zero means computed from the
	// text: ScriptedTokens(system + " " + prompt) and ScriptedTokens(Text).
	InputTokens, OutputTokens int64
	// CostUSD, when set, is reported as the provider's own cost.
	CostUSD *decimal.Decimal
	// Err, when set, is returned instead of an answer (for example a *RateLimitError).
	Err error
}

// Scripted is a deterministic Provider for examples and tests: each call is answered by
// the first rule whose Match is in the prompt. It is safe for concurrent use.
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
// prompt's first 80 characters.
func (s *Scripted) Complete(ctx context.Context, req Request) (Response, error) {
	s.mu.Lock()
	s.calls++
	idx := -1
	for i, r := range s.rules {
		if strings.Contains(req.Prompt, r.Match) {
			idx = i
			s.per[i]++
			break
		}
	}
	s.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return Response{}, fmt.Errorf("%s: %w", ProviderScripted, err)
	}
	if idx < 0 {
		return Response{}, fmt.Errorf("%s: no rule matches the prompt %q", ProviderScripted, headRunes(req.Prompt, 80))
	}
	r := s.rules[idx]
	if r.Err != nil {
		return Response{}, r.Err
	}
	u := Usage{InputTokens: r.InputTokens, OutputTokens: r.OutputTokens}
	if u.InputTokens == 0 {
		u.InputTokens = ScriptedTokens(req.System + " " + req.Prompt)
	}
	if u.OutputTokens == 0 {
		u.OutputTokens = ScriptedTokens(r.Text)
	}
	res := Response{Text: r.Text, Usage: u, Model: req.Model, StopReason: "stop"}
	if r.CostUSD != nil {
		c := *r.CostUSD
		res.CostUSD = &c
	}
	return res, nil
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
