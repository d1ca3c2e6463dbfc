package connect

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOptionsFromProfileEnvAndFlags(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "temporal.toml")
	require.NoError(t, os.WriteFile(file, []byte(`
[profile.default]
address = "default.example:7233"
namespace = "dflt"

[profile.prod]
address = "prod.example:7233"
namespace = "prod-ns"
api_key = "secret-key"
`), 0o600))
	t.Setenv("TEMPORAL_CONFIG_FILE", file)
	unset(t, "TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "TEMPORAL_PROFILE", "TEMPORAL_API_KEY")

	o, err := Options(Request{})
	require.NoError(t, err)
	assert.Equal(t, "default.example:7233", o.HostPort)
	assert.Equal(t, "dflt", o.Namespace)

	o, err = Options(Request{Profile: "prod"})
	require.NoError(t, err)
	assert.Equal(t, "prod.example:7233", o.HostPort)
	assert.Equal(t, "prod-ns", o.Namespace)
	assert.NotNil(t, o.Credentials, "the API key becomes credentials")

	t.Setenv("TEMPORAL_NAMESPACE", "from-env")
	o, err = Options(Request{Profile: "prod", Address: "flag.example:1"})
	require.NoError(t, err)
	assert.Equal(t, "flag.example:1", o.HostPort, "a flag wins")
	assert.Equal(t, "from-env", o.Namespace, "the environment wins over the file")

	_, err = Options(Request{Profile: "missing"})
	assert.ErrorContains(t, err, "missing")
}

func TestDefaultsWithoutAnything(t *testing.T) {
	t.Setenv("TEMPORAL_CONFIG_FILE", filepath.Join(t.TempDir(), "none.toml"))
	unset(t, "TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "TEMPORAL_PROFILE", "TEMPORAL_API_KEY")
	o, err := Options(Request{})
	require.NoError(t, err)
	assert.Equal(t, DefaultAddress, o.HostPort)
	assert.Equal(t, DefaultNamespace, o.Namespace)
}

// unset removes environment variables for the test (restored after it).
func unset(t *testing.T, keys ...string) {
	for _, k := range keys {
		t.Setenv(k, "")
		require.NoError(t, os.Unsetenv(k))
	}
}

func TestCurrentUser(t *testing.T) {
	t.Setenv("FLOW_USER", "  alice ")
	assert.Equal(t, "alice", CurrentUser())
	t.Setenv("FLOW_USER", "")
	assert.NotEmpty(t, CurrentUser(), "falls back to the OS user")
}
