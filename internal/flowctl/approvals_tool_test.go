package flowctl

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/runs"
)

// TestApprovalsTableShowsToolArguments: a tool call's gate shows its tool and its
// arguments (one line, truncated); without tool gates the table is as it was.
func TestApprovalsTableShowsToolArguments(t *testing.T) {
	long := `{"env":"prod","note":"` + strings.Repeat("x", 100) + `"}`
	gates := []runs.PendingGate{
		{Run: "r1", Gate: "ship", Required: 1, Message: "Ship?"},
		{Run: "r2", Gate: "triage/deploy", Required: 1, Message: "Run tool deploy?", Tool: "deploy", Arguments: json.RawMessage(long)},
	}
	var b bytes.Buffer
	require.NoError(t, approvalsTable(&b, gates))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 3)
	assert.Regexp(t, `^RUN +GATE +VOTES +WHO MAY DECIDE +VOTED +DEADLINE +TOOL +ARGUMENTS +MESSAGE$`, lines[0])
	assert.Regexp(t, `deploy +\{"env":"prod","note":"xxx+…`, lines[2])
	assert.NotContains(t, lines[2], strings.Repeat("x", 100), "the arguments are truncated in the table")
	assert.Regexp(t, `ship .* -  +- +Ship\?$`, lines[1])

	b.Reset()
	require.NoError(t, approvalsTable(&b, gates[:1]))
	assert.Regexp(t, `^RUN +GATE +VOTES +WHO MAY DECIDE +VOTED +DEADLINE +MESSAGE\n`, b.String())
}
