package llm

import (
	"context"
	"encoding/json"
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
	assert.Equal(t, Response{Text: "LGTM", Usage: Usage{InputTokens: 1000, OutputTokens: 20}, Model: "scripted", StopReason: "stop", Stop: StopEnd}, r,
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
	assert.Equal(t, `scripted: no rule matches the prompt "`+strings.Repeat("é", 80)+`…" (turn 1); add one: `+
		`llm.ScriptRule{Match: "`+strings.Repeat("é", 24)+`…", Text: "..."} in Go (llm.NewScripted, testsuite Env.ScriptAgent), `+
		`or "- {match: "`+strings.Repeat("é", 24)+`…", text: ...}" in the rules file (flow-worker --provider-rules)`, err.Error())
	assert.Equal(t, 1, s.Calls(), "unmatched calls count too")
	assert.Equal(t, 0, s.RuleCalls(0))

	_, err = NewScripted().Complete(context.Background(), Request{Prompt: "short"})
	assert.ErrorContains(t, err, `scripted: no rule matches the prompt "short" (turn 1); add one: llm.ScriptRule{Match: "short", Text: "..."}`)
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

// runLoop drives a tool loop against p the way the agent loop will: call the model, run
// the tools it asks for (here: answer from results), send the results back, until it
// answers with text. It returns the responses of every turn.
func runLoop(t *testing.T, p Provider, results map[string]string) []Response {
	t.Helper()
	req := Request{Model: "scripted", System: "You triage incidents.", Prompt: "Triage db-1: disk alert",
		Tools: []Tool{{Name: "disk_usage"}, {Name: "restart"}}}
	var turns []Response
	for range 5 {
		resp, err := p.Complete(context.Background(), req)
		require.NoError(t, err, "turn %d", len(turns)+1)
		turns = append(turns, resp)
		if resp.Stop != StopToolUse {
			return turns
		}
		req.Messages = append(req.Messages, AssistantMessage(resp))
		for _, c := range resp.ToolCalls {
			req.Messages = append(req.Messages, ToolResult(c.ID, results[c.Name], false))
		}
	}
	t.Fatal("the loop did not end")
	return nil
}

func TestScriptedToolLoop(t *testing.T) {
	s := NewScripted(
		ScriptRule{Match: "Triage", Turn: 1, ToolCalls: []ToolCall{{Name: "disk_usage", Arguments: json.RawMessage(`{"host": "db-1"}`)}}},
		ScriptRule{Match: "Triage", AfterTool: "disk_usage", ResultMatch: "100%", Text: "Disk full, restarting.",
			ToolCalls: []ToolCall{{ID: "call_restart", Name: "restart", Arguments: json.RawMessage(`{"service":"db"}`)}}},
		ScriptRule{Match: "Triage", AfterTool: "restart", Text: "Disk was full; db restarted.", OutputTokens: 9},
	)
	turns := runLoop(t, s, map[string]string{"disk_usage": "/var 100%", "restart": "ok"})
	require.Len(t, turns, 3)

	assert.Equal(t, []ToolCall{{ID: "call_1_1", Name: "disk_usage", Arguments: json.RawMessage(`{"host":"db-1"}`)}}, turns[0].ToolCalls,
		"a generated ID, compacted arguments")
	assert.Equal(t, StopToolUse, turns[0].Stop)
	assert.Equal(t, "tool_calls", turns[0].StopReason)
	// input: "You triage incidents. Triage db-1: disk alert" = 7 words → 10; output: `disk_usage {"host":"db-1"}` = 2 → 3.
	assert.Equal(t, Usage{InputTokens: 10, OutputTokens: 3}, turns[0].Usage)

	assert.Equal(t, "Disk full, restarting.", turns[1].Text)
	assert.Equal(t, []ToolCall{{ID: "call_restart", Name: "restart", Arguments: json.RawMessage(`{"service":"db"}`)}}, turns[1].ToolCalls)

	assert.Equal(t, Response{Text: "Disk was full; db restarted.", Model: "scripted", Stop: StopEnd, StopReason: "stop",
		Usage: Usage{InputTokens: ScriptedTokens("You triage incidents. Triage db-1: disk alert  disk_usage {\"host\":\"db-1\"} /var 100% " +
			"Disk full, restarting. restart {\"service\":\"db\"} ok"), OutputTokens: 9}}, turns[2])
	assert.Equal(t, []int{1, 1, 1}, []int{s.RuleCalls(0), s.RuleCalls(1), s.RuleCalls(2)})

	// The same loop when the disk is fine: no rule answers turn 2, and the error says how to add one.
	_, err := s.Complete(context.Background(), Request{Model: "scripted", Prompt: "Triage db-1: disk alert",
		Tools: []Tool{{Name: "disk_usage"}}, Messages: []Message{AssistantMessage(turns[0]), ToolResult("call_1_1", "/var 20%", false)}})
	assert.EqualError(t, err, `scripted: no rule matches the prompt "Triage db-1: disk alert" (turn 2, after a result of tool "disk_usage"); `+
		`add one: llm.ScriptRule{Match: "Triage db-1: disk alert", Turn: 2, AfterTool: "disk_usage", Text: "..."} in Go `+
		`(llm.NewScripted, testsuite Env.ScriptAgent), or "- {match: "Triage db-1: disk alert", turn: 2, after_tool: "disk_usage", text: ...}" `+
		`in the rules file (flow-worker --provider-rules)`)
}

func TestScriptedToolCallErrors(t *testing.T) {
	s := NewScripted(
		ScriptRule{Match: "undeclared", ToolCalls: []ToolCall{{Name: "rm"}}},
		ScriptRule{Match: "bad args", ToolCalls: []ToolCall{{Name: "f", Arguments: json.RawMessage(`[1]`)}}},
	)
	_, err := s.Complete(context.Background(), Request{Prompt: "undeclared", Tools: []Tool{{Name: "f"}}})
	assert.EqualError(t, err, `scripted: rule 1: calls tool "rm", which the request does not declare (tools: f)`)
	_, err = s.Complete(context.Background(), Request{Prompt: "undeclared"})
	assert.ErrorContains(t, err, "(tools: none)")
	_, err = s.Complete(context.Background(), Request{Prompt: "bad args", Tools: []Tool{{Name: "f"}}})
	assert.EqualError(t, err, `scripted: rule 2: tool call 1 ("f"): arguments: not a JSON object`)
}

func TestScriptedMatchesAnyResultOfTheLastTurn(t *testing.T) {
	s := NewScripted(
		ScriptRule{Turn: 1, ToolCalls: []ToolCall{{Name: "a"}, {Name: "b"}}},
		ScriptRule{AfterTool: "a", ResultMatch: "from a", Text: "both seen"},
	)
	req := Request{Prompt: "p", Tools: []Tool{{Name: "a"}, {Name: "b"}}}
	first, err := s.Complete(context.Background(), req)
	require.NoError(t, err)
	require.Len(t, first.ToolCalls, 2)
	assert.Equal(t, []string{"call_1_1", "call_1_2"}, []string{first.ToolCalls[0].ID, first.ToolCalls[1].ID})
	req.Messages = []Message{AssistantMessage(first), ToolResult("call_1_1", "from a", false), ToolResult("call_1_2", "from b", false)}
	second, err := s.Complete(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "both seen", second.Text, "a's result is not the last one, but one of the last turn's")

	req.Messages = append(req.Messages, AssistantMessage(second), UserMessage("and now?"))
	_, err = s.Complete(context.Background(), req)
	assert.ErrorContains(t, err, "(turn 3); add one", "a user message after the results ends the match on them")
}
