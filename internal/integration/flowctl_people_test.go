package integration

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/internal/flowctl"
)

func TestFlowctlPeopleCommands(t *testing.T) {
	r := flowctlRun(t, "", "start", "ship", "--input", `{"version":"5.5.5"}`, "--id", "ctl-ship")
	require.Equal(t, 0, r.code, r.stderr)
	c := shared.client
	eventually(t, c, "ctl-ship", "input asked", waitingFor("input:release-notes"))

	r = flowctlRun(t, "", "show", "ctl-ship")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)^Status\s+awaiting_input$`, r.stdout)
	assert.Contains(t, r.stdout, sharedHint("flowctl input ctl-ship release-notes --data"))

	r = flowctlRun(t, "", "input", "ctl-ship", "release-notes", "--as", "alice", "--data", `{"summary":"x","risk":"low"}`)
	assert.Equal(t, flowctl.ExitRefused, r.code)
	assert.Contains(t, r.stderr, "does not match the schema")
	assert.Contains(t, r.stderr, "at /summary")
	r = flowctlRun(t, "", "input", "ctl-ship", "release-notes", "--as", "alice", "--data", `{"summary":"A real summary","risk":"low"}`)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "Answer to release-notes accepted by run ctl-ship (as alice, unverified).\n", r.stdout)

	eventually(t, c, "ctl-ship", "approval asked", waitingFor("approval:ship"))
	require.Eventually(t, func() bool {
		r = flowctlRun(t, "", "approvals")
		return r.code == 0 && strings.Contains(r.stdout, "ctl-ship")
	}, 10*time.Second, 100*time.Millisecond, "approvals lists the gate: %s %s", r.stdout, r.stderr)
	assert.Regexp(t, `(?m)^ctl-ship\s+ship\s+0/2\s+group:release\s+-\s+`, r.stdout, "nobody has voted yet")
	r = flowctlRun(t, "", "approvals", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var gates []runs.PendingGate
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &gates))
	found := false
	for _, g := range gates {
		if g.Run == "ctl-ship" {
			found = true
			assert.Equal(t, 2, g.Required)
			assert.NotNil(t, g.Deadline)
		}
	}
	assert.True(t, found)

	r = flowctlRun(t, "", "approve", "ctl-ship", "ship", "--as", "mallory")
	assert.Equal(t, flowctl.ExitRefused, r.code)
	assert.Contains(t, r.stderr, "mallory may not decide")
	r = flowctlRun(t, "", "request-changes", "ctl-ship", "ship", "--as", "bob")
	assert.Equal(t, flowctl.ExitUsage, r.code)
	assert.Contains(t, r.stderr, "needs --comment")
	r = flowctlRun(t, "", "approve", "ctl-ship", "ship", "--as", "alice", "--comment", "looks good")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "Counted: gate ship has 1 of 2 approvals (as alice, unverified).\n", r.stdout)
	r = flowctlRun(t, "", "approvals")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)^ctl-ship\s+ship\s+1/2\s+group:release\s+alice approve\s+`, r.stdout, "approvals says who has voted")
	r = flowctlRun(t, "", "approve", "ctl-ship", "ship", "--as", "bob", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var res approval.VoteResult
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res))
	assert.Equal(t, approval.VoteStatus("approved"), res.Status)

	eventually(t, c, "ctl-ship", "deploy awaited", waitingFor("signal:deploy-done/5.5.5"))
	r = flowctlRun(t, "", "signal", "deploy-done", "--data", `{"environment":"prod"}`)
	assert.Equal(t, flowctl.ExitUsage, r.code)
	assert.Contains(t, r.stderr, "needs --run RUN or --key KEY")
	r = flowctlRun(t, "", "signal", "deploy-done", "--key", "5.5.5", "--id", "deploy-5.5.5", "--data", `{"environment":"prod"}`)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `^Signal deploy-done \(id deploy-5\.5\.5\) sent to every run waiting on key 5\.5\.5 on task queue integration \(as \S+, unverified\)\.\n$`, r.stdout)
	d, err := c.Wait(ctxT(t, time.Minute), "ctl-ship")
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, d.Status, d.Error)

	r = flowctlRun(t, "", "approve", "ctl-ship", "ship", "--as", "carol")
	assert.Equal(t, flowctl.ExitRefused, r.code, "%s", r.stderr)
	assert.Contains(t, r.stderr, "the run has ended (Completed)")
	r = flowctlRun(t, "", "approve", "no-such-run", "ship")
	assert.Equal(t, flowctl.ExitNotFound, r.code, r.stderr)
}
