package integration

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"

	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/internal/integration/testflows"
)

// llmFakes are local HTTP servers speaking the OpenAI Chat Completions and Anthropic
// Messages wire formats, with the requests they received.
type llmFakes struct {
	openai, anthropic *httptest.Server
	mu                sync.Mutex
	requests          []fakeRequest
	scripted          *llm.Scripted
}

type fakeRequest struct {
	Path   string
	Header http.Header
	Body   map[string]any
}

func startLLMFakes() *llmFakes {
	f := &llmFakes{}
	f.openai = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.keep(r)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-mini-2024-07-18",
			"choices":[{"index":0,"message":{"role":"assistant","content":"OpenAI says ship it."},"finish_reason":"stop"}],
			"usage":{"prompt_tokens":12345,"completion_tokens":567,"total_tokens":12912}}`)
	}))
	f.anthropic = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.keep(r)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-20250514",
			"content":[{"type":"text","text":"Claude says ship it."}],"stop_reason":"end_turn",
			"usage":{"input_tokens":2000,"output_tokens":400}}`)
	}))
	return f
}

func (f *llmFakes) keep(r *http.Request) {
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, fakeRequest{Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
}

func (f *llmFakes) received() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeRequest(nil), f.requests...)
}

func (f *llmFakes) providers() map[string]llm.Provider {
	// One scripted provider for every worker of the tests, so shared.llm.scripted.Calls()
	// counts the calls of the shared worker whichever tests started workers of their own.
	f.mu.Lock()
	if f.scripted == nil {
		rules := append(examples.ScriptedRules(), llm.ScriptRule{Match: "count tokens", Text: "ok", InputTokens: 500, OutputTokens: 100})
		rules = append(rules, testflows.BudgetRules()...)
		rules = append(rules, testflows.QualityRules()...)
		f.scripted = llm.NewScripted(rules...)
	}
	f.mu.Unlock()
	return map[string]llm.Provider{
		llm.ProviderOpenAI:    llm.NewOpenAI(llm.OpenAIConfig{BaseURL: f.openai.URL + "/v1", APIKey: "sk-test-openai"}),
		llm.ProviderAnthropic: llm.NewAnthropic(llm.AnthropicConfig{BaseURL: f.anthropic.URL, APIKey: "sk-test-anthropic"}),
		llm.ProviderScripted:  f.scripted,
	}
}

func (f *llmFakes) close() {
	f.openai.Close()
	f.anthropic.Close()
}
