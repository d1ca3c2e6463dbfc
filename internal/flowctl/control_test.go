package flowctl

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gateflow/gateflow/core"
)

func TestIsWorkflowType(t *testing.T) {
	cat := &core.Catalog{TaskQueue: "q", Workflows: []core.WorkflowInfo{{Name: "release"}, {Name: "hello"}}}
	tests := []struct {
		name string
		cat  *core.Catalog
		arg  string
		want bool
	}{
		{"a workflow type", cat, "release", true},
		{"a run ID", cat, "release-1a2b3c", false},
		{"case matters", cat, "Release", false},
		{"no catalog: a run", nil, "release", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, isWorkflowType(tt.cat, tt.arg))
		})
	}
}

func TestPauseAndResumeHelpSayWhichMeaningWins(t *testing.T) {
	for _, cmd := range []string{"pause", "resume"} {
		t.Run(cmd, func(t *testing.T) {
			code, stdout, _ := run(t, "", cmd, "--help")
			assert.Equal(t, ExitOK, code)
			assert.Contains(t, stdout, cmd+" WORKFLOW|RUN [--run]")
			assert.Contains(t, stdout, "means the workflow type; --run makes it mean the run")
			assert.Contains(t, stdout, "--run ")
		})
	}
}

// TestPauseUsageErrors are refused before flowctl dials (the address points nowhere, so a
// command that dialled would exit 4).
func TestPauseUsageErrors(t *testing.T) {
	addr := closedAddress(t)
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{"pause without argument", []string{"pause"}, "flowctl: pause needs WORKFLOW or RUN (got 0 arguments)"},
		{"resume without argument", []string{"resume", "--run"}, "flowctl: resume needs WORKFLOW or RUN (got 0 arguments)"},
		{"pause with two", []string{"pause", "a", "b"}, "flowctl: pause needs WORKFLOW or RUN (got 2 arguments)"},
		{"unknown flag", []string{"pause", "--bogus", "r"}, "flowctl: unknown flag: --bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := run(t, "", append([]string{"--address", addr, "--connect-timeout", "2s"}, tt.args...)...)
			assert.Equal(t, ExitUsage, code, stderr)
			assert.Contains(t, stderr, tt.wantStderr)
		})
	}
}
