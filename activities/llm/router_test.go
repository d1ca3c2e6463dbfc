package llm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRouterProviderForModel(t *testing.T) {
	for model, want := range map[string]string{
		"claude-sonnet-4-20250514": ProviderAnthropic,
		"claude-3-5-haiku":         ProviderAnthropic,
		"gpt-4o-mini":              ProviderOpenAI,
		"gpt-5":                    ProviderOpenAI,
		"chatgpt-4o-latest":        ProviderOpenAI,
		"o1":                       ProviderOpenAI,
		"o3-mini":                  ProviderOpenAI,
		"o4-mini-2025-04-16":       ProviderOpenAI,
		"scripted":                 ProviderScripted,
		"scripted-review":          ProviderScripted,
		"test-model":               ProviderScripted,
		"o5":                       "",
		"o3x":                      "",
		"gpt4":                     "",
		"llama-3.1-70b":            "",
		"":                         "",
	} {
		assert.Equal(t, want, ProviderForModel(model), "%q", model)
	}
}

func TestRouterFor(t *testing.T) {
	openai := NewOpenAI(OpenAIConfig{BaseURL: "http://127.0.0.1:1"})
	local := NewOpenAI(OpenAIConfig{BaseURL: "http://127.0.0.1:2"})
	scripted := NewScripted()
	r := NewRouter(map[string]Provider{"openai": openai, "scripted": scripted, "ollama": local, "nil": nil})
	assert.Equal(t, []string{"ollama", "openai", "scripted"}, r.Names(), "nil providers are dropped")

	tests := []struct {
		name, model, explicit string
		want                  Provider
		wantErr               string
	}{
		{"openai by prefix", "gpt-4o-mini", "", openai, ""},
		{"o-series by prefix", "o3", "", openai, ""},
		{"scripted by prefix", "scripted", "", scripted, ""},
		{"test by prefix", "test-echo", "", scripted, ""},
		{"explicit wins over the prefix", "gpt-4o-mini", "ollama", local, ""},
		{"explicit for an unknown model", "llama-3.1-70b", "ollama", local, ""},
		{"explicit not configured", "gpt-4o", "anthropic", nil,
			`llm: provider "anthropic" is not configured (configured: ollama, openai, scripted)`},
		{"inferred provider not configured", "claude-sonnet-4", "", nil,
			`llm: model "claude-sonnet-4" needs provider "anthropic", which is not configured (configured: ollama, openai, scripted)`},
		{"unknown model", "llama-3.1-70b", "", nil,
			`llm: no provider is known for model "llama-3.1-70b"; name one in the step (configured: ollama, openai, scripted)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.For(tt.model, tt.explicit)
			if tt.wantErr != "" {
				assert.EqualError(t, err, tt.wantErr)
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Same(t, tt.want, got)
		})
	}
}

func TestRouterEmpty(t *testing.T) {
	var nilRouter *Router
	_, err := nilRouter.For("gpt-4o", "")
	assert.EqualError(t, err, `llm: no model providers are configured (model "gpt-4o")`)
	assert.Nil(t, nilRouter.Names())
	_, err = NewRouter(nil).For("gpt-4o", "")
	assert.EqualError(t, err, `llm: no model providers are configured (model "gpt-4o")`)
}
