package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/proc"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/runs"
)

// The flow-worker binary declares services from --service flags, for definitions that
// name them: flowctl services shows their limits, a definition's http step goes to its
// service's task queue, and the breaker of `failures:2,open:2s` opens after two 500
// answers of a local server, fails the next attempt fast (waiting_service) without calling
// the server, and closes after the probe, so the run completes.
func TestWorkerServiceFlagsLimitDefinitionSteps(t *testing.T) {
	t.Parallel()
	workerBin, _ := binaries(t)
	var mu sync.Mutex
	hits := map[string][]time.Time{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path] = append(hits[r.URL.Path], time.Now())
		n := len(hits[r.URL.Path])
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/flaky" && n <= 2 {
			w.WriteHeader(http.StatusInternalServerError)
		}
		fmt.Fprintf(w, `{"n": %d}`, n)
	}))
	t.Cleanup(srv.Close)
	calls := func(path string) []time.Time {
		mu.Lock()
		defer mu.Unlock()
		return append([]time.Time(nil), hits[path]...)
	}

	queue := lateQueue("worker-service-flags")
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "svc.yaml"), []byte(`
name: svc-flags
steps:
  - id: ping
    uses: http
    service: status
    with: {url: "`+srv.URL+`/status"}
  - id: call
    uses: http
    service: flaky
    retry: {max_attempts: 10, backoff: 100ms, factor: 1}
    with: {url: "`+srv.URL+`/flaky"}
  - {id: done, finish: {output: {ping: "${{ steps.ping.output.n }}", call: "${{ steps.call.output.n }}"}}}
`), 0o644))

	worker := exec.Command(workerBin, "--task-queue", queue, "--flows", dir, "--stop-timeout", "5s",
		"--service", "status=rate:4,concurrent:2", "--service", "flaky=failures:2,open:2s")
	worker.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+shared.srv.FrontendAddress(), "TEMPORAL_NAMESPACE="+shared.srv.Namespace())
	stdout, err := worker.StdoutPipe()
	require.NoError(t, err)
	logs := &proc.Buffer{}
	worker.Stderr = logs
	require.NoError(t, worker.Start())
	t.Cleanup(func() { _ = worker.Process.Signal(syscall.SIGTERM); _ = worker.Wait() })
	banner := &proc.Buffer{}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			fmt.Fprintln(banner, sc.Text())
			if strings.Contains(sc.Text(), "flow-worker: ready") {
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		t.Fatalf("flow-worker not ready: %s\n%s", banner.String(), logs.String())
	}
	assert.Contains(t, banner.String(), "  Services         status (4/s, 2 at once)\n                   flaky (breaker: failures 2 open 2s)\n")

	services := func() map[string]core.ServiceStatus {
		r := flowctlRunOn(t, queue, "services", "-o", "json")
		var list []core.ServiceStatus
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &list) != nil {
			return nil
		}
		m := map[string]core.ServiceStatus{}
		for _, s := range list {
			m[s.Service] = s
		}
		return m
	}
	m := services()
	require.Len(t, m, 2, "flowctl services lists both services")
	assert.Equal(t, 4.0, m["status"].RatePerSecond)
	assert.Equal(t, 2, m["status"].MaxConcurrent)
	assert.Empty(t, m["status"].State, "no breaker")
	assert.Equal(t, "closed", m["flaky"].State)
	assert.Zero(t, m["flaky"].RatePerSecond)

	ctx := ctxT(t, 2*time.Minute)
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})
	run, err := c.Start(ctx, "svc-flags", nil, core.StartOptions{})
	require.NoError(t, err)
	d := eventually(t, c, run.ID, "the call waits for its service", func(d *runs.Description) bool {
		return len(d.State.Steps) == 2 && d.State.Steps[1].Status == runs.StepWaitingService
	})
	assert.Contains(t, d.State.Steps[1].Error, "waiting for service flaky (circuit breaker open)")
	require.Eventually(t, func() bool {
		s := services()["flaky"]
		return s.State == "open" && s.OpenUntil != nil
	}, 5*time.Second, 50*time.Millisecond, "flowctl services shows the open breaker")

	d, err = c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.JSONEq(t, `{"ping": 1, "call": 3}`, string(d.Result))
	flaky := calls("/flaky")
	require.Len(t, flaky, 3, "two failures and the probe: the fast failure never reached the server")
	assert.GreaterOrEqual(t, flaky[2].Sub(flaky[1]), 2*time.Second-200*time.Millisecond, "the probe waited out open:2s")
	assert.Len(t, calls("/status"), 1)
	require.Eventually(t, func() bool { return services()["flaky"].State == "closed" }, 5*time.Second, 50*time.Millisecond,
		"the probe closed the breaker")

	it := shared.tc.GetWorkflowHistory(ctx, run.ID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	queues := map[string]bool{}
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "gateflow.http" {
			queues[a.GetTaskQueue().GetName()] = true
		}
	}
	assert.Equal(t, map[string]bool{protocol.ServiceQueue(queue, "status"): true, protocol.ServiceQueue(queue, "flaky"): true}, queues,
		"each step ran on its service's task queue")
}
