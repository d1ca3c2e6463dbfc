package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/backoff"
	"github.com/gateflow/gateflow/internal/integration/testflows"
)

// routingWorker serves the routing flows and their custom activities on its own queue
// and returns a client of that queue.
func routingWorker(t *testing.T, queue string, opts worker.Options) *flowclient.Client {
	t.Helper()
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, StopTimeout: time.Second, Worker: opts},
		testflows.RoutingFlows()...)
	w.RegisterActivity(testflows.RoutingSleep, "")
	w.RegisterActivity(testflows.Flaky, "")
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue, Identity: "tester"})
}

func runOn(t *testing.T, c *flowclient.Client, name string, input any, opts core.StartOptions) *runs.Description {
	t.Helper()
	ctx := ctxT(t, 2*time.Minute)
	run, err := c.Start(ctx, name, input, opts)
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.NotNil(t, d.State, "state of %s: %s", run.ID, d.StateError)
	return d
}

func TestGotoReentersALabelAtMostMaxVisitsTimes(t *testing.T) {
	t.Run("MaxVisits 3 passes on the third visit", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "counter")
		d := runFlow(t, "test.routing.goto", testflows.GotoInput{File: file, Until: 3, MaxVisits: 3})
		require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
		var out string
		require.NoError(t, json.Unmarshal(d.State.Output, &out))
		assert.Equal(t, "visit 3\n", out)
		steps := d.State.Steps
		require.Len(t, steps, 3)
		for i, want := range []struct{ id, route, status string }{
			{"build", "goto build (2 of 3)", "failed, goto build (2 of 3)"},
			{"build#2", "goto build (3 of 3)", "failed, goto build (3 of 3)"},
			{"build#3", "", "completed"},
		} {
			assert.Equal(t, want.id, steps[i].ActivityID)
			assert.Equal(t, want.route, steps[i].Route)
			assert.Equal(t, want.status, steps[i].StatusText())
		}
		assert.Equal(t, []runs.Label{{Name: "build", Visits: 3, MaxVisits: 3, Reentries: 2, LastStep: "build"}}, d.State.Labels)
	})
	t.Run("MaxVisits 2 gives up with the step's error", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "counter")
		d := runFlow(t, "test.routing.goto", testflows.GotoInput{File: file, Until: 3, MaxVisits: 2})
		require.Equal(t, runs.StatusFailed, d.Status)
		assert.Contains(t, d.Error, "goto build: visited 2 times (max 2): step build: exit code 1: not yet 2")
		steps := d.State.Steps
		require.Len(t, steps, 2)
		assert.Equal(t, "goto build (2 of 2)", steps[0].Route)
		assert.Equal(t, "goto build (limit of 2 visits reached)", steps[1].Route)
		assert.Equal(t, []runs.Label{{Name: "build", Visits: 2, MaxVisits: 2, Reentries: 1, LastStep: "build"}}, d.State.Labels)
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.Equal(t, "2\n", string(b), "the body ran twice")
	})
}

func TestTimedOutStepsAreRecordedAndRoutedByOnTimeout(t *testing.T) {
	c := routingWorker(t, "routing-timeouts", worker.Options{})
	d := runOn(t, c, "test.routing.timeouts", struct{}{}, core.StartOptions{})
	require.Equal(t, runs.StatusWarning, d.Status, d.Error)
	var out string
	require.NoError(t, json.Unmarshal(d.State.Output, &out))
	assert.Equal(t, "fallback ran\n", out, "the fallback's result is the step's")

	slow := stepNamed(t, d.State.Steps, "slow")
	assert.Equal(t, runs.StepTimedOut, slow.Status)
	assert.Equal(t, "start_to_close", slow.Timeout, "a Temporal start-to-close timeout")
	assert.Equal(t, "continue", slow.Route)
	assert.Equal(t, "timed_out (allowed)", slow.StatusText())
	assert.Equal(t, "timed out (start_to_close)", slow.Error)

	shell := stepNamed(t, d.State.Steps, "slow-shell")
	assert.Equal(t, runs.StepTimedOut, shell.Status)
	assert.Equal(t, "start_to_close", shell.Timeout, "the shell step's own timeout")
	assert.Equal(t, "timed_out, fallback slow-shell/fallback", shell.StatusText())
	fb := stepNamed(t, d.State.Steps, "slow-shell/fallback")
	assert.Equal(t, runs.StepCompleted, fb.Status)
	assert.Less(t, d.State.Steps[len(d.State.Steps)-1].StartedAt.Sub(d.State.StartedAt), 30*time.Second,
		"no retries: each step timed out once")
}

func TestTimedOutScheduleToStartWithQueueTimeout(t *testing.T) {
	// One activity slot: while hog holds it, queued waits in the task queue.
	c := routingWorker(t, "routing-queue", worker.Options{MaxConcurrentActivityExecutionSize: 1})
	d := runOn(t, c, "test.routing.queue", struct{}{}, core.StartOptions{})
	require.Equal(t, runs.StatusWarning, d.Status, d.Error)
	q := stepNamed(t, d.State.Steps, "queued")
	assert.Equal(t, runs.StepTimedOut, q.Status)
	assert.Equal(t, "schedule_to_start", q.Timeout)
	assert.Equal(t, "timed_out (allowed)", q.StatusText())
	assert.InDelta(t, float64(time.Second), float64(q.Duration(time.Time{})), float64(900*time.Millisecond), "it waited about its QueueTimeout")
	assert.Equal(t, runs.StepCompleted, stepNamed(t, d.State.Steps, "hog").Status)
}

// jitterSeed finds a run ID whose jittered delays before attempts 2 and 3 are well away
// from the plain ones (1s and 2s), so the test tells jittered from plain retries.
func jitterSeed(p backoff.Policy, prefix string) string {
	for i := 0; ; i++ {
		id := fmt.Sprintf("%s-%d", prefix, i)
		d2, d3 := p.Next(id+"/flaky", 2), p.Next(id+"/flaky", 3)
		if d2-time.Second > 120*time.Millisecond || time.Second-d2 > 120*time.Millisecond {
			if d3-2*time.Second > 240*time.Millisecond || 2*time.Second-d3 > 240*time.Millisecond {
				return id
			}
		}
	}
}

// retryIntervals polls the run's pending activity until the run ends and returns the
// retry interval the server computed before each attempt (by the attempt's number).
func retryIntervals(t *testing.T, id, activityID string, done <-chan struct{}) map[int]time.Duration {
	t.Helper()
	got := map[int]time.Duration{}
	ctx := ctxT(t, time.Minute)
	for {
		select {
		case <-done:
			return got
		case <-time.After(20 * time.Millisecond):
		}
		desc, err := shared.tc.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			continue // not started yet
		}
		for _, pa := range desc.GetPendingActivities() {
			if pa.GetActivityId() == activityID && pa.GetAttempt() >= 2 && pa.GetCurrentRetryInterval() != nil {
				got[int(pa.GetAttempt())] = pa.GetCurrentRetryInterval().AsDuration()
			}
		}
	}
}

func TestJitterSpreadsTemporalRetriesDeterministically(t *testing.T) {
	c := routingWorker(t, "routing-jitter", worker.Options{})
	p := backoff.Policy{InitialInterval: time.Second, BackoffCoefficient: 2}
	id := jitterSeed(p, fmt.Sprintf("jitter-%d", time.Now().UnixNano()))
	file := filepath.Join(t.TempDir(), "attempts")
	done := make(chan struct{})
	intervals := make(chan map[int]time.Duration, 1)
	go func() { intervals <- retryIntervals(t, id, "flaky", done) }()
	d := runOn(t, c, "test.routing.jitter", testflows.FileInput{File: file}, core.StartOptions{ID: id})
	close(done)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	server := <-intervals

	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	var attempts []testflows.FlakyAttempt
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var a testflows.FlakyAttempt
		require.NoError(t, json.Unmarshal(sc.Bytes(), &a))
		attempts = append(attempts, a)
	}
	require.NoError(t, sc.Err())
	require.Len(t, attempts, 3)
	for i, plain := range []time.Duration{time.Second, 2 * time.Second} {
		next := i + 2
		want := p.Next(id+"/flaky", next)
		assert.Equal(t, next, attempts[i+1].Attempt)
		assert.Greater(t, (want - plain).Abs(), 100*time.Millisecond, "the seed makes jittered and plain delays distinguishable")
		// The server's own retry interval (DescribeWorkflowExecution) is the jittered delay.
		if assert.Contains(t, server, next, "the retry before attempt %d was seen", next) {
			assert.InDelta(t, float64(want), float64(server[next]), float64(time.Millisecond),
				"before attempt %d the server waits %s; jittered backoff %s (plain %s)", next, server[next], want, plain)
		}
		assert.InDelta(t, float64(plain), float64(want), float64(plain)/5, "within ±20%% of the plain backoff")
		// The worker got the next attempt no earlier than that (and later by the task
		// queue's latency).
		waited := attempts[i+1].Started.Sub(attempts[i].Failed)
		assert.GreaterOrEqual(t, waited, want-50*time.Millisecond, "before attempt %d the attempt started after %s", next, waited)
		assert.Less(t, waited, want+time.Second, "before attempt %d", next)
	}
}
