package flow

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/gateflow/gateflow/runs"
)

func TestDetailsMarkdown(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	end1, end2 := t0.Add(1500*time.Millisecond), t0.Add(3*time.Second)
	st := &runs.State{
		Workflow: "release",
		Status:   runs.StatusFailed,
		Error:    "step deploy: exit | code `3`\nbad",
		Steps: []runs.Step{
			{Name: "build|all", Kind: runs.KindShell, Status: runs.StepCompleted, Attempt: 1, StartedAt: t0, EndedAt: &end1, Output: "a | b\n  c"},
			{Name: "deploy", Kind: runs.KindShell, Status: runs.StepFailed, Attempt: 2, StartedAt: end1, EndedAt: &end2, Output: "ignored", Error: "exit code 3: `no` | way"},
			{Name: "watch", Kind: runs.KindShell, Status: runs.StepRunning, Attempt: 1, StartedAt: end2, Output: strings.Repeat("x", 100)},
		},
	}
	want := "**release** — failed\n\nCost **$0.0000**\n\n" +
		"Error: `step deploy: exit \\| code '3' bad`\n\n" +
		"| step | kind | status | attempt | duration | cost | detail |\n" +
		"| --- | --- | --- | --- | --- | --- | --- |\n" +
		"| build\\|all | shell | completed | 1 | 1.5s | - | a \\| b c |\n" +
		"| deploy | shell | failed | 2 | 1.5s | - | exit code 3: 'no' \\| way |\n" +
		"| watch | shell | running | 1 | 7s | - | " + strings.Repeat("x", 79) + "… |\n"
	assert.Equal(t, want, detailsMarkdown(st, end2.Add(7*time.Second)))

	empty := detailsMarkdown(&runs.State{Workflow: "hello", Status: runs.StatusRunning}, t0)
	assert.Equal(t, "**hello** — running\n\nCost **$0.0000**\n\nNo steps yet.\n", empty)
}
