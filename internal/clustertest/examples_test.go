//go:build cluster

package clustertest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ctl "github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/runs"
)

// The example flows flow-worker serves run to completion on the cluster, started,
// answered, approved and signalled with flowctl, two workers sharing the queue.
func TestClusterExampleFlows(t *testing.T) {
	const queue = "cluster-examples"
	start := time.Now()
	startWorker(t, "e1", queue)
	startWorker(t, "e2", queue)
	var ids []string
	terminateOnFailure(t, &ids)

	wait := func(args ...string) runs.Description {
		t.Helper()
		r := flowctl(t, queue, append(append([]string{"start"}, args...), "--wait", "-o", "json")...)
		require.Equal(t, 0, r.code, "flowctl start %v: %s%s", args, r.stdout, r.stderr)
		var d runs.Description
		require.NoError(t, ctl.DecodeJSON([]byte(r.stdout), &d), r.stdout)
		return d
	}

	ids = append(ids, "ex-hello")
	d := wait("hello", "--id", "ex-hello", "--input", `{"name":"cluster"}`)
	assert.Equal(t, runs.StatusCompleted, d.Status)
	assert.JSONEq(t, `{"greeting":"Hello, cluster!","shouted":"HELLO, CLUSTER!"}`, string(d.Result))

	ids = append(ids, "ex-release")
	d = wait("release", "--id", "ex-release", "--input", `{"version":"9.9.9"}`)
	assert.Equal(t, runs.StatusCompleted, d.Status)
	var rel struct {
		Version string `json:"version"`
		Review  string `json:"review"`
		Smoke   any    `json:"smoke"`
	}
	require.NoError(t, json.Unmarshal(d.Result, &rel))
	assert.Equal(t, "9.9.9", rel.Version)
	assert.NotEmpty(t, rel.Review, "the scripted agent answered the review")
	assert.NotNil(t, rel.Smoke, "the smoke child run completed")

	ids = append(ids, "ex-incident")
	d = wait("--file", "../../examples/flows/incident.yaml", "--id", "ex-incident",
		"--input", `{"alert":{"name":"disk-full","host":"db-1"},"service":"db"}`)
	assert.Equal(t, runs.StatusCompleted, d.Status)
	assert.Contains(t, string(d.Result), "filed a ticket for db")

	// ship: release notes, two approvals, the deploy's keyed signal.
	ids = append(ids, "ex-ship")
	r := flowctl(t, queue, "start", "ship", "--id", "ex-ship", "--input", `{"version":"7.7.7"}`)
	require.Equal(t, 0, r.code, r.stderr)
	waitFor(t, queue, "ex-ship", "the release notes asked", time.Minute, hasStatus(runs.StatusAwaitingInput))
	r = flowctl(t, queue, "input", "ex-ship", "release-notes", "--as", "alice", "--data", `{"summary":"Cluster tested release","risk":"low"}`)
	require.Equal(t, 0, r.code, r.stderr)
	waitFor(t, queue, "ex-ship", "the approval asked", time.Minute, hasStatus(runs.StatusAwaitingApproval))
	r = flowctl(t, queue, "approve", "ex-ship", "ship", "--as", "alice")
	require.Equal(t, 0, r.code, r.stderr)
	assert.True(t, strings.HasPrefix(r.stdout, "Counted: gate ship has 1 of 2 approvals"), r.stdout)
	r = flowctl(t, queue, "approve", "ex-ship", "ship", "--as", "bob")
	require.Equal(t, 0, r.code, r.stderr)
	waitFor(t, queue, "ex-ship", "the deploy awaited", time.Minute, hasStatus(runs.StatusWaitingSignal))
	r = flowctl(t, queue, "signal", "deploy-done", "--key", "7.7.7", "--data", `{"environment":"prod","url":"https://example.test"}`)
	require.Equal(t, 0, r.code, r.stderr)
	d = *waitFor(t, queue, "ex-ship", "completed", time.Minute, hasStatus(runs.StatusCompleted))
	var ship struct {
		Rounds   int `json:"rounds"`
		Deployed struct {
			Environment string `json:"environment"`
		} `json:"deployed"`
	}
	require.NoError(t, json.Unmarshal(d.Result, &ship))
	assert.Equal(t, 1, ship.Rounds)
	assert.Equal(t, "prod", ship.Deployed.Environment)

	// rollout: a fan-out over three regions and a sign-off.
	ids = append(ids, "ex-rollout")
	r = flowctl(t, queue, "start", "rollout", "--id", "ex-rollout", "--input", `{"version":"8.8.8"}`)
	require.Equal(t, 0, r.code, r.stderr)
	waitFor(t, queue, "ex-rollout", "the sign-off asked", time.Minute, func(d *runs.Description) bool {
		return d.State != nil && strings.Contains(flowctl(t, queue, "approvals").stdout, "ex-rollout")
	})
	r = flowctl(t, queue, "approve", "ex-rollout", "sign-off", "--as", "carol")
	require.Equal(t, 0, r.code, r.stderr)
	d = *waitFor(t, queue, "ex-rollout", "completed", 2*time.Minute, hasStatus(runs.StatusCompleted))
	var ro struct {
		Regions []string `json:"regions"`
		SignOff string   `json:"sign_off"`
	}
	require.NoError(t, json.Unmarshal(d.Result, &ro))
	assert.Equal(t, []string{"eu healthy", "us healthy", "ap healthy"}, ro.Regions)
	assert.Equal(t, "approved", ro.SignOff)

	r = flowctl(t, queue, "list", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	for _, id := range ids {
		assert.Contains(t, r.stdout, `"id": "`+id+`"`, "flowctl list shows %s (visibility on PostgreSQL)", id)
	}
	report(t, "example flows: %d runs (hello, release with its smoke child, incident, ship, rollout) completed on the cluster in %s", len(ids), time.Since(start).Round(time.Millisecond))
}
