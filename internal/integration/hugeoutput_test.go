package integration

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/runs"
)

// hugeOutputBytes is what hugeOutputDef prints on stdout: 100 MB of "a".
const hugeOutputBytes = 100_000_000

// hugeOutputDef prints hugeOutputBytes on stdout and one line on stderr.
const hugeOutputDef = `name: test-hugeoutput
steps:
  - id: print
    uses: shell
    with:
      command: |
        head -c 100000000 /dev/zero | tr '\0' a
        echo the-last-stderr-line >&2
`

// TestHugeShellOutputCompletesWithoutFailedWorkflowTasks runs a shell step printing 100 MB
// on a flow-worker with a blob store: the run completes, no workflow task fails (the
// result the workflow reads is a bounded preview), the worker's memory stays far below
// the output's size, and the whole output is in the store, printed by flowctl logs.
func TestHugeShellOutputCompletesWithoutFailedWorkflowTasks(t *testing.T) {
	ctx := ctxT(t, 4*time.Minute)
	_, ctlBin := binaries(t)
	dir := t.TempDir()
	defs := filepath.Join(dir, "flows")
	require.NoError(t, os.MkdirAll(defs, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(defs, "huge.yaml"), []byte(hugeOutputDef), 0o644))
	blobDir := filepath.Join(dir, "blobs")
	blobURL := mustFileURL(t, blobDir)
	queue := fmt.Sprintf("hugeoutput-%d", time.Now().UnixNano())
	worker := startFlowWorker(t, queue, "--blob-url", blobURL, "--flows", defs, "--reload-interval", "0")
	rssReady := procStatusKiB(t, worker.Process.Pid, "VmRSS")

	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue, Identity: "tester"})
	run, err := c.Start(ctx, "test-hugeoutput", nil, core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, "%s %s", d.Error, d.StateError)
	peak := procStatusKiB(t, worker.Process.Pid, "VmHWM")

	// No workflow task failed (the SDK's deadlock detector, TMPRL1101, fails a task whose
	// workflow code runs for over a second).
	counts := map[enumspb.EventType]int{}
	it := shared.tc.GetWorkflowHistory(ctx, run.ID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		counts[e.GetEventType()]++
		if f := e.GetWorkflowTaskFailedEventAttributes(); f != nil {
			t.Logf("workflow task failed: %s", f.GetFailure().GetMessage())
		}
	}
	assert.Zero(t, counts[enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED], "failed workflow tasks")
	assert.Zero(t, counts[enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT], "timed-out workflow tasks")
	assert.Equal(t, 1, counts[enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED], "the step completed")

	// The worker never held the output: its peak resident memory grew far less than 100 MB.
	t.Logf("flow-worker memory: %d KiB when ready, peak %d KiB", rssReady, peak)
	assert.Less(t, peak-rssReady, int64(80<<10), "the worker's peak memory growth in KiB")

	// The history holds a bounded result.
	size, _ := historyPayloads(ctx, t, run.ID)
	assert.Less(t, size, 64<<10, "the payloads of the history")

	// The store holds the whole stdout in one blob.
	var whole []string
	require.NoError(t, filepath.WalkDir(blobDir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			if st, err := e.Info(); err == nil && st.Size() == hugeOutputBytes {
				whole = append(whole, p)
			}
		}
		return err
	}))
	require.Len(t, whole, 1, "one blob of the whole stdout in %s", blobDir)

	// flowctl logs prints it all, read from the store.
	var out, errb bytes.Buffer
	cmd := exec.Command(ctlBin, "--address", shared.srv.FrontendAddress(), "--namespace", shared.srv.Namespace(),
		"--task-queue", queue, "--blob-url", blobURL, "logs", run.ID, "print")
	cmd.Env = append(withoutEnv(os.Environ(), "GATEFLOW_BLOB_URL", "TEMPORAL_ADDRESS", "TEMPORAL_PROFILE", "TMPDIR"), "TMPDIR="+t.TempDir())
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Run(), errb.String())
	_, final, ok := strings.Cut(out.String(), "--- print shell completed after ")
	require.True(t, ok, "logs prints the ended step: %.2000q", out.String())
	_, final, ok = strings.Cut(final, "\n")
	require.True(t, ok)
	want := strings.Repeat("a", hugeOutputBytes) + "\nstderr| the-last-stderr-line\n"
	assert.Equal(t, len(want), len(final), "the length of the output")
	assert.Equal(t, sha256.Sum256([]byte(want)), sha256.Sum256([]byte(final)), "the SHA-256 of the output")
}

// procStatusKiB reads a "kB" field of /proc/PID/status (VmRSS, VmHWM).
func procStatusKiB(t *testing.T, pid int, field string) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			require.NoError(t, err, line)
			return n
		}
	}
	t.Fatalf("/proc/%d/status has no %s", pid, field)
	return 0
}
