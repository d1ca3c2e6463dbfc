package integration

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/internal/proc"
)

// Stable step identity and live output (issue 15, items 6 and 7).

// identityInput points the identity flow at a local HTTP server and a log file.
type identityInput struct {
	URL string `json:"url"`
	Log string `json:"log"`
}

var quickRetry = flow.Retry(temporal.RetryPolicy{InitialInterval: 50 * time.Millisecond, MaximumInterval: 100 * time.Millisecond,
	MaximumAttempts: 3})

// identityFlow: a shell step that fails its first attempt and prints its identity each
// time, then two HTTP steps (the first gets a 503 before a 200), one with its own header.
var identityFlow = flow.Define("test.live.identity", func(ctx *flow.Context, in identityInput) (string, error) {
	_, err := ctx.Shell("env", activities.Shell{
		Command: `echo "$GATEFLOW_STEP $GATEFLOW_ATTEMPT $GATEFLOW_IDEMPOTENCY_KEY" >> "$LOG"; [ "$GATEFLOW_ATTEMPT" -ge 2 ]`,
		Env:     map[string]string{"LOG": in.Log}}, quickRetry)
	if err != nil {
		return "", err
	}
	if _, err := ctx.HTTP("charge", activities.HTTP{Method: "POST", URL: in.URL + "/charge"}, quickRetry); err != nil {
		return "", err
	}
	_, err = ctx.HTTP("notify", activities.HTTP{Method: "POST", URL: in.URL + "/notify", IdempotencyHeader: "X-Request-Id"}, quickRetry)
	return "", err
})

// liveInput gates the live flow's second line on a file.
type liveInput struct {
	Gate string `json:"gate"`
}

// liveFlow prints a line, waits for the test to create the gate file (at most 60s), prints
// another and then 1..100, more than the step record's preview holds.
var liveFlow = flow.Define("test.live.output", func(ctx *flow.Context, in liveInput) (string, error) {
	res, err := ctx.Shell("emit", activities.Shell{
		Command: `echo first; echo warned >&2; i=0; while [ ! -e "$GATE" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; echo second; seq 1 100`,
		Env:     map[string]string{"GATE": in.Gate}})
	return res.Stdout, err
})

// liveWorker starts a worker with the live flows on a fresh task queue.
func liveWorker(t *testing.T) (*flowclient.Client, string) {
	t.Helper()
	queue := fmt.Sprintf("live-%s-%d", t.Name(), time.Now().UnixNano())
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, StopTimeout: 2 * time.Second}, identityFlow, liveFlow)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue}), queue
}

// keyRecorder is a local HTTP server that records each request's path and headers and fails
// the first request to each path with 503.
type keyRecorder struct {
	mu   sync.Mutex
	reqs []http.Request
	seen map[string]bool
}

func (r *keyRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, http.Request{URL: req.URL, Header: req.Header.Clone()})
	if !r.seen[req.URL.Path] {
		r.seen[req.URL.Path] = true
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ok"))
}

func (r *keyRecorder) headers(path, name string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, req := range r.reqs {
		if req.URL.Path == path {
			out = append(out, req.Header.Get(name))
		}
	}
	return out
}

func TestStepIdentityIsStableAcrossAttempts(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t, 2*time.Minute)
	c, _ := liveWorker(t)
	rec := &keyRecorder{seen: map[string]bool{}}
	srv := httptest.NewServer(rec)
	defer srv.Close()

	keys := map[string]bool{}
	for n := range 2 {
		log := filepath.Join(t.TempDir(), "env.log")
		run, err := c.Start(ctx, "test.live.identity", identityInput{URL: srv.URL, Log: log}, core.StartOptions{})
		require.NoError(t, err)
		d, err := c.Wait(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, runs.StatusCompleted, d.Status, "%s %s", d.Error, d.StateError)

		// The shell step saw the same key on both attempts: the one derived from the run.
		want := activities.IdempotencyKey(shared.srv.Namespace(), d.ID, d.RunID, "env")
		b, err := os.ReadFile(log)
		require.NoError(t, err)
		assert.Equal(t, "env 1 "+want+"\nenv 2 "+want+"\n", string(b))

		// The HTTP steps: the same key on the 503 and the retry, another per step.
		charge := rec.headers("/charge", "Idempotency-Key")
		require.Len(t, charge, 2*(n+1))
		charge = charge[2*n:]
		assert.Equal(t, charge[0], charge[1], "the retry sends the first attempt's key")
		assert.Equal(t, activities.IdempotencyKey(shared.srv.Namespace(), d.ID, d.RunID, "charge"), charge[0])
		notify := rec.headers("/notify", "X-Request-Id")[2*n:]
		require.Len(t, notify, 2)
		assert.Equal(t, notify[0], notify[1])
		assert.Empty(t, rec.headers("/notify", "Idempotency-Key")[2*n], "the configured header replaces the default one")
		for _, k := range []string{want, charge[0], notify[0]} {
			assert.Regexp(t, `^gf1-[0-9a-f]{32}$`, k)
			assert.False(t, keys[k], "key %s is not reused by another step or run", k)
			keys[k] = true
		}
		rec.mu.Lock()
		rec.seen = map[string]bool{} // the next run's first calls fail again
		rec.mu.Unlock()
	}
}

// flowctlAsync runs flowctl in the background; the channel gets its exit code.
func flowctlAsync(queue string, out *proc.Buffer, args ...string) (<-chan int, *proc.Buffer) {
	errb := &proc.Buffer{}
	full := append([]string{"--address", shared.srv.FrontendAddress(), "--task-queue", queue}, args...)
	code := make(chan int, 1)
	go func() { code <- flowctl.Execute(full, strings.NewReader(""), out, errb) }()
	return code, errb
}

func TestFlowctlLogsFollowsARunningShellStep(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t, 2*time.Minute)
	c, queue := liveWorker(t)
	gate := filepath.Join(t.TempDir(), "gate")
	run, err := c.Start(ctx, "test.live.output", liveInput{Gate: gate}, core.StartOptions{})
	require.NoError(t, err)

	logs, watch := &proc.Buffer{}, &proc.Buffer{}
	logsDone, logsErr := flowctlAsync(queue, logs, "logs", run.ID, "emit", "-f", "--interval", "100ms")
	watchDone, watchErr := flowctlAsync(queue, watch, "watch", run.ID, "--interval", "100ms")

	// The first lines show while the step still waits for the gate, in the order they
	// were read: stdout and stderr are two pipes, so "warned" may come before "first". The
	// buffers are printed as they are when the wait gives up (a message argument is read
	// at the call).
	shown := func(b *proc.Buffer, want string) bool {
		return assert.Eventually(t, func() bool { return strings.Contains(b.String(), want) }, 45*time.Second, 50*time.Millisecond)
	}
	if !shown(logs, "first\n") || !shown(logs, "stderr| warned\n") || !shown(watch, "output    emit             first\n") {
		d, err := c.Describe(ctx, run.ID)
		t.Fatalf("logs -f: %q %q; watch: %q %q; the run now: %+v (%v)", logs.String(), logsErr.String(), watch.String(), watchErr.String(), d, err)
	}
	assert.NotContains(t, logs.String(), "second", "the step has not printed it yet")
	d, err := c.Describe(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StepRunning, stepNamed(t, d.State.Steps, "emit").Status, "the step is still running")
	require.Contains(t, d.Live, "emit", "the description carries the heartbeat")
	var texts []string
	for _, l := range d.Live["emit"].Lines {
		texts = append(texts, l.Text)
	}
	assert.ElementsMatch(t, []string{"first", "warned"}, texts, "both streams' lines, in the order they were read")

	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	select {
	case code := <-logsDone:
		require.Equal(t, 0, code, logsErr.String())
	case <-ctx.Done():
		t.Fatal("logs -f did not end with the step")
	}
	out := logs.String()
	live, final, ok := strings.Cut(out, "--- emit shell completed after ")
	require.True(t, ok, "logs -f ends with the step's outcome: %q", out)
	assert.Equal(t, 1, strings.Count(live, "first\n"), "each live line once: %q", out)
	assert.Contains(t, final, "first\nsecond\n1\n2\n", "then the final output")
	assert.True(t, strings.HasSuffix(out, "99\n100\nstderr| warned\n"), "all of it, from the step's result: %q", out)
	select {
	case code := <-watchDone:
		require.Equal(t, 0, code, watchErr.String())
	case <-ctx.Done():
		t.Fatal("watch did not end with the run")
	}
	assert.Contains(t, watch.String(), "ended     completed")

	// Once the step has ended, logs prints its final output at once.
	r := flowctlRunOn(t, queue, "logs", run.ID, "emit", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `"event":"ended"`)
	assert.Contains(t, r.stdout, `"output":"first\nsecond\n1\n2\n`)
	assert.Contains(t, r.stdout, `\n100\nstderr| warned\n"`)
	r = flowctlRunOn(t, queue, "logs", run.ID, "nope")
	assert.Equal(t, flowctl.ExitNotFound, r.code)
	assert.Contains(t, r.stderr, "has no step nope")
}
