package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// procKB reads a VmRSS or VmHWM line (kB) of /proc/<pid>/status.
func procKB(t *testing.T, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			require.NoError(t, err, line)
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// TestEndToEndWorkerRefusesMemoryBombs: a billion-laughs file and a 4 GiB file dropped
// into the directory a flow-worker serves are logged with their limit and not served;
// the good definition stays served and the worker's peak memory stays within a few tens
// of megabytes of what it was (issue 31, item 4: it grew by gigabytes).
func TestEndToEndWorkerRefusesMemoryBombs(t *testing.T) {
	t.Parallel()
	workerBin, _ := binaries(t)
	queue := lateQueue("e2e-bombs")
	dir := t.TempDir()
	writeDef(t, filepath.Join(dir, "gated.yaml"), "1", "one")
	worker := exec.Command(workerBin, "--task-queue", queue, "--flows", dir, "--reload-interval", "100ms", "--stop-timeout", "5s")
	worker.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+shared.srv.FrontendAddress(),
		"TEMPORAL_NAMESPACE="+shared.srv.Namespace(), "TEMPORAL_TASK_QUEUE="+queue)
	_, logs, _ := startWorkerProcess(t, worker)
	pid := worker.Process.Pid
	before := procKB(t, pid, "VmRSS")

	bomb, huge := writeMemoryBombs(t, dir, "lol")

	waitFor(t, "the refusals in the worker's log", func() bool {
		s := logs.String()
		return strings.Contains(s, bomb+":8:40: aliases expand to more than 10000 nodes (the limit, flowdef.MaxAliasNodes)") &&
			strings.Contains(s, huge+":1:1: the file is larger than the limit of 1048576 bytes (1 MiB, flowdef.MaxFileSize)")
	})
	require.NoError(t, os.Remove(bomb))
	writeDef(t, filepath.Join(dir, "gated.yaml"), "2", "two")
	waitFor(t, "the next edit served", func() bool {
		return strings.Contains(logs.String(), `msg="flow definitions: reloaded" definition=serve-gated`)
	})
	peak := procKB(t, pid, "VmHWM")
	assert.Less(t, peak-before, int64(150<<10), "the worker's peak RSS grew from %d kB to %d kB", before, peak)
	assert.NotContains(t, logs.String(), "definition=lol", "the bomb is never served")
	require.NoError(t, worker.Process.Signal(syscall.SIGINT))
}
