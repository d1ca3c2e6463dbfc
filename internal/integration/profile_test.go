package integration

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/internal/flowctl"
)

// flowctl connects like the Temporal CLI: a profile of the config file gives the address
// and namespace (and would give TLS and API keys).
func TestFlowctlConnectsWithAConfigProfile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "temporal.toml")
	require.NoError(t, os.WriteFile(file, []byte("[profile.local]\naddress = \""+shared.srv.FrontendAddress()+
		"\"\nnamespace = \""+shared.srv.Namespace()+"\"\n"), 0o600))
	t.Setenv("TEMPORAL_CONFIG_FILE", file)
	t.Setenv("TEMPORAL_ADDRESS", "")
	require.NoError(t, os.Unsetenv("TEMPORAL_ADDRESS"))
	var out, errb bytes.Buffer
	code := flowctl.Execute([]string{"--profile", "local", "--task-queue", shared.queue, "workflows"}, strings.NewReader(""), &out, &errb)
	require.Equal(t, 0, code, errb.String())
	assert.Contains(t, out.String(), "hello")

	out.Reset()
	errb.Reset()
	code = flowctl.Execute([]string{"--profile", "nope", "workflows"}, strings.NewReader(""), &out, &errb)
	assert.Equal(t, flowctl.ExitUsage, code)
	assert.Contains(t, errb.String(), "nope")
}
