package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/auth"
)

func TestAuthFlags(t *testing.T) {
	dir := t.TempDir()
	alice, err := auth.NewKey("alice-1", "alice")
	require.NoError(t, err)
	d, err := auth.NewDirectory(alice.Public())
	require.NoError(t, err)
	b, err := json.Marshal(d)
	require.NoError(t, err)
	keys := filepath.Join(dir, "directory.json")
	require.NoError(t, os.WriteFile(keys, b, 0o644))

	p, err := (&authFlags{}).policy(context.Background())
	require.NoError(t, err)
	assert.Nil(t, p, "no flags: no policy")

	for _, tc := range []struct {
		f    authFlags
		want string
	}{
		{authFlags{required: true}, "--auth-required, --auth-audience and --auth-jwks need --auth-keys or --auth-issuer"},
		{authFlags{issuer: "https://idp"}, "--auth-issuer needs --auth-audience and --auth-jwks"},
		{authFlags{keys: filepath.Join(dir, "missing.json")}, "--auth-keys: auth: read directory: "},
		{authFlags{issuer: "https://idp", audience: "gateflow", jwks: keys}, "--auth-jwks: auth: JWKS " + keys + ": go-jose/go-jose: missing json web key type"},
	} {
		_, err := tc.f.policy(context.Background())
		assert.ErrorContains(t, err, tc.want)
	}

	p, err = (&authFlags{keys: keys, required: true}).policy(context.Background())
	require.NoError(t, err)
	require.NotNil(t, p.Directory)
	assert.True(t, p.Required)
	assert.Equal(t, "verified (keys alice-1); proofs required, Signal votes refused", describePolicy(p))
}

func TestAuthRuleFlag(t *testing.T) {
	var f authFlags
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.register(fs)
	require.NoError(t, fs.Parse([]string{"--auth-rule", "budget=group:budget-admins, creator", "--auth-rule", "pause=olga"}))
	assert.Equal(t, map[auth.Kind][]string{auth.KindBudget: {"group:budget-admins", "creator"}, auth.KindPause: {"olga"}}, f.rules)
	p, err := f.policy(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "typed identities, unverified; budget by group:budget-admins, creator; pause by olga", describePolicy(p))
	for _, bad := range []struct{ arg, want string }{
		{"vote=alice", `kind "vote": want budget, pause or cancel`},
		{"budget=", "rule for budget lists nobody"},
		{"budget", `want KIND=WHO,..., got "budget"`},
	} {
		var g authFlags
		gs := flag.NewFlagSet("t", flag.ContinueOnError)
		gs.SetOutput(io.Discard)
		g.register(gs)
		assert.ErrorContains(t, gs.Parse([]string{"--auth-rule", bad.arg}), bad.want)
	}
}
