package integration

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/runs"
)

// TestFlowctlSignalWithARepeatedIDSaysDuplicate: a signal whose ID the run has received
// already is reported as a duplicate and not sent again, not as "sent".
func TestFlowctlSignalWithARepeatedIDSaysDuplicate(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	c := shared.client
	run, err := c.Start(ctx, "test.pings", nil, core.StartOptions{})
	require.NoError(t, err)
	eventually(t, c, run.ID, "waits for ping", waitingFor("signal:ping"))

	r := flowctlRun(t, "", "signal", "ping", "--run", run.ID, "--id", "p-1", "--data", `{"n":1}`)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "Signal ping (id p-1) sent to run "+run.ID)
	require.Eventually(t, func() bool {
		d, err := c.Describe(ctx, run.ID)
		return err == nil && d.State != nil && len(d.State.SignalWaits) > 0 && d.State.SignalWaits[0].Received != nil
	}, 30*time.Second, 100*time.Millisecond, "the run received it")

	r = flowctlRun(t, "", "signal", "ping", "--run", run.ID, "--id", "p-1", "--data", `{"n":1}`)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "Duplicate: run "+run.ID+" has received signal ping with id p-1 already")
	assert.NotContains(t, r.stdout, "sent to")
	r = flowctlRun(t, "", "signal", "ping", "--run", run.ID, "--id", "p-1", "--data", `{"n":1}`, "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var dup struct {
		ID        string `json:"id"`
		Duplicate bool   `json:"duplicate"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &dup), r.stdout)
	assert.Equal(t, "p-1", dup.ID)
	assert.True(t, dup.Duplicate)

	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.JSONEq(t, `[1]`, string(d.Result), "the ping counted once")
}

// TestFlowctlKeyedSignalWithARepeatedIDSaysDuplicate: a keyed signal whose ID a mailbox
// keeps already is reported as a duplicate and not posted again.
func TestFlowctlKeyedSignalWithARepeatedIDSaysDuplicate(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	r := flowctlRun(t, "", "signal", "go", "--key", "dup-k", "--id", "k-1", "--data", `{"n":7}`)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "Signal go (id k-1) sent to every run waiting on key dup-k")
	require.Eventually(t, func() bool {
		r = flowctlRun(t, "", "signal", "go", "--key", "dup-k", "--id", "k-1", "--data", `{"n":7}`)
		return r.code == 0 && strings.Contains(r.stdout, "Duplicate: the mailbox of key dup-k on task queue integration keeps signal go with id k-1 already")
	}, 20*time.Second, 200*time.Millisecond, "the repeat is a duplicate: %s %s", r.stdout, r.stderr)

	run, err := shared.client.Start(ctx, "test.keyed", map[string]string{"key": "dup-k"}, core.StartOptions{})
	require.NoError(t, err)
	d, err := shared.client.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.JSONEq(t, `{"n":7}`, string(d.Result), "the run got the kept signal")
}
