package flowctl

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"

	"github.com/gateflow/gateflow/internal/devauth"
)

func TestLogin(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TEMPORAL_CONFIG_FILE", filepath.Join(dir, "none.toml"))
	t.Setenv("TEMPORAL_ADDRESS", "")
	t.Setenv("GATEFLOW_DEV_LOGIN", filepath.Join(dir, "login.json"))
	keyPath := filepath.Join(dir, "key.json")
	run := func(args ...string) (int, string, string) {
		var o, e bytes.Buffer
		code := Execute(args, strings.NewReader(""), &o, &e)
		return code, o.String(), e.String()
	}

	code, _, stderr := run("login", "alice", "--dev-key", keyPath)
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, "start `flow-worker --dev --auth` first")

	_, _, err := devauth.LoadOrCreate(keyPath)
	require.NoError(t, err)
	code, _, stderr = run("login", " alice", "--dev-key", keyPath)
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, "leading or trailing spaces")
	code, _, stderr = run("login", "alice", "--dev-key", keyPath, "--ttl", "-1s")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, "--ttl")

	code, stdout, stderr := run("--address", "127.0.0.1:7999", "login", "alice", "--dev-key", keyPath)
	require.Equal(t, ExitOK, code, stderr)
	assert.Contains(t, stdout, "DEV ONLY login: flowctl now acts as alice on 127.0.0.1:7999")
	raw, err := os.ReadFile(filepath.Join(dir, "login.json"))
	require.NoError(t, err)
	var l devauth.Login
	require.NoError(t, json.Unmarshal(raw, &l))
	assert.Equal(t, "alice", l.Subject)
	assert.Equal(t, "127.0.0.1:7999", l.Address)

	code, stdout, _ = run("login", "bob", "--dev-key", keyPath, "--export")
	require.Equal(t, ExitOK, code)
	assert.Contains(t, stdout, "# DEV ONLY token for bob")
	assert.Contains(t, stdout, "export TEMPORAL_API_KEY=")
	assert.Contains(t, stdout, "export TEMPORAL_TLS=false")
	raw2, _ := os.ReadFile(filepath.Join(dir, "login.json"))
	assert.Equal(t, raw, raw2, "--export keeps no token")

	code, _, stderr = run("login", "alice", "--dev-key", keyPath, "--web", "127.0.0.1:8233")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, `--web "127.0.0.1:8233": want the Web UI's base URL, like http://127.0.0.1:8233`)
	code, stdout, stderr = run("login", "alice", "--dev-key", keyPath, "--web", "http://127.0.0.1:8233/")
	require.Equal(t, ExitOK, code, stderr)
	m := regexp.MustCompile(`Web UI: open (http://127\.0\.0\.1:8233/gateflow/login#token=(\S+)) to log a browser in as alice`).FindStringSubmatch(stdout)
	require.Len(t, m, 3, stdout)
	key, err := devauth.Load(keyPath)
	require.NoError(t, err)
	v, err := devauth.Verify(key.Public(), key.ID, m[2], time.Now())
	require.NoError(t, err, "the link carries alice's token")
	assert.Equal(t, "alice", v.Subject)
	code, stdout, stderr = run("login", "alice", "--dev-key", keyPath, "--web", "http://127.0.0.1:8233", "-o", "json")
	require.Equal(t, ExitOK, code, stderr)
	var j struct {
		Subject     string `json:"subject"`
		WebLoginURL string `json:"web_login_url"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &j), stdout)
	assert.Equal(t, "alice", j.Subject)
	assert.True(t, strings.HasPrefix(j.WebLoginURL, "http://127.0.0.1:8233/gateflow/login#token="), j.WebLoginURL)
	code, stdout, _ = run("login", "bob", "--dev-key", keyPath, "--export", "--web", "http://127.0.0.1:8233")
	require.Equal(t, ExitOK, code)
	assert.Contains(t, stdout, "# Web UI login as bob: http://127.0.0.1:8233/gateflow/login#token=")

	code, stdout, stderr = run("login", "ci", "--dev-key", keyPath, "--worker")
	require.Equal(t, ExitOK, code, stderr)
	assert.Contains(t, stdout, "acts as ci (a worker principal of namespace default)")
}

func TestDeniedReason(t *testing.T) {
	err := serviceerror.NewPermissionDenied("Request unauthorized.", "gateflow: no")
	assert.Equal(t, " (gateflow: no)", deniedReason(err))
	assert.Equal(t, ExitRefused, classify(err))
	assert.Equal(t, "", deniedReason(serviceerror.NewPermissionDenied("gateflow: no", "gateflow: no")))
}
