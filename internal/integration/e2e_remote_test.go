package integration

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Without --dev, flow-worker serves the example flows on the server named by
// TEMPORAL_ADDRESS and the queue given by --task-queue; flowctl finds it through the
// same environment variables.
func TestEndToEndWorkerConnectsToTemporalAddress(t *testing.T) {
	workerBin, ctlBin := binaries(t)
	env := append(os.Environ(),
		"TEMPORAL_ADDRESS="+shared.srv.FrontendAddress(),
		"TEMPORAL_NAMESPACE="+shared.srv.Namespace(),
		"TEMPORAL_TASK_QUEUE=remote-queue")
	worker := exec.Command(workerBin, "--task-queue", "remote-queue", "--stop-timeout", "5s")
	worker.Env = env
	stdout, err := worker.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	worker.Stderr = &stderr
	require.NoError(t, worker.Start())
	t.Cleanup(func() { _ = worker.Process.Kill(); _ = worker.Wait() })

	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var banner []string
	deadline := time.After(60 * time.Second)
wait:
	for {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "flow-worker exited early: %s", stderr.String())
			banner = append(banner, l)
			if strings.Contains(l, "flow-worker: ready") {
				break wait
			}
		case <-deadline:
			t.Fatalf("flow-worker not ready: %s", stderr.String())
		}
	}
	assert.Contains(t, strings.Join(banner, "\n"), "Temporal server  "+shared.srv.FrontendAddress())
	assert.Contains(t, strings.Join(banner, "\n"), "Task queue       remote-queue")

	cmd := exec.Command(ctlBin, "start", "hello", "--input", `{"name":"remote"}`, "--wait", "-o", "json")
	cmd.Env = env
	out, err := cmd.Output()
	require.NoError(t, err)
	var d runs.Description
	require.NoError(t, flowctl.DecodeJSON(out, &d))
	assert.Equal(t, runs.StatusCompleted, d.Status)
	assert.Equal(t, "remote-queue", d.TaskQueue)
	assert.JSONEq(t, `{"greeting":"Hello, remote!","shouted":"HELLO, REMOTE!"}`, string(d.Result))

	require.NoError(t, worker.Process.Signal(syscall.SIGINT))
	done := make(chan error, 1)
	go func() {
		for range lines {
		}
		done <- worker.Wait()
	}()
	select {
	case err := <-done:
		assert.NoError(t, err, "exit 0 on SIGINT")
	case <-time.After(30 * time.Second):
		t.Fatal("flow-worker did not stop on SIGINT")
	}
}
