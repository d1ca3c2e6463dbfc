package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"
	"github.com/shopspring/decimal"
)

// DefaultOpenAIBaseURL is the OpenAI API's base URL.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

// OpenAIConfig configures an OpenAI-compatible provider.
type OpenAIConfig struct {
	// BaseURL is the API root; "/chat/completions" is appended. Empty means
	// DefaultOpenAIBaseURL. Any compatible server works (OpenRouter, vLLM, Ollama, …).
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>"; empty sends no header.
	APIKey string
	// HTTPClient makes the requests; nil means http.DefaultClient. Bound the call with the
	// context (the activity's), not with a client timeout.
	HTTPClient *http.Client
}

// OpenAI is a Provider speaking the OpenAI Chat Completions API.
type OpenAI struct {
	cfg OpenAIConfig
}

// NewOpenAI returns an OpenAI-compatible provider.
func NewOpenAI(cfg OpenAIConfig) *OpenAI {
	cfg.BaseURL = baseURL(cfg.BaseURL, DefaultOpenAIBaseURL)
	return &OpenAI{cfg: cfg}
}

// OpenAIFromEnv returns an OpenAI-compatible provider configured from OPENAI_BASE_URL
// (optional) and OPENAI_API_KEY (required unless the base URL is on this machine).
func OpenAIFromEnv() (*OpenAI, error) {
	base := strings.TrimSpace(os.Getenv("OPENAI_BASE_URL"))
	key, err := envKey("OPENAI_API_KEY", "OPENAI_BASE_URL", base)
	if err != nil {
		return nil, err
	}
	return NewOpenAI(OpenAIConfig{BaseURL: base, APIKey: key}), nil
}

// Name returns ProviderOpenAI.
func (p *OpenAI) Name() string { return ProviderOpenAI }

// BaseURL returns the API root requests go to.
func (p *OpenAI) BaseURL() string { return p.cfg.BaseURL }

// chat returns the SDK's Chat Completions service for this provider: no retries
// (gateflow's activity retries own them), no settings read from the environment (the
// config says everything), and wireCheck turning HTTP answers into gateflow's errors.
func (p *OpenAI) chat() openai.ChatCompletionService {
	client := p.cfg.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	check := wireCheck{provider: ProviderOpenAI, apiKey: p.cfg.APIKey, rateStatus: []int{http.StatusTooManyRequests}}
	return openai.NewChatCompletionService(
		option.WithBaseURL(p.cfg.BaseURL+"/"),
		option.WithAPIKey(p.cfg.APIKey),
		option.WithHTTPClient(client),
		option.WithMaxRetries(0),
		option.WithMiddleware(check.middleware),
	)
}

// Complete sends one Chat Completions request: the system message, the conversation
// (user, assistant with tool_calls, and role "tool" messages), the tools and tool_choice,
// max_tokens (max_completion_tokens for OpenAI's reasoning models, which refuse
// max_tokens) and, with a ResponseSchema, a strict json_schema response_format.
func (p *OpenAI) Complete(ctx context.Context, req Request) (Response, error) {
	if err := req.Validate(); err != nil {
		return Response{}, err
	}
	params, err := openAIParams(req)
	if err != nil {
		return Response{}, err
	}
	svc := p.chat()
	out, err := svc.New(ctx, params)
	if err != nil {
		return Response{}, sdkError(ProviderOpenAI, err)
	}
	if len(out.Choices) == 0 {
		return Response{}, &APIError{Provider: ProviderOpenAI, Status: http.StatusOK,
			Message: "response has no choices", Retryable: true}
	}
	choice := out.Choices[0]
	calls, err := openAIToolCalls(choice.Message.ToolCalls)
	if err != nil {
		return Response{}, err
	}
	res := Response{
		Text:       contentText(json.RawMessage(choice.Message.JSON.Content.Raw())),
		ToolCalls:  calls,
		Usage:      Usage{InputTokens: out.Usage.PromptTokens, OutputTokens: out.Usage.CompletionTokens},
		Model:      out.Model,
		StopReason: choice.FinishReason,
		CostUSD:    reportedCost(json.RawMessage(out.Usage.JSON.ExtraFields["cost"].Raw())),
	}
	if res.Text == "" && len(calls) == 0 && choice.Message.Refusal != "" {
		res.Text, res.StopReason = choice.Message.Refusal, "refusal"
	}
	res.Stop = stopKind(res.StopReason, len(calls))
	if res.Model == "" {
		res.Model = req.Model
	}
	return res, nil
}

// openAIParams is req in the SDK's request types.
func openAIParams(req Request) (openai.ChatCompletionNewParams, error) {
	params := openai.ChatCompletionNewParams{Model: req.Model}
	if req.System != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(req.System))
	}
	for _, m := range req.Conversation() {
		params.Messages = append(params.Messages, openAIMessage(m))
	}
	if req.MaxTokens > 0 {
		if openAIReasoningModel(req.Model) {
			params.MaxCompletionTokens = param.NewOpt(int64(req.MaxTokens))
		} else {
			params.MaxTokens = param.NewOpt(int64(req.MaxTokens))
		}
	}
	if len(req.ResponseSchema) > 0 {
		params.ResponseFormat.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "response",
				Schema: req.ResponseSchema, Strict: param.NewOpt(true)}}
	}
	for _, t := range req.Tools {
		def, err := json.Marshal(struct {
			Name        string          `json:"name"`
			Description string          `json:"description,omitempty"`
			Parameters  json.RawMessage `json:"parameters,omitempty"`
		}{t.Name, t.Description, t.Parameters})
		if err != nil {
			return params, fmt.Errorf("%s: tool %q: %w", ProviderOpenAI, t.Name, err)
		}
		// Override sends the definition as built here: the schema byte for byte, where
		// the SDK's FunctionParameters (a map) would reorder and re-encode it.
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(
			param.Override[shared.FunctionDefinitionParam](json.RawMessage(def))))
	}
	if len(req.Tools) > 0 && req.ToolChoice != "" {
		params.ToolChoice.OfAuto = param.NewOpt(string(req.ToolChoice))
	}
	return params, nil
}

// openAIMessage is one conversation message in the SDK's types.
func openAIMessage(m Message) openai.ChatCompletionMessageParamUnion {
	switch m.Role {
	case RoleAssistant:
		var a openai.ChatCompletionAssistantMessageParam
		if m.Text != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = param.NewOpt(m.Text)
		}
		for _, tc := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: tc.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name: tc.Name, Arguments: string(argumentsOrEmpty(tc.Arguments))}}})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
	case RoleTool:
		// Chat Completions has no error flag on a tool result: the text says it.
		text := m.Text
		if m.IsError {
			text = "Error: " + text
		}
		return openai.ToolMessage(text, m.ToolCallID)
	}
	return openai.UserMessage(m.Text)
}

// openAIToolCalls decodes the function calls of an answer, in order; their arguments
// must be one JSON object (a model can produce anything: it is checked, not trusted).
func openAIToolCalls(in []openai.ChatCompletionMessageToolCallUnion) ([]ToolCall, error) {
	var out []ToolCall
	for i, tc := range in {
		if tc.Type != "" && tc.Type != "function" {
			return nil, &APIError{Provider: ProviderOpenAI, Status: http.StatusOK, Retryable: true,
				Message: fmt.Sprintf("tool call %d: type %q is not supported (want function)", i+1, tc.Type)}
		}
		call, err := modelToolCall(ProviderOpenAI, i, tc.ID, tc.Function.Name, []byte(tc.Function.Arguments))
		if err != nil {
			return nil, err
		}
		out = append(out, call)
	}
	return out, nil
}

// openAIReasoningModel reports whether model is one of OpenAI's reasoning models (o1, o3,
// o4 families, gpt-5), which take max_completion_tokens and refuse max_tokens.
func openAIReasoningModel(model string) bool {
	for _, fam := range []string{"o1", "o3", "o4"} {
		if model == fam || strings.HasPrefix(model, fam+"-") {
			return true
		}
	}
	return model == "gpt-5" || strings.HasPrefix(model, "gpt-5-") || strings.HasPrefix(model, "gpt-5.")
}

// contentText reads a message content that is a string, null, or an array of parts
// ({"type": "text", "text": …}), as some compatible servers send.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, part := range parts {
		if part.Type == "text" || part.Type == "output_text" {
			b.WriteString(part.Text)
		}
	}
	return b.String()
}

// reportedCost parses a provider-reported cost (a JSON number in USD, or a string holding
// one) exactly from its text. Absent, null, unparseable or negative costs count as not
// reported, so the price table prices the call instead.
func reportedCost(raw json.RawMessage) *decimal.Decimal {
	text := strings.TrimSpace(string(raw))
	if text == "" || text == "null" {
		return nil
	}
	if strings.HasPrefix(text, `"`) {
		if json.Unmarshal(raw, &text) != nil {
			return nil
		}
	}
	d, err := decimal.NewFromString(strings.TrimSpace(text))
	if err != nil || d.IsNegative() {
		return nil
	}
	return &d
}
