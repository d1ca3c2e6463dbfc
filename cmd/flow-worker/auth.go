package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/gateflow/gateflow/auth"
)

// authFlags are the flags of the worker's decision policy (flow.WorkerOptions.Auth).
type authFlags struct {
	keys     string
	required bool
	issuer   string
	audience string
	jwks     string
	rules    map[auth.Kind][]string
}

func (f *authFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.keys, "auth-keys", "", "verify signed votes and answers against this key directory (flowctl keys directory); each run pins the keys it starts with")
	fs.BoolVar(&f.required, "auth-required", false, "with --auth-keys or --auth-issuer: refuse votes and answers without a proof, and votes sent as Signals")
	fs.StringVar(&f.issuer, "auth-issuer", "", "accept tokens of this identity provider (OIDC issuer URL) as proof; needs --auth-audience and --auth-jwks")
	fs.StringVar(&f.audience, "auth-audience", "", "with --auth-issuer: the audience its tokens must name")
	fs.StringVar(&f.jwks, "auth-jwks", "", "with --auth-issuer: the provider's keys, a JWKS file or an http(s) URL read at start")
	fs.Func("auth-rule", "who may make a kind of decision on any run, KIND=WHO,... with KIND budget, pause or cancel and WHO people, group:NAME (of --groups) or creator (repeatable)", func(v string) error {
		kind, who, ok := strings.Cut(v, "=")
		kind = strings.TrimSpace(kind)
		if !ok || kind == "" {
			return fmt.Errorf("want KIND=WHO,..., got %q", v)
		}
		k := auth.Kind(kind)
		if k != auth.KindBudget && k != auth.KindPause && k != auth.KindCancel {
			return fmt.Errorf("kind %q: want budget, pause or cancel (gates and inputs name their own approvers)", kind)
		}
		var list []string
		for _, w := range strings.Split(who, ",") {
			if w = strings.TrimSpace(w); w != "" {
				list = append(list, w)
			}
		}
		if len(list) == 0 {
			return fmt.Errorf("rule for %s lists nobody", kind)
		}
		if _, dup := f.rules[k]; dup {
			return fmt.Errorf("rule for %s given twice", kind)
		}
		if f.rules == nil {
			f.rules = map[auth.Kind][]string{}
		}
		f.rules[k] = list
		return nil
	})
}

// policy is the decision policy the flags ask for; nil without --auth-keys or
// --auth-issuer.
func (f *authFlags) policy(ctx context.Context) (*auth.Policy, error) {
	if f.keys == "" && f.issuer == "" {
		if f.required || f.audience != "" || f.jwks != "" {
			return nil, fmt.Errorf("--auth-required, --auth-audience and --auth-jwks need --auth-keys or --auth-issuer")
		}
		if len(f.rules) == 0 {
			return nil, nil
		}
	}
	p := &auth.Policy{Required: f.required, Rules: f.rules}
	if f.keys != "" {
		d, err := auth.LoadDirectory(f.keys)
		if err != nil {
			return nil, fmt.Errorf("--auth-keys: %w", err)
		}
		p.Directory = d
	}
	if f.issuer != "" {
		if f.audience == "" || f.jwks == "" {
			return nil, fmt.Errorf("--auth-issuer needs --auth-audience and --auth-jwks")
		}
		var keys jose.JSONWebKeySet
		var err error
		if strings.HasPrefix(f.jwks, "http://") || strings.HasPrefix(f.jwks, "https://") {
			fctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			keys, err = auth.FetchJWKS(fctx, nil, f.jwks)
			cancel()
		} else {
			keys, err = auth.LoadJWKS(f.jwks)
		}
		if err != nil {
			return nil, fmt.Errorf("--auth-jwks: %w", err)
		}
		p.Issuer = &auth.Issuer{URL: f.issuer, Audience: f.audience, Keys: keys}
	}
	if err := p.Check(); err != nil {
		return nil, err
	}
	return p, nil
}

// describePolicy is the banner's line for the decision policy: "verified (keys alice-1,
// bob-1; issuer https://idp); proofs required".
func describePolicy(p *auth.Policy) string {
	var from []string
	if keys := p.Directory.Keys(); len(keys) > 0 {
		ids := make([]string, len(keys))
		for i, k := range keys {
			ids[i] = k.JWK.KeyID
		}
		from = append(from, "keys "+strings.Join(ids, ", "))
	}
	if p.Issuer != nil {
		from = append(from, "issuer "+p.Issuer.URL)
	}
	s := "verified (" + strings.Join(from, "; ") + ")"
	if len(from) == 0 {
		s = "typed identities, unverified"
	}
	for _, k := range []auth.Kind{auth.KindBudget, auth.KindPause, auth.KindCancel} {
		if who, ok := p.Rules[k]; ok {
			s += fmt.Sprintf("; %s by %s", k, strings.Join(who, ", "))
		}
	}
	switch {
	case p.Required:
		s += "; proofs required, Signal votes refused"
	case len(from) > 0:
		s += "; unsigned ones accepted as unverified"
	}
	return s
}
