package llm

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"

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

type openAIMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type openAIJSONSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

type openAIResponseFormat struct {
	Type       string            `json:"type"`
	JSONSchema *openAIJSONSchema `json:"json_schema,omitempty"`
}

type openAIRequest struct {
	Model               string                `json:"model"`
	Messages            []openAIMessage       `json:"messages"`
	MaxTokens           int                   `json:"max_tokens,omitempty"`
	MaxCompletionTokens int                   `json:"max_completion_tokens,omitempty"`
	ResponseFormat      *openAIResponseFormat `json:"response_format,omitempty"`
}

type openAIResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content json.RawMessage `json:"content"`
			Refusal *string         `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int64           `json:"prompt_tokens"`
		CompletionTokens int64           `json:"completion_tokens"`
		Cost             json.RawMessage `json:"cost"`
	} `json:"usage"`
}

// Complete sends one Chat Completions request: the system and user messages, max_tokens
// (max_completion_tokens for OpenAI's reasoning models, which refuse max_tokens) and, with
// a ResponseSchema, a strict json_schema response_format.
func (p *OpenAI) Complete(ctx context.Context, req Request) (Response, error) {
	body := openAIRequest{Model: req.Model}
	if req.System != "" {
		body.Messages = append(body.Messages, openAIMessage{Role: "system", Content: req.System})
	}
	body.Messages = append(body.Messages, openAIMessage{Role: "user", Content: req.Prompt})
	if openAIReasoningModel(req.Model) {
		body.MaxCompletionTokens = req.MaxTokens
	} else {
		body.MaxTokens = req.MaxTokens
	}
	if len(req.ResponseSchema) > 0 {
		body.ResponseFormat = &openAIResponseFormat{Type: "json_schema",
			JSONSchema: &openAIJSONSchema{Name: "response", Schema: req.ResponseSchema, Strict: true}}
	}
	headers := map[string]string{}
	if p.cfg.APIKey != "" {
		headers["Authorization"] = "Bearer " + p.cfg.APIKey
	}
	call := httpCall{provider: ProviderOpenAI, client: p.cfg.HTTPClient, url: p.cfg.BaseURL + "/chat/completions",
		headers: headers, apiKey: p.cfg.APIKey, rateStatus: []int{http.StatusTooManyRequests}}
	data, err := call.post(ctx, body)
	if err != nil {
		return Response{}, err
	}
	var out openAIResponse
	if err := decodeResponse(ProviderOpenAI, data, &out); err != nil {
		return Response{}, err
	}
	if len(out.Choices) == 0 {
		return Response{}, &APIError{Provider: ProviderOpenAI, Status: http.StatusOK,
			Message: "response has no choices", Retryable: true}
	}
	choice := out.Choices[0]
	res := Response{
		Text:       contentText(choice.Message.Content),
		Usage:      Usage{InputTokens: out.Usage.PromptTokens, OutputTokens: out.Usage.CompletionTokens},
		Model:      out.Model,
		StopReason: choice.FinishReason,
		CostUSD:    reportedCost(out.Usage.Cost),
	}
	if res.Text == "" && choice.Message.Refusal != nil && *choice.Message.Refusal != "" {
		res.Text, res.StopReason = *choice.Message.Refusal, "refusal"
	}
	if res.Model == "" {
		res.Model = req.Model
	}
	return res, nil
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
