package llm

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestScriptedRulesInOrder(t *testing.T) {
	cost := decimal.RequireFromString("0.0123")
	limited := &RateLimitError{Provider: "scripted", RetryAfter: time.Second}
	s := NewScripted(
		ScriptRule{Match: "review", Text: "LGTM", InputTokens: 1000, OutputTokens: 20},
		ScriptRule{Match: "priced", Text: "ok", CostUSD: &cost},
		ScriptRule{Match: "busy", Err: limited},
		ScriptRule{Match: "", Text: "one two three four five"},
	)
	require.Equal(t, ProviderScripted, s.Name())
	ctx := context.Background()

	r, err := s.Complete(ctx, Request{Model: "scripted", Prompt: "please review this and be priced"})
	require.NoError(t, err)
	assert.Equal(t, Response{Text: "LGTM", Usage: Usage{InputTokens: 1000, OutputTokens: 20}, Model: "scripted", StopReason: "stop"}, r,
		"the first matching rule wins")

	r, err = s.Complete(ctx, Request{Model: "scripted", Prompt: "priced call"})
	require.NoError(t, err)
	require.NotNil(t, r.CostUSD)
	assert.Equal(t, "0.0123", r.CostUSD.String())
	*r.CostUSD = decimal.Zero
	r, _ = s.Complete(ctx, Request{Model: "scripted", Prompt: "priced call"})
	assert.Equal(t, "0.0123", r.CostUSD.String(), "callers get a copy of the rule's cost")

	_, err = s.Complete(ctx, Request{Model: "scripted", Prompt: "busy now"})
	assert.Same(t, limited, err)

	// Computed usage: input = ceil(words(system + prompt) × 4/3), output = ceil(words(text) × 4/3).
	r, err = s.Complete(ctx, Request{Model: "scripted-x", System: "be nice", Prompt: "anything else here"})
	require.NoError(t, err)
	assert.Equal(t, Usage{InputTokens: 7, OutputTokens: 7}, r.Usage) // 5 words → 7, 5 words → 7
	assert.Equal(t, "scripted-x", r.Model)

	assert.Equal(t, 5, s.Calls())
	assert.Equal(t, []int{1, 2, 1, 1}, []int{s.RuleCalls(0), s.RuleCalls(1), s.RuleCalls(2), s.RuleCalls(3)})
	assert.Equal(t, 0, s.RuleCalls(4))
	assert.Equal(t, 0, s.RuleCalls(-1))
}

func TestScriptedIsDeterministic(t *testing.T) {
	s := NewScripted(ScriptRule{Match: "x", Text: "the same answer every time"})
	req := Request{Model: "scripted", System: "sys", Prompt: "x marks the spot"}
	first, err := s.Complete(context.Background(), req)
	require.NoError(t, err)
	for range 5 {
		again, err := s.Complete(context.Background(), req)
		require.NoError(t, err)
		assert.Equal(t, first, again)
	}
	assert.Equal(t, 6, s.Calls())
}

func TestScriptedNoMatch(t *testing.T) {
	s := NewScripted(ScriptRule{Match: "deploy", Text: "ok"})
	prompt := strings.Repeat("é", 100)
	_, err := s.Complete(context.Background(), Request{Model: "scripted", Prompt: prompt})
	require.Error(t, err)
	assert.Equal(t, `scripted: no rule matches the prompt "`+strings.Repeat("é", 80)+`…"`, err.Error())
	assert.Equal(t, 1, s.Calls(), "unmatched calls count too")
	assert.Equal(t, 0, s.RuleCalls(0))

	_, err = NewScripted().Complete(context.Background(), Request{Prompt: "short"})
	assert.EqualError(t, err, `scripted: no rule matches the prompt "short"`)
}

func TestScriptedCancelled(t *testing.T) {
	s := NewScripted(ScriptRule{Text: "ok"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Complete(ctx, Request{Prompt: "p"})
	assert.True(t, errors.Is(err, context.Canceled))
}

func TestScriptedConcurrentCalls(t *testing.T) {
	s := NewScripted(ScriptRule{Match: "a", Text: "A"}, ScriptRule{Text: "B"})
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := "b"
			if i%2 == 0 {
				p = "a"
			}
			_, _ = s.Complete(context.Background(), Request{Prompt: p})
		}()
	}
	wg.Wait()
	assert.Equal(t, 50, s.Calls())
	assert.Equal(t, 25, s.RuleCalls(0))
	assert.Equal(t, 25, s.RuleCalls(1))
}

func TestScriptedTokens(t *testing.T) {
	for text, want := range map[string]int64{"": 0, "one": 2, "one two": 3, "a b c": 4, "  a\tb\nc  ": 4, "a b c d e f": 8} {
		assert.Equal(t, want, ScriptedTokens(text), "%q", text)
	}
}
