package flow

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/runs"
)

// A run's details rendered with its cache are the details rendered from scratch, after
// every kind of change a step or the run goes through.
func TestDetailsCacheRendersWhatAFreshRenderingDoes(t *testing.T) {
	t0 := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	s := &runs.State{ID: "r-1", Workflow: "release", Status: runs.StatusRunning, Attempt: 1, MaxAttempts: 1}
	var cache detailsCache
	now := t0
	check := func(what string) {
		t.Helper()
		now = now.Add(1500 * time.Millisecond)
		require.Equal(t, renderDetails(s, now, "--namespace ops", nil), renderDetails(s, now, "--namespace ops", &cache), what)
	}
	check("no steps")
	for i := range 3 {
		beginStep(s, "", fmt.Sprintf("build-%d", i), runs.KindShell, now)
		check("a step running")
		endStep(s, len(s.Steps)-1, now.Add(time.Second), runs.StepCompleted, 1, "", "ok: built", nil)
		check("a step completed")
	}
	chargeStep(s, 1, dec("0.25"), runs.Tokens{Input: 10, Output: 2})
	check("an earlier step charged")
	chargeStep(s, 1, dec("0.25"), runs.Tokens{})
	check("charged again: cost 0.50")
	i := beginStep(s, "", "build-0", runs.KindShell, now)
	endStep(s, i, now, runs.StepFailed, 3, "exit code 2:\n  broken | pipe", "partial", nil)
	check("a repeated name failing after 3 attempts")
	limit, other := dec("0.1"), dec("0.2")
	// One field at a time, each shown in the row.
	for _, change := range []struct {
		what string
		do   func(st *runs.Step)
	}{
		{"allowed to fail", func(st *runs.Step) { st.AllowedFailure = true }},
		{"no longer allowed", func(st *runs.Step) { st.AllowedFailure = false }},
		{"routed", func(st *runs.Step) { st.Route = "goto build-0 (2 of 3)" }},
		{"on error", func(st *runs.Step) { st.OnError = true }},
		{"always", func(st *runs.Step) { st.Always = true }},
		{"cached", func(st *runs.Step) { st.Cached = true }},
		{"cache age", func(st *runs.Step) { st.CachedAgeMS = 90_000 }},
		{"grouped", func(st *runs.Step) { st.Group = "checks" }},
		{"attempt", func(st *runs.Step) { st.Attempt = 4 }},
		{"status", func(st *runs.Step) { st.Status = runs.StepTimedOut }},
		{"kind", func(st *runs.Step) { st.Kind = runs.KindAgent }},
		{"error text", func(st *runs.Step) { st.Error = "exit code 3" }},
		{"error cleared: the output shows", func(st *runs.Step) { st.Error = "" }},
		{"output replaced", func(st *runs.Step) { st.Output = "other output" }},
		{"a limit (not shown alone)", func(st *runs.Step) { st.CostLimitUSD = &limit }},
		{"cost", func(st *runs.Step) { st.CostUSD = dec("0.3") }},
		{"over its limit", func(st *runs.Step) { st.Overshoot = true }},
		{"another limit", func(st *runs.Step) { st.CostLimitUSD = &other }},
		{"started earlier", func(st *runs.Step) { st.StartedAt = st.StartedAt.Add(-time.Minute) }},
		{"ended later", func(st *runs.Step) { e := st.EndedAt.Add(time.Minute); st.EndedAt = &e }},
		{"renamed", func(st *runs.Step) { st.Name = "build-x" }},
	} {
		change.do(&s.Steps[i])
		check(change.what)
	}
	j := beginStep(s, "", "smoke", runs.KindChild, now)
	s.Steps[j].Child = &runs.Child{ID: "r-1/smoke", Steps: []runs.Step{{Name: "probe", Kind: runs.KindHTTP, Status: runs.StepRunning, Attempt: 1, StartedAt: now}}}
	endStep(s, j, now, runs.StepCompleted, 1, "", "", nil)
	check("a child")
	end := now.Add(time.Second)
	s.Steps[j].Child.Steps[0].Status, s.Steps[j].Child.Steps[0].EndedAt = runs.StepCompleted, &end
	check("the child's step ended under the same parent step")
	for k := range maxDetailRows + 5 {
		beginStep(s, "", fmt.Sprintf("many-%d", k), runs.KindActivity, now)
		check("long run, running")
		endStep(s, len(s.Steps)-1, now, runs.StepCompleted, 1, "", "", nil)
		check("long run, completed")
	}
	s.Status, s.Error = runs.StatusFailed, "boom"
	check("the run failed")
	s.Steps = s.Steps[:2]
	check("fewer steps (a new attempt's state)")
	s.Steps[1].Branch = "deploy/eu"
	check("a branch step: nested rows")
}

// Every field of runs.Step is either in rowKey (the table row shows it) or listed here as
// not shown in the row. A new field must be put on one side: in rowKey when
// writeStepRow shows it, or the cache would keep a stale row.
func TestRowKeyCoversEveryStepFieldTheRowShows(t *testing.T) {
	inKey := map[string]bool{"Name": true, "Group": true, "Branch": true, "Route": true, "Output": true, "Error": true,
		"Kind": true, "Status": true, "Attempt": true, "StartedAt": true, "EndedAt": true, "CostUSD": true,
		"CostLimitUSD": true, "AllowedFailure": true, "OnError": true, "Always": true, "Overshoot": true,
		"Cached": true, "CachedAgeMS": true,
		"Child": true, // a child step's row is never kept
	}
	notShown := map[string]bool{"ActivityID": true, "ExitCode": true, "RunAttempt": true, "DurationMS": true,
		"Tokens": true, "HTTPStatus": true, "Attempts": true, "UnconfirmedUSD": true, "Timeout": true,
		"Gate": true, "Quality": true, "Decision": true, "Artifacts": true}
	typ := reflect.TypeFor[runs.Step]()
	for f := range typ.Fields() {
		assert.True(t, inKey[f.Name] != notShown[f.Name], "runs.Step.%s: put it in rowKey (run_details_rows.go) if the details row shows it, or in notShown here", f.Name)
	}
}

// Publishing a step of a long run costs a few allocations, not a table's worth.
func TestPublishingALongRunsDetailsReusesItsRows(t *testing.T) {
	t0 := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	s := &runs.State{ID: "long-1", Workflow: "long", Status: runs.StatusRunning}
	for i := range 100 {
		beginStep(s, "", fmt.Sprintf("step-%d", i), runs.KindActivity, t0)
		endStep(s, i, t0.Add(time.Second), runs.StepCompleted, 1, "", "", nil)
	}
	var cache detailsCache
	_ = renderDetails(s, t0, "", &cache)
	allocs := testing.AllocsPerRun(20, func() { _ = renderDetails(s, t0, "", &cache) })
	assert.LessOrEqual(t, allocs, 3.0, "a rendering of 20 kept rows")
	fresh := testing.AllocsPerRun(20, func() { _ = renderDetails(s, t0, "", nil) })
	assert.Greater(t, fresh, allocs+10, "without the cache every row is rendered again (the test measures something)")
}

// A real run's published details, rendered with its cache on every change, are the
// details rendered from scratch from its final state: the table's last 20 rows and the
// line that counts the others.
func TestARunsPublishedDetailsAreAFreshRenderingOfItsState(t *testing.T) {
	env := newEnv(t)
	var in stepsInput
	for i := range maxDetailRows + 5 {
		in.Steps = append(in.Steps, testStep{Name: fmt.Sprintf("s%02d", i), Shell: activities.Shell{Command: fmt.Sprintf("echo out-%d", i)}})
	}
	in.Steps = append(in.Steps, testStep{Name: "s00", Shell: activities.Shell{Command: "echo again"}}) // a repeated name
	env.ExecuteWorkflow(stepsFlow.Name(), in)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	st := queryState(t, env)
	require.Len(t, st.Steps, maxDetailRows+6)
	got := currentDetails(t, env)
	assert.Equal(t, detailsMarkdown(&st, *st.EndedAt), got)
	assert.Contains(t, got, "| s24 | shell | completed | 1 |")
	assert.Contains(t, got, "| s00 | shell | completed | 1 |", "the repeated name's row")
	assert.Contains(t, got, "6 earlier steps")
}
