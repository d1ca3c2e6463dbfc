package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/internal/protocol"
)

// TestFlowctlValidate checks definitions against the registry the shared worker published
// in the catalog: testflows.Count is registered there with RegisterActivity.
func TestFlowctlValidate(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "count.yaml")
	require.NoError(t, os.WriteFile(good, []byte(`name: count-words
steps:
  - id: count
    uses: Count
    with: {text: "one two three"}
  - {id: greet, call: hello}
`), 0o644))
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte(`name: bad
steps:
  - id: post
    uses: post-comment
`), 0o644))

	reg, err := shared.client.Registry(t.Context())
	require.NoError(t, err)
	assert.Contains(t, reg.Actions, "Count")
	assert.Contains(t, reg.GoFlows, "hello")

	r := flowctlRun(t, "", "validate", good)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Regexp(t, `^`+good+`: valid \(hash [0-9a-f]{64}\)\n$`, r.stdout)

	r = flowctlRun(t, "", "validate", good, bad)
	assert.Equal(t, 2, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, bad+":4:11: step 'post': no registered action 'post-comment' "+
		"(hint: register an action named post-comment on the worker (flow.Worker.RegisterActivity) or add a fallback action)\n")
	assert.Equal(t, "flowctl: 1 error in 1 of 2 files\n", r.stderr)

	r = flowctlRun(t, "", "validate", "-o", "json", bad)
	assert.Equal(t, 2, r.code, r.stderr)
	var got []struct {
		File   string `json:"file"`
		Valid  bool   `json:"valid"`
		Errors []struct {
			File    string `json:"file"`
			Line    int    `json:"line"`
			Col     int    `json:"col"`
			Message string `json:"message"`
			Hint    string `json:"hint"`
		} `json:"errors"`
		Hash string `json:"hash"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got), r.stdout)
	require.Len(t, got, 1)
	assert.False(t, got[0].Valid)
	require.Len(t, got[0].Errors, 1)
	e := got[0].Errors[0]
	assert.Equal(t, []any{bad, 4, 11}, []any{e.File, e.Line, e.Col})
	assert.Contains(t, e.Hint, "flow.Worker.RegisterActivity")

	// Offline, Count is unknown: only the built-ins are.
	r = flowctlRun(t, "", "validate", "--offline", good)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stdout, "no registered action 'Count'")

	// A queue no worker serves has no catalog to validate against.
	r = flowctlRunOn(t, "validate-nobody", "validate", good)
	assert.Equal(t, flowctl.ExitNotFound, r.code, "no worker serves the task queue (issue 31): %s", r.stderr)
	assert.Contains(t, r.stderr, "--offline")
}

func TestFlowctlFlows(t *testing.T) {
	r := flowctlRun(t, "", "flows")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "No definitions served.\n", r.stdout)

	r = flowctlRun(t, "", "flows", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var defs []core.WorkflowInfo
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &defs))
	assert.Empty(t, defs)

	// Go flows are in the catalog as kind go; the registry entry is not a flow.
	cat, err := shared.client.Workflows(t.Context())
	require.NoError(t, err)
	info, ok := cat.Lookup("hello")
	require.True(t, ok)
	assert.Equal(t, protocol.KindGoFlow, info.Kind)
	_, ok = cat.Lookup(protocol.RegistryEntryName)
	assert.False(t, ok)
	require.NotNil(t, cat.Workers)
	assert.Contains(t, cat.Workers.Actions, "Count")
}
