package flowctl

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestCompletionScripts(t *testing.T) {
	tests := []struct {
		shell string
		want  string
	}{
		{"bash", "__start_flowctl"},
		{"zsh", "#compdef flowctl"},
		{"fish", "complete -c flowctl"},
		{"powershell", "Register-ArgumentCompleter -CommandName 'flowctl'"},
	}
	for _, tt := range tests {
		t.Run(tt.shell, func(t *testing.T) {
			code, stdout, stderr := run(t, "", "completion", tt.shell)
			assert.Equal(t, ExitOK, code, stderr)
			assert.Empty(t, stderr)
			assert.Contains(t, stdout, "flowctl")
			assert.Contains(t, stdout, tt.want)

			code, plain, _ := run(t, "", "completion", tt.shell, "--no-descriptions")
			assert.Equal(t, ExitOK, code)
			assert.Contains(t, plain, "flowctl")
		})
	}
}

func TestCompletionUsage(t *testing.T) {
	code, stdout, stderr := run(t, "", "completion")
	assert.Equal(t, ExitUsage, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "flowctl: completion needs a shell: bash, zsh, fish, powershell (got 0 arguments)\n", stderr)
	code, _, stderr = run(t, "", "completion", "tcsh")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, `unknown shell "tcsh"`)
}

// The shell asks flowctl for completions through cobra's hidden __complete command.
func TestCompletionOfCommandsAndRuns(t *testing.T) {
	code, stdout, _ := run(t, "", "__complete", "wa")
	assert.Equal(t, ExitOK, code)
	assert.Contains(t, stdout, "watch\t")

	code, stdout, _ = run(t, "", "__complete", "completion", "")
	assert.Equal(t, ExitOK, code)
	for _, sh := range completionShells {
		assert.Contains(t, stdout, sh+"\n")
	}

	// Run IDs come from the server; an unreachable one completes nothing, quickly.
	start := time.Now()
	code, stdout, _ = run(t, "", "--address", closedAddress(t), "__complete", "watch", "")
	assert.Equal(t, ExitOK, code)
	assert.True(t, strings.HasPrefix(stdout, ":4\n"), "no suggestions, no file completion: %q", stdout)
	assert.Less(t, time.Since(start), 4*time.Second)
}
