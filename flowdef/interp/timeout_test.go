package interp_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A node's timeout stops its shell step (the command is killed), and its on_timeout
// routes that timeout.
func TestNodeTimeoutStopsShellAndRoutesOnTimeout(t *testing.T) {
	start := time.Now()
	r := run(t, `
name: slow
steps:
  - {id: slow, uses: shell, with: {command: "sleep 10"}, timeout: 1s, retry: {max_attempts: 1}, on_timeout: goto late}
  - {id: done, finish: {output: {path: normal}}}
  - {id: late, finish: {output: {path: late, status: "${{ steps.slow.status }}"}}}
`, nil, nil)
	assert.Equal(t, map[string]any{"path": "late", "status": "timed_out"}, output(t, r))
	assert.Less(t, time.Since(start), 8*time.Second, "the 1s timeout kills the 10s command")
}
