package llm

import "os"

// ProvidersFromEnv configures the agent providers the environment describes: OpenAI (or
// any compatible server) when OPENAI_API_KEY or OPENAI_BASE_URL is set, Anthropic when
// ANTHROPIC_API_KEY or ANTHROPIC_BASE_URL is set.
func ProvidersFromEnv() (map[string]Provider, error) {
	out := map[string]Provider{}
	if os.Getenv("OPENAI_API_KEY") != "" || os.Getenv("OPENAI_BASE_URL") != "" {
		p, err := OpenAIFromEnv()
		if err != nil {
			return nil, err
		}
		out[ProviderOpenAI] = p
	}
	if os.Getenv("ANTHROPIC_API_KEY") != "" || os.Getenv("ANTHROPIC_BASE_URL") != "" {
		p, err := AnthropicFromEnv()
		if err != nil {
			return nil, err
		}
		out[ProviderAnthropic] = p
	}
	return out, nil
}
