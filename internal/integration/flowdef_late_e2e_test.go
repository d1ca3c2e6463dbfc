package integration

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	ctl "github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/internal/proc"
	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The flow-worker binary with --flows DIR serves a file added to DIR while it runs: the
// flowctl binary starts it by its name, with no restart of the worker.
func TestEndToEndWorkerServesAnAddedDefinition(t *testing.T) {
	t.Parallel()
	workerBin, ctlBin := binaries(t)
	queue := lateQueue("e2e-added")
	dir := t.TempDir()
	writeDef(t, filepath.Join(dir, "gated.yaml"), "1", "one")
	env := append(os.Environ(),
		"TEMPORAL_ADDRESS="+shared.srv.FrontendAddress(),
		"TEMPORAL_NAMESPACE="+shared.srv.Namespace(),
		"TEMPORAL_TASK_QUEUE="+queue)
	worker := exec.Command(workerBin, "--task-queue", queue, "--flows", dir, "--reload-interval", "100ms", "--stop-timeout", "5s")
	worker.Env = env
	stdout, err := worker.StdoutPipe()
	require.NoError(t, err)
	logs := &proc.Buffer{}
	worker.Stderr = logs
	require.NoError(t, worker.Start())
	t.Cleanup(func() { _ = worker.Process.Kill(); _ = worker.Wait() })
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "flow-worker: ready") {
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		t.Fatalf("flow-worker not ready: %s", logs.String())
	}

	path := filepath.Join(dir, "greet.yaml")
	require.NoError(t, os.WriteFile(path, []byte(lateGreet), 0o644))
	flowctl := func(args ...string) (string, error) {
		cmd := exec.Command(ctlBin, args...)
		cmd.Env = env
		out, err := cmd.Output()
		return string(out), err
	}
	waitFor(t, "the added definition in flowctl flows", func() bool {
		out, err := flowctl("flows")
		return err == nil && strings.Contains(out, path)
	})
	// The loader logs the addition once the worker published it.
	waitFor(t, "the worker's log of the addition", func() bool {
		return strings.Contains(logs.String(), `msg="flow definitions: added" definition=late-greet file=`+path)
	})
	assert.NotContains(t, logs.String(), "restart")

	out, err := flowctl("start", "late-greet", "--input", `{"who":"e2e"}`, "--wait", "-o", "json")
	require.NoError(t, err, out)
	var d runs.Description
	require.NoError(t, ctl.DecodeJSON([]byte(out), &d))
	assert.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.Equal(t, "late-greet", d.Workflow)
	assert.Equal(t, queue, d.TaskQueue)
	assert.JSONEq(t, `{"said":"hello e2e"}`, string(d.Result))

	require.NoError(t, worker.Process.Signal(syscall.SIGINT))
}
