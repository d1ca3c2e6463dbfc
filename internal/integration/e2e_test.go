package integration

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/internal/proc"
	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// builtBins caches the binaries built by the tests themselves (once per test binary).
var builtBins struct {
	once sync.Once
	dir  string
	err  error
}

// binaries returns the paths of flow-worker and flowctl: from GATEFLOW_BIN_DIR when the
// Makefile built them already, else built here once, with the example MCP server
// triage-tools next to them (flow-worker --dev declares it, as under make run).
func binaries(t *testing.T) (worker, ctl string) {
	t.Helper()
	dir := os.Getenv("GATEFLOW_BIN_DIR")
	if dir == "" {
		builtBins.once.Do(func() {
			builtBins.dir, builtBins.err = os.MkdirTemp("", "gateflow-bin-")
			for _, pkg := range []string{"cmd/flow-worker", "cmd/flowctl", "examples/mcp/triage-tools"} {
				if builtBins.err != nil {
					return
				}
				name := filepath.Base(pkg)
				out, err := exec.Command("go", "build", "-o", filepath.Join(builtBins.dir, name), "../../"+pkg).CombinedOutput()
				if err != nil {
					builtBins.err = fmt.Errorf("go build %s: %v: %s", name, err, out)
				}
			}
		})
		require.NoError(t, builtBins.err)
		dir = builtBins.dir
	}
	worker, ctl = filepath.Join(dir, "flow-worker"), filepath.Join(dir, "flowctl")
	for _, p := range []string{worker, ctl} {
		_, err := os.Stat(p)
		require.NoError(t, err, "%s is missing", p)
	}
	return worker, ctl
}

func TestEndToEndBinaries(t *testing.T) {
	workerBin, ctlBin := binaries(t)
	port, uiPort := freePort(t), freePort(t)
	address := fmt.Sprintf("127.0.0.1:%d", port)

	worker := exec.Command(workerBin, "--dev", "--port", fmt.Sprint(port), "--ui-port", fmt.Sprint(uiPort),
		"--db-file", filepath.Join(t.TempDir(), "e2e.db"))
	banner, stderr, exited := startWorkerProcess(t, worker)
	out := banner.String()
	assert.Contains(t, out, "Temporal server  "+address)
	assert.Contains(t, out, fmt.Sprintf("Web UI           http://127.0.0.1:%d/namespaces/default/workflows?query=FlowStatus%%20IS%%20NOT%%20NULL\n", uiPort))
	assert.Contains(t, out, "flowctl --address "+address+" start hello")

	ctl := func(args ...string) (string, string, int) {
		cmd := exec.Command(ctlBin, append([]string{"--address", address}, args...)...)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		return o.String(), e.String(), code
	}

	o, e, code := ctl("start", "hello", "--input", `{"name":"e2e"}`, "--wait", "-o", "json")
	require.Equal(t, 0, code, e)
	var d runs.Description
	require.NoError(t, flowctl.DecodeJSON([]byte(o), &d), o)
	assert.Equal(t, runs.StatusCompleted, d.Status)
	require.NotNil(t, d.State)
	require.Len(t, d.State.Steps, 2)
	assert.Equal(t, "greet", d.State.Steps[0].Name)
	assert.Equal(t, "shout", d.State.Steps[1].Name)
	for _, s := range d.State.Steps {
		assert.Equal(t, runs.StepCompleted, s.Status)
	}
	assert.JSONEq(t, `{"greeting":"Hello, e2e!","shouted":"HELLO, E2E!"}`, string(d.Result))

	o, e, code = ctl("show", d.ID)
	require.Equal(t, 0, code, e)
	assert.Regexp(t, `(?m)^Status\s+completed$`, o)

	_, e, code = ctl("show", "missing-run")
	assert.Equal(t, 3, code)
	assert.Equal(t, "flowctl: run missing-run not found\n", e)

	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", uiPort))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	require.NoError(t, worker.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		require.NoError(t, err, "flow-worker exits 0 on SIGTERM; stderr:\n%s", stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatal("flow-worker did not stop after SIGTERM")
	}
	assert.Contains(t, banner.String(), "flow-worker: stopped")
	assertPortFree(t, port)
	assertPortFree(t, uiPort)
}

// startWorkerProcess starts a flow-worker command and waits for its banner's ready line:
// it returns its stdout (the banner and what follows), its stderr and a channel that gets
// its exit. The
// process is killed when the test ends if it is still running.
func startWorkerProcess(t *testing.T, worker *exec.Cmd) (*proc.Buffer, *proc.Buffer, <-chan error) {
	t.Helper()
	return startProcessUntil(t, worker, "flow-worker: ready")
}

// startProcessUntil starts a worker command and waits for a line of its stdout containing
// ready, as startWorkerProcess does.
func startProcessUntil(t *testing.T, worker *exec.Cmd, readyLine string) (*proc.Buffer, *proc.Buffer, <-chan error) {
	t.Helper()
	stdout, err := worker.StdoutPipe()
	require.NoError(t, err)
	stderr := &proc.Buffer{}
	worker.Stderr = stderr
	require.NoError(t, worker.Start())
	exited := make(chan error, 1)
	t.Cleanup(func() {
		if worker.ProcessState == nil {
			_ = worker.Process.Kill()
		}
	})
	banner := &proc.Buffer{}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		signalled := false
		for sc.Scan() {
			banner.Write([]byte(sc.Text() + "\n"))
			if !signalled && strings.Contains(sc.Text(), readyLine) {
				signalled = true
				close(ready)
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		exited <- worker.Wait()
	}()
	select {
	case <-ready:
	case err := <-exited:
		t.Fatalf("%s exited early: %v\n%s", worker.Path, err, stderr.String())
	case <-time.After(90 * time.Second):
		t.Fatalf("%s not ready in time\nstdout:\n%s\nstderr:\n%s", worker.Path, banner.String(), stderr.String())
	}
	return banner, stderr, exited
}
