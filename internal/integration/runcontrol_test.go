package integration

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/internal/integration/testflows"
)

func TestStartOptionValidationErrorsStartNothing(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	neg := decimal.RequireFromString("-1")
	cases := []struct {
		opts core.StartOptions
		want string
	}{
		{core.StartOptions{ID: "both", IdempotencyKey: "k"}, "give a run ID or an idempotency key, not both"},
		{core.StartOptions{ID: "bad-prio", Priority: 9}, "priority 9: want 1 (highest) to 5 (lowest)"},
		{core.StartOptions{ID: "bad-label", Labels: map[string]string{"Team": "web"}}, `label "Team": keys are 1-63 lower-case`},
		{core.StartOptions{ID: "bad-tag", WorkerTags: []string{"GPU"}}, `tag "GPU": want 1-63 lower-case`},
		{core.StartOptions{ID: "bad-limit", ConcurrencyLimits: map[string]int{"builders": 0}}, "concurrency limit builders=0: want at least 1"},
		{core.StartOptions{ID: "bad-key", ConcurrencyKey: "Prod Deploy"}, `concurrency key "Prod Deploy"`},
		{core.StartOptions{ID: "bad-delay", Delay: -time.Second}, "delay -1s is negative"},
		{core.StartOptions{ID: "bad-start", StartAt: time.Now().Add(-time.Hour)}, "is in the past"},
		{core.StartOptions{ID: "bad-cost", MaxCostUSD: &neg}, "max cost -1 is negative"},
		{core.StartOptions{ID: "bad-attempts", MaxAttempts: 1000}, "max attempts 1000: want 1 to 100"},
	}
	for _, tc := range cases {
		_, err := shared.client.Start(ctx, "hello", nil, tc.opts)
		var ie *core.InputError
		require.True(t, errors.As(err, &ie), "%s: %v", tc.want, err)
		assert.Contains(t, err.Error(), tc.want)
		if tc.opts.ID != "" {
			_, derr := shared.client.Describe(ctx, tc.opts.ID)
			var nf *flowclient.RunNotFoundError
			assert.True(t, errors.As(derr, &nf), "%s started nothing", tc.opts.ID)
		}
	}
}

func TestIdempotencyKeyReturnsTheExistingRun(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	c := shared.client
	first, err := c.Start(ctx, "hello", examples.HelloInput{Name: "once"}, core.StartOptions{IdempotencyKey: "deploy-42"})
	require.NoError(t, err)
	assert.False(t, first.Existing)
	second, err := c.Start(ctx, "hello", examples.HelloInput{Name: "twice"}, core.StartOptions{IdempotencyKey: "deploy-42"})
	require.NoError(t, err)
	assert.True(t, second.Existing)
	assert.Equal(t, first.ID, second.ID)
	assert.Equal(t, first.RunID, second.RunID)
	_, err = c.Wait(ctx, first.ID)
	require.NoError(t, err)
	third, err := c.Start(ctx, "hello", nil, core.StartOptions{IdempotencyKey: "deploy-42"})
	require.NoError(t, err, "also once the run has ended")
	assert.True(t, third.Existing)
	assert.Equal(t, first.RunID, third.RunID)

	r := flowctlRun(t, "", "start", "hello", "--idempotency-key", "deploy-42")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "Found the existing hello run "+first.ID)
}

func TestLabelsPriorityDelayAndAttemptsAreApplied(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	c := shared.client
	run, err := c.Start(ctx, "hello", nil, core.StartOptions{Labels: map[string]string{"team": "web"}, Priority: 1, Delay: 2 * time.Second})
	require.NoError(t, err)
	d, err := c.Describe(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusPending, d.Status, "held until its start delay passes")
	d, err = c.Wait(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, d.Status)
	assert.GreaterOrEqual(t, d.CloseTime.Sub(d.StartTime), 2*time.Second)
	require.Eventually(t, func() bool {
		found, err := c.List(ctx, flowclient.ListOptions{Workflow: "hello", Limit: 200})
		if err != nil {
			return false
		}
		for _, r := range found {
			if r.ID == run.ID {
				return true
			}
		}
		return false
	}, 10*time.Second, 100*time.Millisecond)
	resp, err := shared.tc.ListWorkflow(ctx, listRequest(`FlowLabels = 'team=web' AND FlowPriority = 1`))
	require.NoError(t, err)
	require.Len(t, resp.GetExecutions(), 1)
	assert.Equal(t, run.ID, resp.GetExecutions()[0].GetExecution().GetWorkflowId())

	dd := runWith(t, "test.attempts", testflows.FileInput{File: filepath.Join(t.TempDir(), "f")}, core.StartOptions{MaxAttempts: 1})
	assert.Equal(t, 1, dd.State.MaxAttempts, "the start option overrides the flow's 3")
	assert.Equal(t, 1, dd.State.Attempt)
}

func TestCancelCascadesToTheChildRunsOnErrorOnceAndKeepsTheReason(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	c := shared.client
	run, err := c.Start(ctx, "test.cancel.parent", testflows.FileInput{File: filepath.Join(t.TempDir(), "log")}, core.StartOptions{})
	require.NoError(t, err)
	d := eventually(t, c, run.ID, "the child waits", func(d *runs.Description) bool {
		s := d.State.Steps
		return len(s) > 0 && s[len(s)-1].Child != nil && s[len(s)-1].Child.RunID != ""
	})
	childID := d.State.Steps[len(d.State.Steps)-1].Child.ID
	eventually(t, c, childID, "the child waits", waitingFor("approval:never"))
	r := flowctlRun(t, "", "cancel", run.ID, "--reason", "wrong branch", "--as", "alice")
	require.Equal(t, 0, r.code, r.stderr)
	d, err = c.Wait(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCancelled, d.Status)
	assert.Equal(t, "cancelled by alice: wrong branch", d.State.Error)
	cleanups := 0
	for _, s := range d.State.Steps {
		if s.OnError {
			cleanups++
		}
	}
	assert.Equal(t, 1, cleanups, "OnError ran once")
	cd, err := c.Wait(ctx, childID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCancelled, cd.Status, "the child was cancelled with its parent")

	r = flowctlRun(t, "", "cancel", run.ID)
	assert.Equal(t, flowctl.ExitRefused, r.code)
	assert.Contains(t, r.stderr, "the run has ended")
}

func TestPlanListsEveryStepOfReleaseWithoutRunningAny(t *testing.T) {
	before := shared.llm.scripted.Calls()
	r := flowctlRun(t, "", "plan", "release", "--input", `{"version":"9.0.0","health_url":"http://127.0.0.1:1/none"}`)
	require.Equal(t, 0, r.code, r.stderr)
	for _, want := range []string{"build", "checks/unit", "checks/lint", "health", "review", "smoke", "reserves $0.25", "GET http://127.0.0.1:1/none", "$ echo \"compiling app $VERSION\""} {
		assert.Contains(t, r.stdout, want)
	}
	assert.Equal(t, 0, shared.llm.scripted.Calls()-before, "the agent was not called")
	r = flowctlRun(t, "", "plan", "release", "--input", `{"version":"9.0.0"}`, "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	for _, name := range []string{`"build"`, `"unit"`, `"lint"`, `"review"`, `"smoke"`} {
		assert.Contains(t, r.stdout, name)
	}
	assert.Equal(t, 0, strings.Count(r.stdout, `"status": "completed"`), "no step ran")
	found, err := shared.client.List(ctxT(t, 10*time.Second), flowclient.ListOptions{Limit: 1000})
	require.NoError(t, err)
	for _, run := range found {
		assert.False(t, strings.HasPrefix(run.ID, "plan-"), "plans are not listed as runs")
	}
}
