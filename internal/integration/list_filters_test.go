package integration

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/examples"
)

func TestListFiltersAndPages(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	c := shared.client
	var ids []string
	for i := 0; i < 3; i++ {
		run, err := c.Start(ctx, "hello", nil, core.StartOptions{Labels: map[string]string{"suite": "list-filters"}, CreatedBy: "lister"})
		require.NoError(t, err)
		ids = append(ids, run.ID)
		_, err = c.Wait(ctx, run.ID)
		require.NoError(t, err)
	}
	gate, err := c.Start(ctx, "test.earlygate", nil, core.StartOptions{CreatedBy: "lister"})
	require.NoError(t, err)
	eventually(t, c, gate.ID, "waits", waitingFor("approval:gate"))

	var r result
	require.Eventually(t, func() bool {
		r = flowctlRun(t, "", "list", "--label", "suite=list-filters", "-o", "json")
		var found []runs.Summary
		return r.code == 0 && json.Unmarshal([]byte(r.stdout), &found) == nil && len(found) == 3
	}, 10*time.Second, 100*time.Millisecond, "three labelled runs: %s %s", r.stdout, r.stderr)

	r = flowctlRun(t, "", "list", "--label", "suite=list-filters", "--limit", "2")
	require.Equal(t, 0, r.code, r.stderr)
	require.True(t, strings.HasPrefix(r.stderr, "more: flowctl list --page "), r.stderr)
	page := strings.TrimSpace(strings.TrimPrefix(r.stderr, "more: flowctl list --page "))
	r2 := flowctlRun(t, "", "list", "--label", "suite=list-filters", "--limit", "2", "--page", page, "-o", "json")
	require.Equal(t, 0, r2.code, r2.stderr)
	var rest []runs.Summary
	require.NoError(t, json.Unmarshal([]byte(r2.stdout), &rest))
	require.Len(t, rest, 1, "the second page has the third run")
	assert.NotContains(t, r.stdout, rest[0].ID)

	r = flowctlRun(t, "", "list", "--created-by", "lister", "--waiting-for", "approval:gate", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var waiting []runs.Summary
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &waiting))
	require.Len(t, waiting, 1)
	assert.Equal(t, gate.ID, waiting[0].ID)

	t.Setenv("FLOW_USER", "alice")
	r = flowctlRun(t, "", "list", "--waiting-on-me", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, gate.ID, "alice may decide the gate")
	t.Setenv("FLOW_USER", "mallory")
	r = flowctlRun(t, "", "list", "--waiting-on-me", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stdout, gate.ID)
	require.NoError(t, shared.tc.TerminateWorkflow(ctx, gate.ID, "", "done"))
}

// TestWaitingOnMeResolvesGroupsThroughTheWorker: a gate open to group:release shows in
// `list --waiting-on-me` for its members only, and not for a member who has voted.
func TestWaitingOnMeResolvesGroupsThroughTheWorker(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	c := shared.client
	run, err := c.Start(ctx, "ship", examples.ShipInput{Version: "8.8.8"}, core.StartOptions{})
	require.NoError(t, err)
	eventually(t, c, run.ID, "input", waitingFor("input:release-notes"))
	r := flowctlRun(t, "", "input", run.ID, "release-notes", "--as", "carol", "--data", `{"summary":"groups resolved by the worker","risk":"low"}`)
	require.Equal(t, 0, r.code, r.stderr)
	eventually(t, c, run.ID, "approval", waitingFor("approval:ship"))

	listed := func(who string) bool {
		t.Helper()
		t.Setenv("FLOW_USER", who)
		r := flowctlRun(t, "", "list", "--waiting-on-me", "-o", "json")
		require.Equal(t, 0, r.code, r.stderr)
		return strings.Contains(r.stdout, run.ID)
	}
	assert.True(t, listed("alice"), "alice is in group:release")
	assert.False(t, listed("mallory"), "mallory is not in group:release")
	r = flowctlRun(t, "", "approve", run.ID, "ship", "--as", "bob")
	require.Equal(t, 0, r.code, r.stderr)
	assert.False(t, listed("bob"), "bob has voted")
	assert.True(t, listed("alice"), "alice has not")
	require.NoError(t, shared.tc.TerminateWorkflow(ctx, run.ID, "", "done"))
}
