package integration

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/runs"
)

// TestTerminatedRunListsNoWaits: a run terminated while it waits for an input is shown
// failed with why, and no longer as waiting (it listed its waits, and flowctl show printed
// the command that answers them). (Issue 17.)
func TestTerminatedRunListsNoWaits(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t, time.Minute)
	id := fmt.Sprintf("terminated-%d", time.Now().UnixNano())
	_, err := shared.client.Start(ctx, "ship", json.RawMessage(`{"version":"7.7.7"}`), core.StartOptions{ID: id})
	require.NoError(t, err)
	waitStatus(t, shared.client, id, runs.StatusAwaitingInput)
	require.NoError(t, shared.tc.TerminateWorkflow(ctx, id, "", "operator stopped it"))

	d, err := shared.client.Describe(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusFailed, d.Status)
	assert.Equal(t, "Terminated", d.TemporalStatus)
	require.NotNil(t, d.State, "the state is still read (%s)", d.StateError)
	assert.Empty(t, d.State.Waiting)
	assert.Equal(t, runs.StatusFailed, d.State.Status)
	assert.Contains(t, d.State.Error, "closed by Temporal")
	require.Len(t, d.State.Steps, 1)
	assert.Equal(t, runs.StepCancelled, d.State.Steps[0].Status, "the input step no longer runs")

	r := flowctlRun(t, "", "show", id)
	require.Equal(t, 0, r.code, "%s %s", r.stdout, r.stderr)
	assert.Regexp(t, `(?m)^Status\s+failed$`, r.stdout)
	assert.NotContains(t, r.stdout, "Waiting")
	assert.NotContains(t, r.stdout, "flowctl input")
}
