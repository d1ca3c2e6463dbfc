package llm

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Router picks the Provider for a model.
type Router struct {
	providers map[string]Provider
}

// NewRouter returns a router over providers, keyed by provider name (ProviderOpenAI,
// ProviderAnthropic, ProviderScripted, or any name a step's Provider field uses). Nil
// providers are ignored.
func NewRouter(providers map[string]Provider) *Router {
	r := &Router{providers: make(map[string]Provider, len(providers))}
	for name, p := range providers {
		if p != nil {
			r.providers[name] = p
		}
	}
	return r
}

// Names returns the configured provider names, sorted.
func (r *Router) Names() []string {
	if r == nil {
		return nil
	}
	out := slices.AppendSeq(make([]string, 0, len(r.providers)), maps.Keys(r.providers))
	slices.Sort(out)
	return out
}

// For returns the provider for model: the one named explicitProvider when that is set,
// else the one ProviderForModel names. The error lists the configured providers.
func (r *Router) For(model, explicitProvider string) (Provider, error) {
	if r == nil || len(r.providers) == 0 {
		return nil, fmt.Errorf("llm: no model providers are configured (model %q)", model)
	}
	if explicitProvider != "" {
		if p, ok := r.providers[explicitProvider]; ok {
			return p, nil
		}
		return nil, fmt.Errorf("llm: provider %q is not configured (configured: %s)", explicitProvider, r.list())
	}
	name := ProviderForModel(model)
	if name == "" {
		return nil, fmt.Errorf("llm: no provider is known for model %q; name one in the step (configured: %s)", model, r.list())
	}
	p, ok := r.providers[name]
	if !ok {
		return nil, fmt.Errorf("llm: model %q needs provider %q, which is not configured (configured: %s)", model, name, r.list())
	}
	return p, nil
}

func (r *Router) list() string {
	names := r.Names()
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// ProviderForModel names the provider a model belongs to by its prefix: "claude…" →
// ProviderAnthropic; "gpt-…", "chatgpt…", "o1", "o3", "o4" (alone or followed by '-') →
// ProviderOpenAI; "scripted…", "test…" → ProviderScripted. Empty when unknown.
func ProviderForModel(model string) string {
	switch {
	case strings.HasPrefix(model, "claude"):
		return ProviderAnthropic
	case strings.HasPrefix(model, "gpt-"), strings.HasPrefix(model, "chatgpt"):
		return ProviderOpenAI
	case strings.HasPrefix(model, "scripted"), strings.HasPrefix(model, "test"):
		return ProviderScripted
	}
	for _, fam := range []string{"o1", "o3", "o4"} {
		if model == fam || strings.HasPrefix(model, fam+"-") {
			return ProviderOpenAI
		}
	}
	return ""
}
