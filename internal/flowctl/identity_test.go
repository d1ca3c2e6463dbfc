package flowctl

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWhoRefusesTypedIdentitiesWhenAuthenticated(t *testing.T) {
	t.Setenv("FLOW_USER", "")
	signed := &app{me: caller{name: "alice", how: "signing key alice-1"}}

	by, err := signed.who("")
	require.NoError(t, err)
	assert.Equal(t, "alice", by, "the credential names the caller")
	by, err = signed.who(" alice ")
	require.NoError(t, err)
	assert.Equal(t, "alice", by, "naming yourself is fine")

	_, err = signed.who("bob")
	assertRefused(t, err, "--as bob", "authenticated as alice (signing key alice-1)")

	t.Setenv("FLOW_USER", "bob")
	_, err = signed.who("")
	assertRefused(t, err, "FLOW_USER=bob", "authenticated as alice")
	t.Setenv("FLOW_USER", "alice")
	_, err = signed.who("")
	require.NoError(t, err, "FLOW_USER naming the caller is harmless")

	torn := &app{me: caller{name: "alice", how: "signing key alice-1", conflict: errors.New("your signing key is alice's but your connection (dev login) authenticates carol")}}
	_, err = torn.who("")
	assertRefused(t, err, "carol")

	t.Setenv("FLOW_USER", "dave")
	open := &app{}
	by, err = open.who("")
	require.NoError(t, err)
	assert.Equal(t, "dave", by, "no credential: FLOW_USER, as typed")
	by, err = open.who("erin")
	require.NoError(t, err)
	assert.Equal(t, "erin", by, "no credential: --as, as typed")
	assert.Equal(t, "as erin, unverified", open.asWho(by), "a typed name is labelled unverified")
	assert.Equal(t, "as alice, signing key alice-1", signed.asWho("alice"))
}

func assertRefused(t *testing.T, err error, want ...string) {
	t.Helper()
	require.Error(t, err)
	assert.Equal(t, ExitRefused, classify(err), "refused, exit %d", ExitRefused)
	for _, w := range want {
		assert.ErrorContains(t, err, w)
	}
}
