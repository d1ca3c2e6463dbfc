package llm

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"
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

// SchemaInstruction is appended to the system prompt of an Anthropic call that has a
// ResponseSchema (the basic Messages API has no response_format), followed by the schema.
const SchemaInstruction = "Answer with only one JSON value that matches the JSON Schema below: " +
	"no prose, no Markdown code fences.\nJSON Schema:\n"

// messages returns the SDK's Messages service for this provider: no retries (gateflow's
// activity retries own them), no settings read from the environment, the configured
// anthropic-version, and wireCheck turning HTTP answers into gateflow's errors.
func (p *Anthropic) messages() anthropic.MessageService {
	client := p.cfg.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	check := wireCheck{provider: ProviderAnthropic, apiKey: p.cfg.APIKey,
		rateStatus: []int{http.StatusTooManyRequests, StatusOverloaded}}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(p.cfg.BaseURL + "/"),
		option.WithHTTPClient(client),
		option.WithMaxRetries(0),
		option.WithHeader("anthropic-version", p.cfg.Version),
		option.WithMiddleware(check.middleware),
	}
	if p.cfg.APIKey != "" {
		// The x-api-key header, as the Messages API documents it and as before: this SDK's
		// WithAPIKey sends the key as a Bearer token.
		opts = append(opts, option.WithHeader("x-api-key", p.cfg.APIKey))
	}
	return anthropic.NewClient(opts...).Messages
}

// Complete sends one Messages request: the system prompt, the conversation (tool calls as
// tool_use blocks, their results as tool_result blocks of the next user message), the
// tools and tool_choice. Input tokens include cache writes and cache reads.
func (p *Anthropic) Complete(ctx context.Context, req Request) (Response, error) {
	if err := req.Validate(); err != nil {
		return Response{}, err
	}
	svc := p.messages()
	var opts []option.RequestOption
	if system := anthropicSystem(req); system != "" {
		// The system prompt as a plain string, as the Messages API takes it and as it was
		// sent before the SDK (whose System field is a list of text blocks).
		opts = append(opts, option.WithJSONSet("system", system))
	}
	out, err := svc.New(ctx, anthropicParams(req), opts...)
	if err != nil {
		return Response{}, sdkError(ProviderAnthropic, err)
	}
	var text strings.Builder
	var calls []ToolCall
	for _, block := range out.Content {
		switch block.Type {
		case "text":
			text.WriteString(block.Text)
		case "tool_use":
			call, err := modelToolCall(ProviderAnthropic, len(calls), block.ID, block.Name, block.Input)
			if err != nil {
				return Response{}, err
			}
			calls = append(calls, call)
		}
	}
	u := out.Usage
	res := Response{
		Text:       text.String(),
		ToolCalls:  calls,
		Usage:      Usage{InputTokens: u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens, OutputTokens: u.OutputTokens},
		Model:      string(out.Model),
		StopReason: string(out.StopReason),
	}
	res.Stop = stopKind(res.StopReason, len(calls))
	if res.Model == "" {
		res.Model = req.Model
	}
	return res, nil
}

// anthropicParams is req in the SDK's request types. Consecutive user and tool messages
// go in one user message (the API alternates user and assistant turns): the results of
// one turn's tool calls are the tool_result blocks of the next user message.
func anthropicParams(req Request) anthropic.MessageNewParams {
	params := anthropic.MessageNewParams{Model: anthropic.Model(req.Model), MaxTokens: int64(req.MaxTokens)}
	if params.MaxTokens <= 0 {
		params.MaxTokens = DefaultAnthropicMaxTokens
	}
	var blocks []anthropic.ContentBlockParamUnion
	user := false // whether blocks is a user message
	flush := func() {
		switch {
		case len(blocks) == 0:
		case user:
			params.Messages = append(params.Messages, anthropic.NewUserMessage(blocks...))
		default:
			params.Messages = append(params.Messages, anthropic.NewAssistantMessage(blocks...))
		}
		blocks = nil
	}
	for _, m := range req.Conversation() {
		if isUser := m.Role != RoleAssistant; isUser != user {
			flush()
			user = isUser
		}
		blocks = append(blocks, anthropicBlocks(m)...)
	}
	flush()
	for _, t := range req.Tools {
		tool := anthropic.ToolParam{Name: t.Name, InputSchema: anthropicSchema(t.Parameters)}
		if t.Description != "" {
			tool.Description = param.NewOpt(t.Description)
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	if len(req.Tools) > 0 {
		switch req.ToolChoice {
		case ToolAuto:
			params.ToolChoice.OfAuto = &anthropic.ToolChoiceAutoParam{}
		case ToolNone:
			params.ToolChoice.OfNone = &anthropic.ToolChoiceNoneParam{}
		case ToolRequired:
			params.ToolChoice.OfAny = &anthropic.ToolChoiceAnyParam{}
		}
	}
	return params
}

// anthropicSystem is the system prompt: the request's, then the response schema's
// instruction (the basic Messages API has no response_format).
func anthropicSystem(req Request) string {
	system := req.System
	if len(req.ResponseSchema) > 0 {
		if system != "" {
			system += "\n\n"
		}
		system += SchemaInstruction + string(req.ResponseSchema)
	}
	return system
}

// anthropicBlocks is one conversation message as content blocks.
func anthropicBlocks(m Message) []anthropic.ContentBlockParamUnion {
	switch m.Role {
	case RoleTool:
		if m.Text == "" {
			// The API refuses empty text blocks: an empty result is a tool_result without content.
			return []anthropic.ContentBlockParamUnion{{OfToolResult: &anthropic.ToolResultBlockParam{
				ToolUseID: m.ToolCallID, IsError: anthropic.Bool(m.IsError)}}}
		}
		return []anthropic.ContentBlockParamUnion{anthropic.NewToolResultBlock(m.ToolCallID, m.Text, m.IsError)}
	case RoleAssistant:
		var out []anthropic.ContentBlockParamUnion
		if m.Text != "" {
			out = append(out, anthropic.NewTextBlock(m.Text))
		}
		for _, tc := range m.ToolCalls {
			out = append(out, anthropic.NewToolUseBlock(tc.ID, argumentsOrEmpty(tc.Arguments), tc.Name))
		}
		return out
	}
	return []anthropic.ContentBlockParamUnion{anthropic.NewTextBlock(m.Text)}
}

// anthropicSchema sends a tool's parameter schema as given: Override keeps it byte for
// byte (the SDK's typed schema would re-encode it through maps).
func anthropicSchema(schema json.RawMessage) anthropic.ToolInputSchemaParam {
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return param.Override[anthropic.ToolInputSchemaParam](schema)
}
