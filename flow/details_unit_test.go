package flow

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
)

func TestDetailsMarkdownWithCostGroupsAllowedFailuresAndChildren(t *testing.T) {
	t0 := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { x := t0.Add(d); return &x }
	st := &runs.State{
		Workflow:    "release",
		Status:      runs.StatusWarning,
		Attempt:     2,
		MaxAttempts: 3,
		CostUSD:     dec("0.123456"),
		Tokens:      runs.Tokens{Input: 1200, Output: 34},
		Steps: []runs.Step{
			{Name: "review", Kind: runs.KindAgent, Status: runs.StepCompleted, Attempt: 1, StartedAt: t0, EndedAt: at(2 * time.Second),
				Output: "looks\ngood", CostUSD: dec("0.1"), Tokens: &runs.Tokens{Input: 1000, Output: 30}},
			{Name: "lint", Group: "checks", Kind: runs.KindShell, Status: runs.StepFailed, AllowedFailure: true, Attempt: 3,
				StartedAt: t0, EndedAt: at(1500 * time.Millisecond), Output: "ignored", Error: "exit code 1: style"},
			{Name: "unit", Group: "checks", Kind: runs.KindShell, Status: runs.StepCancelled, Attempt: 1,
				StartedAt: t0, EndedAt: at(time.Second), Error: "cancelled"},
			{Name: "smoke", Kind: runs.KindChild, Status: runs.StepCompleted, Attempt: 1, StartedAt: t0, EndedAt: at(time.Minute),
				Output: "rel/smoke completed", CostUSD: dec("0.023456"),
				Child: &runs.Child{ID: "rel/smoke", Status: runs.StatusCompleted, Steps: []runs.Step{
					{Name: "probe", Kind: runs.KindHTTP, Status: runs.StepCompleted, Attempt: 1, StartedAt: t0, EndedAt: at(time.Second), Output: "200 OK"},
					{Name: "deep", Kind: runs.KindChild, Status: runs.StepCompleted, Attempt: 1, StartedAt: t0, EndedAt: at(time.Second),
						CostUSD: dec("0.02"), Child: &runs.Child{ID: "rel/smoke/deep", Steps: []runs.Step{
							{Name: "think", Kind: runs.KindAgent, Status: runs.StepCompleted, Attempt: 1, StartedAt: t0, EndedAt: at(time.Second), CostUSD: dec("0.02")},
						}}},
				}}},
			{Name: "pause", Kind: runs.KindSleep, Status: runs.StepRunning, Attempt: 1, StartedAt: t0.Add(time.Minute)},
			{Name: "announce", Kind: runs.KindSkip, Status: runs.StepSkipped, Attempt: 1, StartedAt: t0, EndedAt: at(0), Output: "dry run"},
		},
	}
	want := "**release** — warning (attempt 2 of 3)\n\n" +
		"Cost **$0.1235** · 1234 tokens (1200 in, 34 out)\n\n" +
		"| step | kind | status | attempt | duration | cost | detail |\n" +
		"| --- | --- | --- | --- | --- | --- | --- |\n" +
		"| review | agent | completed | 1 | 2s | $0.1000 | looks good |\n" +
		"| checks/lint | shell | failed (allowed) | 3 | 1.5s | - | exit code 1: style |\n" +
		"| checks/unit | shell | cancelled | 1 | 1s | - | cancelled |\n" +
		"| smoke | child | completed | 1 | 1m0s | $0.0235 | rel/smoke completed |\n" +
		"| ↳ probe | http | completed | 1 | 1s | - | 200 OK |\n" +
		"| ↳ deep | child | completed | 1 | 1s | $0.0200 |  |\n" +
		"| ↳ ↳ think | agent | completed | 1 | 1s | $0.0200 |  |\n" +
		"| pause | sleep | running | 1 | 30s | - |  |\n" +
		"| announce | skip | skipped | 1 | 0s | - | dry run |\n"
	assert.Equal(t, want, detailsMarkdown(st, t0.Add(90*time.Second)))

	one := detailsMarkdown(&runs.State{Workflow: "w", Status: runs.StatusRunning, Attempt: 1, MaxAttempts: 1, CostUSD: dec("2")}, t0)
	assert.Equal(t, "**w** — running\n\nCost **$2.0000**\n\nNo steps yet.\n", one, "no attempt counter or tokens when there are none")
}

// TestDetailsMarkdownStaysBoundedAsTheRunGrows: the details list the newest
// maxDetailRows steps and count the rest, so what a run renders on each change does not
// grow with its length.
func TestDetailsMarkdownStaysBoundedAsTheRunGrows(t *testing.T) {
	t0 := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	run := func(k int) *runs.State {
		st := &runs.State{ID: "long-1", Workflow: "long", Status: runs.StatusRunning}
		for i := range k {
			end := t0.Add(time.Second)
			st.Steps = append(st.Steps, runs.Step{Name: fmt.Sprintf("step-%03d", i), Kind: runs.KindShell,
				Status: runs.StepCompleted, Attempt: 1, StartedAt: t0, EndedAt: &end, Output: "ok"})
		}
		return st
	}
	rows := func(md string) int { return strings.Count(md, "| step-") }
	short, long := detailsMarkdown(run(maxDetailRows), t0), detailsMarkdown(run(1000), t0)
	assert.Equal(t, maxDetailRows, rows(short))
	assert.NotContains(t, short, "earlier steps")
	assert.Equal(t, maxDetailRows, rows(long), "only the newest rows")
	assert.Contains(t, long, "| … 980 earlier steps (`flowctl show long-1` lists them all) |")
	assert.Contains(t, long, "| step-999 |")
	assert.NotContains(t, long, "| step-979 |")
	assert.Less(t, len(long), len(short)+100, "the same size at 1,000 steps as at %d", maxDetailRows)
}

func BenchmarkDetailsMarkdown(b *testing.B) {
	t0 := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	for _, k := range []int{5, 20, 100} {
		st := &runs.State{ID: "long-1", Workflow: "long", Status: runs.StatusRunning}
		for i := range k {
			end := t0.Add(time.Second)
			st.Steps = append(st.Steps, runs.Step{Name: fmt.Sprintf("step-%03d", i), Kind: runs.KindShell,
				Status: runs.StepCompleted, Attempt: 1, StartedAt: t0, EndedAt: &end, Output: "ok"})
		}
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = detailsMarkdown(st, t0)
			}
		})
	}
}
