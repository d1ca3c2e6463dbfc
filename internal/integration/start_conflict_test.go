package integration

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/runs"
)

// TestStartRefusesTheIDOfALiveRun: starting a run with the ID a live run (of another
// flow, or the same) holds is refused with RunExistsError and starts nothing; before, the
// SDK answered with the live run and flowctl printed "Started". (Issue 17.)
func TestStartRefusesTheIDOfALiveRun(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t, time.Minute)
	id := fmt.Sprintf("conflict-%d", time.Now().UnixNano())
	_, err := shared.client.Start(ctx, "ship", json.RawMessage(`{"version":"9.9.9"}`), core.StartOptions{ID: id})
	require.NoError(t, err)
	t.Cleanup(func() { _ = shared.tc.TerminateWorkflow(ctxT(t, 10*time.Second), id, "", "test done") })

	_, err = shared.client.Start(ctx, "hello", json.RawMessage(`{"name":"Ada"}`), core.StartOptions{ID: id})
	var exists *flowclient.RunExistsError
	require.True(t, errors.As(err, &exists), "want RunExistsError, got %v", err)
	assert.Equal(t, id, exists.ID)

	r := flowctlRun(t, "", "start", "hello", "--input", `{"name":"Ada"}`, "--id", id)
	assert.Equal(t, flowctl.ExitUsage, r.code, "stdout %s stderr %s", r.stdout, r.stderr)
	assert.NotContains(t, r.stdout, "Started")
	assert.Contains(t, r.stderr, id)

	d, err := shared.client.Describe(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, "ship", d.Workflow, "the live run is untouched")
	assert.NotEqual(t, runs.StatusCompleted, d.Status)
}
