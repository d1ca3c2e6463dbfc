package integration

import (
	"encoding/json"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/runs"
)

// TestFlowctlTerminateQueryRerun: the run commands a Temporal user expects. rerun starts
// the same flow with the same input; query prints a Query's answer as JSON; terminate ends
// a run at once with the reason, and needs one.
func TestFlowctlTerminateQueryRerun(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	first := fmt.Sprintf("rerun-hello-%d", time.Now().UnixNano())
	r := flowctlRun(t, "", "start", "hello", "--input", `{"name":"Rerun"}`, "--id", first, "--wait")
	require.Equal(t, 0, r.code, r.stderr)
	r = flowctlRun(t, "", "rerun", first, "--id", first+"-again")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "Started hello run "+first+"-again with the input of "+first+"\n  flowctl show "+first+"-again\n", r.stdout)
	d, err := shared.client.Wait(ctx, first+"-again")
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, d.Status)
	assert.JSONEq(t, `{"greeting":"Hello, Rerun!","shouted":"HELLO, RERUN!"}`, string(d.Result), "the same input")
	r = flowctlRun(t, "", "rerun", "no-such-run")
	assert.Equal(t, flowctl.ExitNotFound, r.code, r.stderr)

	gate, err := shared.client.Start(ctx, "test.earlygate", nil, core.StartOptions{})
	require.NoError(t, err)
	eventually(t, shared.client, gate.ID, "waits", waitingFor("approval:gate"))
	r = flowctlRun(t, "", "query", gate.ID)
	require.Equal(t, 0, r.code, r.stderr)
	var st runs.State
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st), r.stdout)
	assert.Equal(t, runs.StatusAwaitingApproval, st.Status)
	r = flowctlRun(t, "", "query", gate.ID, "no-such-query")
	assert.NotEqual(t, 0, r.code)
	assert.Contains(t, r.stderr, "no-such-query")

	r = flowctlRun(t, "", "terminate", gate.ID)
	assert.Equal(t, flowctl.ExitUsage, r.code)
	assert.Contains(t, r.stderr, "terminate needs --reason")
	r = flowctlRun(t, "", "terminate", gate.ID, "--reason", "stuck")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `^Run `+regexp.QuoteMeta(gate.ID)+` terminated \(as \S+, unverified\)\.\n$`, r.stdout)
	assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, describeStatus(t, ctx, gate.ID))
	r = flowctlRun(t, "", "terminate", gate.ID, "--reason", "again")
	assert.Equal(t, flowctl.ExitRefused, r.code, "an ended run cannot be terminated: %s", r.stderr)
}
