package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/runs"
	"github.com/gateflow/gateflow/testsuite"
)

// loopHostArgs are the arguments of the loop's lookup tool.
type loopHostArgs struct {
	Host string `json:"host"`
}

// LoopLookup is an activity tool of the agent loop test.
func LoopLookup(_ context.Context, in loopHostArgs) (string, error) { return "10.0.0." + in.Host, nil }

// LoopUptime is an activity tool without arguments.
func LoopUptime(_ context.Context) (int, error) { return 42, nil }

// loopTurn is one canned chat-completions answer: tool calls (name, arguments) or text.
type loopTurn struct {
	calls   [][2]string
	text    string
	in, out int64
}

// loopProvider is a local server speaking the OpenAI chat-completions wire format with
// tool_calls; it answers its n-th request with turns[n] and keeps the request bodies.
type loopProvider struct {
	*httptest.Server
	mu     sync.Mutex
	turns  []loopTurn
	bodies []string
}

func startLoopProvider(t *testing.T, turns []loopTurn) *loopProvider {
	p := &loopProvider{turns: turns}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		n := len(p.bodies)
		p.bodies = append(p.bodies, string(body))
		p.mu.Unlock()
		if n >= len(p.turns) {
			http.Error(w, `{"error":{"message":"no more turns"}}`, http.StatusBadRequest)
			return
		}
		_, _ = w.Write(p.turns[n].wire(n))
	}))
	t.Cleanup(p.Close)
	return p
}

func (lt loopTurn) wire(n int) []byte {
	msg := map[string]any{"role": "assistant", "content": lt.text}
	finish := "stop"
	if len(lt.calls) > 0 {
		var calls []map[string]any
		for i, c := range lt.calls {
			calls = append(calls, map[string]any{"id": fmt.Sprintf("call_%d_%d", n+1, i+1), "type": "function",
				"function": map[string]any{"name": c[0], "arguments": c[1]}})
		}
		var content any // null, or the text beside the calls (the model's reason)
		if lt.text != "" {
			content = lt.text
		}
		msg = map[string]any{"role": "assistant", "content": content, "tool_calls": calls}
		finish = "tool_calls"
	}
	b, _ := json.Marshal(map[string]any{"id": fmt.Sprint("chatcmpl-", n), "object": "chat.completion", "model": "gpt-4o-mini",
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "message": msg}},
		"usage":   map[string]any{"prompt_tokens": lt.in, "completion_tokens": lt.out, "total_tokens": lt.in + lt.out}})
	return b
}

func (p *loopProvider) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.bodies...)
}

var agentLoopFlow = flow.Define("test.agent.loop", func(ctx *flow.Context, prompt string) (string, error) {
	res, err := ctx.AgentLoop("triage", flow.AgentLoop{
		Agent: activities.Agent{Prompt: prompt, Model: "gpt-4o-mini", MaxBudgetUSD: decimal.RequireFromString("1")},
		Tools: []flow.Tool{
			flow.ActivityTool("lookup", LoopLookup, flow.ToolDescription("the address of a host")),
			flow.ActivityTool("uptime", LoopUptime, flow.ToolDescription("the uptime in days")),
		},
	})
	return res.Text, err
})

// A 4-turn loop over two activity tools on the real server: one gateflow.agent.turn
// activity per turn, one step per tool call, the run's cost the sum of the turns.
func TestAgentLoopFourTurnsWithActivityTools(t *testing.T) {
	turns := []loopTurn{
		{calls: [][2]string{{"lookup", `{"host":"1"}`}, {"lookup", `{"host":"2"}`}}, in: 1000, out: 40},
		{calls: [][2]string{{"uptime", `{}`}}, in: 1200, out: 20},
		{calls: [][2]string{{"lookup", `{"host":"3"}`}}, in: 1300, out: 20},
		{text: "hosts 1-3 are up", in: 1400, out: 30},
	}
	srv := startLoopProvider(t, turns)
	queue := uniqueQueue("agent-loop")
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, StopTimeout: time.Second,
		Providers: map[string]llm.Provider{llm.ProviderOpenAI: llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: "sk-test"})}},
		agentLoopFlow)
	w.RegisterActivity(LoopLookup, "")
	w.RegisterActivity(LoopUptime, "")
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})
	ctx := ctxT(t, 2*time.Minute)

	run, err := c.Start(ctx, agentLoopFlow.Name(), "are hosts 1-3 up?", core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)

	reqs := srv.requests()
	assert.Len(t, reqs, 4, "the provider is called once per turn")
	_, scheduled, _ := historyCount(t, ctx, run.ID, activities.AgentTurnActivity)
	assert.Equal(t, 4, scheduled, "one gateflow.agent.turn activity per turn")
	_, single, _ := historyCount(t, ctx, run.ID, activities.AgentActivity)
	assert.Zero(t, single)

	var ids []string
	for _, s := range d.State.Steps {
		ids = append(ids, s.ActivityID)
	}
	assert.Equal(t, []string{"triage", "triage/turn-1", "triage/lookup", "triage/lookup#2", "triage/turn-2",
		"triage/uptime", "triage/turn-3", "triage/lookup#3", "triage/turn-4"}, ids)

	want := decimal.Zero
	for _, tr := range turns {
		want = want.Add(priced(t, tr.in, tr.out))
	}
	assert.Equal(t, want.StringFixed(2), d.State.CostUSD.StringFixed(2), "the run's cost is the sum of the turns, to the cent")
	assert.True(t, want.Equal(d.State.CostUSD), "exactly: want %s, got %s", want, d.State.CostUSD)
	assert.True(t, want.Equal(d.State.Steps[0].CostUSD), "the agent step sums its turns: %s", d.State.Steps[0].CostUSD)
	assert.Equal(t, runs.Tokens{Input: 4900, Output: 110}, d.State.Tokens)

	// The second turn sends both results back, in the order of the calls.
	var second struct {
		Messages []struct {
			Role       string `json:"role"`
			Content    any    `json:"content"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
		Tools []any `json:"tools"`
	}
	require.NoError(t, json.Unmarshal([]byte(reqs[1]), &second))
	assert.Len(t, second.Tools, 2)
	var results []string
	for _, m := range second.Messages {
		if m.Role == "tool" {
			results = append(results, fmt.Sprintf("%s=%v", m.ToolCallID, m.Content))
		}
	}
	assert.Equal(t, []string{`call_1_1="10.0.0.1"`, `call_1_2="10.0.0.2"`}, results)

	// The loop is deterministic workflow code: its history replays (a worker that takes
	// it over mid-loop goes on at the next turn, without calling the provider again).
	file := filepath.Join(t.TempDir(), "history.json")
	require.NoError(t, testsuite.RecordHistory(ctx, shared.tc, run.ID, file))
	assert.NoError(t, testsuite.Replay(file, flow.WorkerOptions{}, agentLoopFlow))
	assert.Len(t, srv.requests(), 4, "replaying calls no provider")
}
