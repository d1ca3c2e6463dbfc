package integration

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// builtTestworker caches the testworker binary (built once per test binary).
var builtTestworker struct {
	once sync.Once
	path string
	err  error
}

// startTestworker builds testworker once and starts it serving the test flows on queue,
// returning once it is ready. The process is killed when the test ends.
func startTestworker(t *testing.T, queue string, args ...string) *exec.Cmd {
	t.Helper()
	builtTestworker.once.Do(func() {
		dir, err := os.MkdirTemp("", "gateflow-testworker-")
		if err != nil {
			builtTestworker.err = err
			return
		}
		builtTestworker.path = filepath.Join(dir, "testworker")
		if out, err := exec.Command("go", "build", "-o", builtTestworker.path, "./testworker").CombinedOutput(); err != nil {
			builtTestworker.err = fmt.Errorf("build testworker: %v: %s", err, out)
		}
	})
	require.NoError(t, builtTestworker.err)
	worker := exec.Command(builtTestworker.path, append([]string{"--address", shared.srv.FrontendAddress(), "--task-queue", queue}, args...)...)
	stdout, err := worker.StdoutPipe()
	require.NoError(t, err)
	worker.Stderr = os.Stderr
	require.NoError(t, worker.Start())
	t.Cleanup(func() { _ = worker.Process.Kill(); _ = worker.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready\n", line)
	return worker
}
