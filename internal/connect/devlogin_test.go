package connect

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/internal/devauth"
)

func TestOptionsUseTheDevLoginOfThatAddressOnly(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TEMPORAL_CONFIG_FILE", filepath.Join(dir, "none.toml"))
	unset(t, "TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "TEMPORAL_PROFILE", "TEMPORAL_API_KEY", "FLOW_USER")
	t.Setenv("GATEFLOW_DEV_LOGIN", filepath.Join(dir, "login.json"))
	_, err := devauth.SaveLogin(devauth.Login{Address: "127.0.0.1:7999", Subject: "alice", Token: "tok", Expires: time.Now().Add(time.Hour)})
	require.NoError(t, err)

	o, err := Options(Request{Address: "127.0.0.1:7999"})
	require.NoError(t, err)
	assert.NotNil(t, o.Credentials, "the dev login's token becomes credentials")
	assert.True(t, o.ConnectionOptions.TLSDisabled, "the dev server speaks plaintext")

	o, err = Options(Request{Address: "prod.example:7233"})
	require.NoError(t, err)
	assert.Nil(t, o.Credentials, "a dev token is never sent to another address")
	assert.Equal(t, "alice", CurrentUser(), "the login names the person at the keyboard")
	t.Setenv("FLOW_USER", "carol")
	assert.Equal(t, "carol", CurrentUser())
}
