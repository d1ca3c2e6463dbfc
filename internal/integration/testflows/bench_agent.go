package testflows

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/flow"
)

// The benchmark's agent loop: a model (a local server speaking the OpenAI chat-completions
// wire format, BenchChatHandler) asked in turns, each turn calling one tool, until it
// answers; as a gateflow agent loop and as the same loop written by hand on the raw SDK
// (a turn activity and a tool activity).

// Bench agent names.
const (
	BenchFlowAgent = "bench.flow.agent"
	BenchRawAgent  = "bench.raw.agent"
	// BenchTurnActivity is the raw side's turn activity.
	BenchTurnActivity = "bench.turn"
	// BenchAgentModel is the model both sides ask.
	BenchAgentModel = "gpt-4o-mini"
)

// BenchAgentFlows are the gateflow half of the agent loop variant.
func BenchAgentFlows() []flow.Definition { return []flow.Definition{BenchAgent} }

// BenchHost is the benchmark tool's arguments.
type BenchHost struct {
	Host string `json:"host"`
}

// BenchLookup is the benchmark's tool: the address of a host.
func BenchLookup(_ context.Context, in BenchHost) (string, error) { return "10.0.0." + in.Host, nil }

// benchAgentPrompt asks for k lookups; BenchChatHandler reads k back from it.
func benchAgentPrompt(k int) string { return fmt.Sprintf("look up %d hosts", k) }

// BenchAgent runs an agent loop of in.Steps turns that each call BenchLookup once, and
// the answering turn.
var BenchAgent = flow.Define(BenchFlowAgent, func(ctx *flow.Context, in BenchInput) (string, error) {
	res, err := ctx.AgentLoop("agent", flow.AgentLoop{
		Agent:    activities.Agent{Prompt: benchAgentPrompt(in.Steps), Model: BenchAgentModel, MaxTokens: 256},
		Tools:    []flow.Tool{flow.ActivityTool("lookup", BenchLookup, flow.ToolDescription("the address of a host"))},
		MaxTurns: in.Steps + 1,
	})
	return res.Text, err
})

// benchLookupTool is BenchLookup as the raw side declares it to the model.
var benchLookupTool = llm.Tool{Name: "lookup", Description: "the address of a host",
	Parameters: json.RawMessage(`{"type":"object","properties":{"host":{"type":"string"}},"required":["host"],"additionalProperties":false}`)}

// RawTurns is the raw side's turn activity: one provider call of the conversation.
type RawTurns struct{ Provider llm.Provider }

// Turn asks the model once.
func (r RawTurns) Turn(ctx context.Context, msgs []llm.Message) (llm.Response, error) {
	return r.Provider.Complete(ctx, llm.Request{Model: BenchAgentModel, Messages: msgs,
		Tools: []llm.Tool{benchLookupTool}, MaxTokens: 256})
}

// RawAgent is BenchAgent written with the raw SDK: a turn activity, then one activity
// per tool call, their results sent back, until the model answers.
func RawAgent(ctx workflow.Context, in BenchInput) (string, error) {
	msgs := []llm.Message{llm.UserMessage(benchAgentPrompt(in.Steps))}
	for turn := 1; turn <= in.Steps+1; turn++ {
		var res llm.Response
		if err := workflow.ExecuteActivity(rawOptions(ctx, fmt.Sprintf("turn-%d", turn)), BenchTurnActivity, msgs).Get(ctx, &res); err != nil {
			return "", err
		}
		msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Text: res.Text, ToolCalls: res.ToolCalls})
		if len(res.ToolCalls) == 0 {
			return res.Text, nil
		}
		for i, tc := range res.ToolCalls {
			var args BenchHost
			if err := json.Unmarshal(tc.Arguments, &args); err != nil {
				msgs = append(msgs, llm.ToolResult(tc.ID, err.Error(), true))
				continue
			}
			var out string
			if err := workflow.ExecuteActivity(rawOptions(ctx, fmt.Sprintf("lookup-%d-%d", turn, i)), BenchLookup, args).Get(ctx, &out); err != nil {
				return "", err
			}
			b, _ := json.Marshal(out) // the result as JSON, as gateflow sends an activity tool's
			msgs = append(msgs, llm.ToolResult(tc.ID, string(b), false))
		}
	}
	return "", fmt.Errorf("no answer after %d turns", in.Steps+1)
}

// BenchChatHandler answers chat-completions requests for both sides: while the
// conversation has fewer assistant messages than the prompt's k, one lookup call; then
// the answer.
func BenchChatHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		k, turns := 0, 0
		if s, ok := req.Messages[0].Content.(string); ok {
			_, _ = fmt.Sscanf(s, "look up %d hosts", &k)
		}
		for _, m := range req.Messages {
			if m.Role == "assistant" {
				turns++
			}
		}
		msg := map[string]any{"role": "assistant", "content": fmt.Sprintf("%d hosts are up", k)}
		finish := "stop"
		if turns < k {
			msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"id": fmt.Sprintf("call_%d", turns+1), "type": "function",
				"function": map[string]any{"name": "lookup", "arguments": fmt.Sprintf(`{"host":"%d"}`, turns+1)}}}}
			finish = "tool_calls"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-bench", "object": "chat.completion", "model": BenchAgentModel,
			"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "message": msg}},
			"usage":   map[string]any{"prompt_tokens": 100 + 20*turns, "completion_tokens": 10, "total_tokens": 110 + 20*turns}})
	})
}

// BenchAgentProviders are a side's providers with the local provider at url (nil
// without one: the worker's default).
func BenchAgentProviders(url string) map[string]llm.Provider {
	if strings.TrimSpace(url) == "" {
		return nil
	}
	return map[string]llm.Provider{llm.ProviderOpenAI: llm.NewOpenAI(llm.OpenAIConfig{BaseURL: url, APIKey: "sk-bench"})}
}
