package llm

import (
	"context"
	"net/http"
	"os"
	"strings"
)

// DefaultAnthropicBaseURL is the Anthropic API's base URL.
const DefaultAnthropicBaseURL = "https://api.anthropic.com"

// DefaultAnthropicVersion is the anthropic-version header sent when none is configured.
const DefaultAnthropicVersion = "2023-06-01"

// DefaultAnthropicMaxTokens is the max_tokens sent when a Request has none (the Messages
// API requires one).
const DefaultAnthropicMaxTokens = 1024

// StatusOverloaded is Anthropic's "overloaded" HTTP status, treated like a rate limit.
const StatusOverloaded = 529

// AnthropicConfig configures the Anthropic provider.
type AnthropicConfig struct {
	// BaseURL is the API root; "/v1/messages" is appended. Empty means
	// DefaultAnthropicBaseURL.
	BaseURL string
	// APIKey is sent as the x-api-key header; empty sends no header.
	APIKey string
	// Version is the anthropic-version header; empty means DefaultAnthropicVersion.
	Version string
	// HTTPClient makes the requests; nil means http.DefaultClient.
	HTTPClient *http.Client
}

// Anthropic is a Provider speaking the Anthropic Messages API.
type Anthropic struct {
	cfg AnthropicConfig
}

// NewAnthropic returns an Anthropic provider.
func NewAnthropic(cfg AnthropicConfig) *Anthropic {
	cfg.BaseURL = baseURL(cfg.BaseURL, DefaultAnthropicBaseURL)
	if cfg.Version == "" {
		cfg.Version = DefaultAnthropicVersion
	}
	return &Anthropic{cfg: cfg}
}

// AnthropicFromEnv returns an Anthropic provider configured from ANTHROPIC_BASE_URL
// (optional) and ANTHROPIC_API_KEY (required unless the base URL is on this machine).
func AnthropicFromEnv() (*Anthropic, error) {
	base := strings.TrimSpace(os.Getenv("ANTHROPIC_BASE_URL"))
	key, err := envKey("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", base)
	if err != nil {
		return nil, err
	}
	return NewAnthropic(AnthropicConfig{BaseURL: base, APIKey: key}), nil
}

// Name returns ProviderAnthropic.
func (p *Anthropic) Name() string { return ProviderAnthropic }

// BaseURL returns the API root requests go to.
func (p *Anthropic) BaseURL() string { return p.cfg.BaseURL }

type anthropicMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type anthropicRequest struct {
	Model     string             `json:"model"`
	MaxTokens int                `json:"max_tokens"`
	System    string             `json:"system,omitempty"`
	Messages  []anthropicMessage `json:"messages"`
}

type anthropicResponse struct {
	Model   string `json:"model"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StopReason string `json:"stop_reason"`
	Usage      struct {
		InputTokens              int64 `json:"input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	} `json:"usage"`
}

// SchemaInstruction is appended to the system prompt of an Anthropic call that has a
// ResponseSchema (the basic Messages API has no response_format), followed by the schema.
const SchemaInstruction = "Answer with only one JSON value that matches the JSON Schema below: " +
	"no prose, no Markdown code fences.\nJSON Schema:\n"

// Complete sends one Messages request. Input tokens include cache writes and cache reads.
func (p *Anthropic) Complete(ctx context.Context, req Request) (Response, error) {
	body := anthropicRequest{Model: req.Model, MaxTokens: req.MaxTokens, System: req.System,
		Messages: []anthropicMessage{{Role: "user", Content: req.Prompt}}}
	if body.MaxTokens <= 0 {
		body.MaxTokens = DefaultAnthropicMaxTokens
	}
	if len(req.ResponseSchema) > 0 {
		if body.System != "" {
			body.System += "\n\n"
		}
		body.System += SchemaInstruction + string(req.ResponseSchema)
	}
	headers := map[string]string{"anthropic-version": p.cfg.Version}
	if p.cfg.APIKey != "" {
		headers["x-api-key"] = p.cfg.APIKey
	}
	call := httpCall{provider: ProviderAnthropic, client: p.cfg.HTTPClient, url: p.cfg.BaseURL + "/v1/messages",
		headers: headers, apiKey: p.cfg.APIKey, rateStatus: []int{http.StatusTooManyRequests, StatusOverloaded}}
	data, err := call.post(ctx, body)
	if err != nil {
		return Response{}, err
	}
	var out anthropicResponse
	if err := decodeResponse(ProviderAnthropic, data, &out); err != nil {
		return Response{}, err
	}
	var text strings.Builder
	for _, block := range out.Content {
		if block.Type == "text" {
			text.WriteString(block.Text)
		}
	}
	u := out.Usage
	res := Response{
		Text:       text.String(),
		Usage:      Usage{InputTokens: u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens, OutputTokens: u.OutputTokens},
		Model:      out.Model,
		StopReason: out.StopReason,
	}
	if res.Model == "" {
		res.Model = req.Model
	}
	return res, nil
}
