package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/runs"
)

// exampleWorker is examples/worker built: bin/example-worker of `make build` when
// GATEFLOW_BIN_DIR is set, else built into the test's directory.
func exampleWorker(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("GATEFLOW_BIN_DIR"); dir != "" {
		p := filepath.Join(dir, "example-worker")
		_, err := os.Stat(p)
		require.NoError(t, err, "%s is missing: make build builds it", p)
		return p
	}
	p := filepath.Join(t.TempDir(), "example-worker")
	out, err := exec.Command("go", "build", "-o", p, "../../examples/worker").CombinedOutput()
	require.NoError(t, err, "go build ./examples/worker: %s", out)
	return p
}

// temporalEnv is the environment of a process reaching the shared server through the
// standard variables only: TEMPORAL_ADDRESS, no config file, and the extra settings.
func temporalEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TEMPORAL_") {
			env = append(env, kv)
		}
	}
	return append(env, append([]string{"TEMPORAL_ADDRESS=" + shared.srv.FrontendAddress(),
		"TEMPORAL_CONFIG_FILE=/nonexistent"}, extra...)...)
}

// runCtl runs the flowctl binary with env and returns its stdout, stderr and exit code.
func runCtl(t *testing.T, ctl string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(ctl, args...)
	cmd.Env = env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return o.String(), e.String(), ee.ExitCode()
	}
	require.NoError(t, err)
	return o.String(), e.String(), 0
}

// docs/go-flows.md's "Your own flows": examples/worker serves its flow on its own task queue
// beside the shared worker; flowctl finds the queue through TEMPORAL_TASK_QUEUE; a keyed
// signal sent on the default task queue (no TEMPORAL_TASK_QUEUE, no --task-queue) reaches
// its run waiting on that key.
func TestExampleWorkerOnItsOwnQueue(t *testing.T) {
	_, ctl := binaries(t)
	queue := fmt.Sprintf("my-flows-%d", time.Now().UnixNano())
	worker := exec.Command(exampleWorker(t))
	worker.Env = temporalEnv("TEMPORAL_TASK_QUEUE=" + queue)
	out, stderr, exited := startProcessUntil(t, worker, "worker: serving triage on task queue "+queue)

	onQueue := temporalEnv("TEMPORAL_TASK_QUEUE="+queue, "FLOW_USER=carol")
	o, e, code := runCtl(t, ctl, onQueue, "workflows")
	require.Equal(t, 0, code, e)
	assert.Regexp(t, `(?m)^triage\s`, o, "flowctl reads the catalog of TEMPORAL_TASK_QUEUE")
	assert.NotContains(t, o, "hello", "the example worker's queue has only its own flows")

	ticket := fmt.Sprintf("T-%d", time.Now().UnixNano())
	run := "triage-" + ticket
	o, e, code = runCtl(t, ctl, onQueue, "start", "triage", "--id", run, "--input", `{"ticket":"`+ticket+`","text":"disk full"}`)
	require.Equal(t, 0, code, e)
	assert.Contains(t, o, "Started triage run "+run)
	eventually(t, shared.client, run, "the run waits on the gate fix", waitingFor("approval:fix"))

	_, e, code = runCtl(t, ctl, onQueue, "approve", run, "fix", "--as", "mallory")
	assert.NotEqual(t, 0, code, "mallory is not in group oncall")
	assert.Contains(t, e, "mallory")
	o, e, code = runCtl(t, ctl, onQueue, "approve", run, "fix", "--as", "alice")
	require.Equal(t, 0, code, e)
	eventually(t, shared.client, run, "the run waits on the signal", waitingFor("signal:deployed/"+ticket))

	// On the default task queue: the mailbox of the key is the run's queue's.
	o, e, code = runCtl(t, ctl, temporalEnv("FLOW_USER=carol"), "signal", "deployed", "--key", ticket, "--data", `{"version":"v2.0.1"}`)
	require.Equal(t, 0, code, e)
	assert.Contains(t, o, "every run waiting on key "+ticket+" on task queue "+queue, "it says where it went")

	d := eventually(t, shared.client, run, "the run completes", func(d *runs.Description) bool { return d.Status == runs.StatusCompleted })
	var res struct {
		Summary    string `json:"summary"`
		ApprovedBy string `json:"approved_by"`
		Version    string `json:"version"`
	}
	require.NoError(t, json.Unmarshal(d.Result, &res), string(d.Result))
	assert.Equal(t, "Disk full on db-1: rotate the logs.", res.Summary)
	assert.Equal(t, "alice", res.ApprovedBy)
	assert.Equal(t, "v2.0.1", res.Version)
	var cost string
	for _, s := range d.State.Steps {
		if s.Name == "summarise" {
			cost = s.CostUSD.String()
		}
	}
	// 1,200 input tokens at $3.00 and 40 output tokens at $15.00 per million.
	assert.Equal(t, "0.0042", cost, "the agent step is charged at the worker's price")

	require.NoError(t, worker.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		require.NoError(t, err, "the example worker exits 0 on SIGTERM; stderr:\n%s", stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("the example worker did not stop after SIGTERM; stdout:\n%s", out.String())
	}
}

// flow-worker started on a task queue that a worker of other flows already serves says so
// once on stderr: the other worker's identity and the flows it would fail the tasks of.
func TestFlowWorkerWarnsOfAQueueSharedWithOtherFlows(t *testing.T) {
	workerBin, _ := binaries(t)
	queue := fmt.Sprintf("shared-q-%d", time.Now().UnixNano())
	own := exec.Command(exampleWorker(t))
	own.Env = temporalEnv("TEMPORAL_TASK_QUEUE=" + queue)
	startProcessUntil(t, own, "worker: serving triage on task queue "+queue)

	fw := exec.Command(workerBin, "--task-queue", queue, "--log-level", "error")
	fw.Env = temporalEnv()
	_, stderr, _ := startWorkerProcess(t, fw)
	want := regexp.MustCompile(`flow-worker: warning: task queue ` + regexp.QuoteMeta(queue) +
		` is also served by worker \d+@\S+ with flows triage that this worker does not serve: their tasks will fail here \(unable to find workflow type\); give this worker \(or theirs\) its own --task-queue`)
	require.Eventually(t, func() bool { return want.MatchString(stderr.String()) }, 30*time.Second, 100*time.Millisecond,
		"flow-worker warns of the shared queue; stderr:\n%s", stderr.String())
	assert.Len(t, want.FindAllString(stderr.String(), -1), 1, "once")
	assert.NotContains(t, stderr.String(), "hello,", "its own flows are not listed")
}
