//go:build cluster

package clustertest

import (
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/runs"
)

// killLoopSteps are the steps of testdata/flows/cluster-steps.yaml.
var killLoopSteps = []string{"s1", "s2", "s3", "s4", "s5"}

// Three flow-worker processes serve runs of five shell steps while a random one is killed
// with SIGKILL 20 times (and restarted each time). Every run completes, every step
// completed exactly once in its history, and the side effect of each completed attempt
// is in the file exactly once, with no line of a later attempt: a step killed in flight
// runs again (its earlier attempts may have left their line), a completed one never does.
func TestClusterKillLoop(t *testing.T) {
	const (
		queue     = "cluster-kill"
		kills     = 20
		firstRuns = 6 // then one more before each kill, so every kill finds steps in flight
	)
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewSource(seed))
	t.Logf("seed %d", seed)
	file := filepath.Join(t.TempDir(), "effects.txt")
	workers := []*worker{startWorker(t, "k1", queue), startWorker(t, "k2", queue), startWorker(t, "k3", queue)}
	var ids []string
	terminateOnFailure(t, &ids)

	begin := time.Now()
	startRun := func() {
		id := fmt.Sprintf("kill-%02d", len(ids)+1)
		r := flowctl(t, queue, "start", "cluster-steps", "--id", id, "--input", fmt.Sprintf(`{"file":%q,"seconds":"2"}`, file))
		require.Equal(t, 0, r.code, "start %s: %s", id, r.stderr)
		ids = append(ids, id)
	}
	for range firstRuns {
		startRun()
	}
	var downtime time.Duration
	for i := range kills {
		startRun()
		time.Sleep(time.Duration(1500+rng.Intn(1500)) * time.Millisecond)
		w := workers[rng.Intn(len(workers))]
		w.proc.kill()
		down := time.Now()
		require.NoError(t, w.start(), "restart %s after kill %d", w.name, i+1)
		downtime += time.Since(down)
	}
	killsDone := time.Since(begin)

	// Every run completes.
	deadline := time.Now().Add(5 * time.Minute)
	for _, id := range ids {
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			d, err := env.tc.DescribeWorkflowExecution(ctx, id, "")
			cancel()
			if err == nil && d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
				require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, d.GetWorkflowExecutionInfo().GetStatus(), "run %s", id)
				break
			}
			require.True(t, time.Now().Before(deadline), "run %s still open 5 minutes after the kills (err %v)", id, err)
			time.Sleep(500 * time.Millisecond)
		}
	}
	total := time.Since(begin)

	// The side effects: run → step → attempt → how many lines.
	effects := map[string]map[string]map[int]int{}
	for _, f := range lines(t, file) {
		require.Len(t, f, 4, "line %v: want RUN STEP ATTEMPT WORKER", f)
		a, err := strconv.Atoi(f[2])
		require.NoError(t, err, "line %v", f)
		if effects[f[0]] == nil {
			effects[f[0]] = map[string]map[int]int{}
		}
		if effects[f[0]][f[1]] == nil {
			effects[f[0]][f[1]] = map[int]int{}
		}
		effects[f[0]][f[1]][a]++
	}

	reexecuted, extraAttempts, lateLines := 0, 0, 0
	for _, id := range ids {
		d, why := show(t, queue, id)
		require.NotNil(t, d, why)
		assert.Equal(t, runs.StatusCompleted, d.Status, "run %s", id)
		steps, _ := history(t, id)
		for name, s := range steps {
			assert.Equal(t, 1, s.scheduled, "run %s: activity %s scheduled once", id, name)
			assert.Equal(t, 1, s.completed, "run %s: activity %s completed once", id, name)
		}
		for _, name := range killLoopSteps {
			s := steps[name]
			if !assert.NotNil(t, s, "run %s: step %s in the history", id, name) {
				continue
			}
			byAttempt := effects[id][name]
			assert.Equal(t, 1, byAttempt[int(s.attempt)], "run %s step %s: the line of its completed attempt %d appears once (lines by attempt: %v)", id, name, s.attempt, byAttempt)
			for a, n := range byAttempt {
				assert.LessOrEqual(t, a, int(s.attempt), "run %s step %s: attempt %d ran after attempt %d completed", id, name, a, s.attempt)
				assert.Equal(t, 1, n, "run %s step %s: attempt %d wrote %d lines", id, name, a, n)
				if a < int(s.attempt) {
					lateLines++
				}
			}
			if s.attempt > 1 {
				reexecuted++
				extraAttempts += int(s.attempt) - 1
			}
		}
	}
	restarts := 0
	for _, w := range workers {
		restarts += w.starts - 1
	}
	assert.Equal(t, kills, restarts)
	assert.Positive(t, reexecuted, "no kill hit a step in flight: the loop proved nothing")
	byWorker := map[string]int{}
	for _, f := range lines(t, file) {
		byWorker[f[3]]++
	}
	names := make([]string, 0, len(byWorker))
	for n := range byWorker {
		names = append(names, n)
	}
	sort.Strings(names)
	report(t, "kill loop: %d SIGKILLs of 3 workers (restarted each time, %s down in all) over %s; %d runs x %d steps = %d steps completed, each once in its history",
		kills, downtime.Round(time.Millisecond), killsDone.Round(time.Millisecond), len(ids), len(killLoopSteps), len(ids)*len(killLoopSteps))
	report(t, "kill loop: %d steps re-executed after a kill in flight (%d extra attempts; %d killed attempts still left their line), 0 completed steps re-executed; all runs completed %s after the first start",
		reexecuted, extraAttempts, lateLines, total.Round(time.Millisecond))
	for _, n := range names {
		report(t, "kill loop: side effects written by %s: %d", n, byWorker[n])
	}
}
