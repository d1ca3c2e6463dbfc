package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFlowctlStartFileRefusesBoundsAndBombs: flowctl start --file refuses, exit 2 and
// nothing started, a loop bound over the worker's steps guard (issue 31, item 10), a
// billion-laughs file and a file over the size limit (item 4), each naming the limit.
func TestFlowctlStartFileRefusesBoundsAndBombs(t *testing.T) {
	const queue = "flowdef-startfile-refused"
	serveWorker(t, queue, "")
	dir := t.TempDir()
	loop := filepath.Join(dir, "loop.yaml")
	require.NoError(t, os.WriteFile(loop, []byte("name: adhoc-loop\nsteps:\n  - {id: l, loop: {while: 'true', max_iterations: 1000000000, steps: [{id: s, set: {x: 1}}]}}\n"), 0o644))
	bomb, huge := writeMemoryBombs(t, dir, "adhoc-lol")

	for _, tt := range []struct{ file, id, want string }{
		{loop, "adhoc-refused-loop", loop + ":3:51: loop 'l': max_iterations is 1000000000, over the limit of 10000 (the worker's steps guard)"},
		{bomb, "adhoc-refused-lol", bomb + ":8:40: aliases expand to more than 10000 nodes (the limit, flowdef.MaxAliasNodes)"},
		{huge, "adhoc-refused-huge", huge + ":1:1: the file is larger than the limit of 1048576 bytes (1 MiB, flowdef.MaxFileSize)"},
	} {
		r := flowctlRunOn(t, queue, "start", "--file", tt.file, "--id", tt.id)
		assert.Equal(t, 2, r.code, r.stdout+r.stderr)
		assert.Contains(t, r.stderr, tt.want)
		assert.Contains(t, r.stderr, "flowctl: "+tt.file+": 1 error, not started")
		_, err := shared.tc.DescribeWorkflowExecution(ctxT(t, time.Minute), tt.id, "")
		assert.Error(t, err, "no run %s was started", tt.id)
	}
}

// writeMemoryBombs writes into dir a billion-laughs definition named name (lol.yaml: ten
// aliases per level, nine levels, 10^9 nodes expanded) and a sparse 4 GiB file
// (huge.yaml), which no reader may read whole; it returns their paths.
func writeMemoryBombs(t *testing.T, dir, name string) (bomb, huge string) {
	t.Helper()
	var lol strings.Builder
	fmt.Fprintf(&lol, "name: %s\nsteps: [{id: a, set: {x: 1}}]\nvars:\n  l0: &l0 lol\n", name)
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&lol, "  l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d,", i-1), 10), ","))
	}
	bomb = filepath.Join(dir, "lol.yaml")
	require.NoError(t, os.WriteFile(bomb, []byte(lol.String()), 0o644))
	huge = filepath.Join(dir, "huge.yaml")
	f, err := os.Create(huge)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(1<<32)) // 4 GiB, sparse
	require.NoError(t, f.Close())
	return bomb, huge
}
