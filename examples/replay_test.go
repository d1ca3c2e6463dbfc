package examples_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/mcptools"
	"github.com/gateflow/gateflow/testsuite"
)

// TestRecordedHistoriesReplay replays the recorded histories of every example flow
// (testdata/histories, recorded by internal/integration's
// TestExampleHistoriesRecordAndReplay with GATEFLOW_UPDATE_HISTORIES=1) against the code as
// it is: a change that would break running workflows fails here. The worker declares the
// triage agent's MCP server by name, as make run does; a replay never starts it.
func TestRecordedHistoriesReplay(t *testing.T) {
	files, err := filepath.Glob("testdata/histories/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	opts := flow.WorkerOptions{MCPServers: []mcptools.Server{{Name: examples.TriageServer, Command: []string{"triage-tools"}}}}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			require.NoError(t, testsuite.Replay(f, opts, examples.All()...))
		})
	}
}
