package integration

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/signals"
)

// The commands not covered elsewhere, in JSON form.
func TestFlowctlCommandsInJSON(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	c := shared.client

	r := flowctlRun(t, "", "budget", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var lines []runs.SpendLine
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &lines))
	require.NotEmpty(t, lines)
	assert.Equal(t, "all", string(lines[0].Scope))

	run, err := c.Start(ctx, "ship", examples.ShipInput{Version: "6.6.6"}, core.StartOptions{})
	require.NoError(t, err)
	eventually(t, c, run.ID, "input", waitingFor("input:release-notes"))
	r = flowctlRun(t, "", "input", run.ID, "release-notes", "--as", "carol", "--data", `{"summary":"JSON all the way","risk":"low"}`, "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var ans signals.InputAnswer
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &ans))
	assert.Equal(t, "carol", ans.By)

	eventually(t, c, run.ID, "approval", waitingFor("approval:ship"))
	r = flowctlRun(t, "", "request-changes", run.ID, "ship", "--as", "bob", "--comment", "more", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var vote approval.VoteResult
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &vote))
	assert.Equal(t, approval.VoteStatus("changes_requested"), vote.Status)

	r = flowctlRun(t, "", "signal", "deploy-done", "--run", run.ID, "--id", "json-1", "--data", `{"environment":"qa"}`, "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var env signals.Envelope
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &env))
	assert.Equal(t, "json-1", env.ID)

	r = flowctlRun(t, "", "cancel", run.ID, "--reason", "json test", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var cancelled map[string]string
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &cancelled))
	assert.Equal(t, run.ID, cancelled["run"])
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCancelled, d.Status)

	r = flowctlRunOn(t, "json-pause", "pause", "hello", "-o", "json")
	assert.NotEqual(t, 0, r.code, "no worker serves queue json-pause: %s", r.stdout)
	r = flowctlRun(t, "", "pause", "smoke", "--reason", "json", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var paused map[string][]runs.PausedType
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &paused))
	require.Len(t, paused["paused"], 1)
	assert.Equal(t, "smoke", paused["paused"][0].Workflow)
	r = flowctlRun(t, "", "resume", "smoke", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &paused))
	assert.Empty(t, paused["paused"])
}
