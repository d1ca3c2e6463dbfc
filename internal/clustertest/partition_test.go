//go:build cluster

package clustertest

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/runs"
)

// A worker cut off in the middle of a step (SIGSTOP: it neither heartbeats nor answers,
// its command goes on) for longer than the step's heartbeat timeout: Temporal times the
// attempt out and another worker runs the step again. When the partitioned worker comes
// back (SIGCONT) and reports its late result, it is discarded: the run records one
// completion, the other worker's attempt, although the late attempt's side effect is in
// the file.
func TestClusterPartitionedWorkerLateResultDiscarded(t *testing.T) {
	const queue = "cluster-part"
	file := filepath.Join(t.TempDir(), "effects.txt")
	workers := map[string]*worker{"p1": startWorker(t, "p1", queue), "p2": startWorker(t, "p2", queue)}
	ids := []string{"part-1"}
	terminateOnFailure(t, &ids)
	r := flowctl(t, queue, "start", "cluster-slow", "--id", "part-1", "--input", `{"file":"`+file+`","seconds":"8"}`)
	require.Equal(t, 0, r.code, r.stderr)

	// Which worker took attempt 1?
	var first []string
	require.Eventually(t, func() bool {
		ls := lines(t, file+".starts")
		if len(ls) > 0 {
			first = ls[0]
		}
		return len(ls) > 0
	}, time.Minute, 100*time.Millisecond, "the step did not start")
	require.Equal(t, []string{"part-1", "start", "1"}, first[:3])
	stopped := workers[first[3]]
	require.NotNil(t, stopped, "start line %v", first)
	other := workers["p1"]
	if stopped == other {
		other = workers["p2"]
	}
	require.NoError(t, stopped.proc.cmd.Process.Signal(syscall.SIGSTOP))
	stoppedAt := time.Now()
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = stopped.proc.cmd.Process.Signal(syscall.SIGCONT)
		}
	}
	defer resume()

	// The run completes while the worker is still stopped.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		d, err := env.tc.DescribeWorkflowExecution(ctx, "part-1", "")
		cancel()
		if err == nil && d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, d.GetWorkflowExecutionInfo().GetStatus())
			break
		}
		require.True(t, time.Now().Before(deadline), "run part-1 not done 3 minutes into the partition (err %v)", err)
		time.Sleep(500 * time.Millisecond)
	}
	partitioned := time.Since(stoppedAt)
	assert.Greater(t, partitioned, 30*time.Second, "the step's heartbeat timeout is 30s: nothing may retry it sooner")
	before, eventsBefore := history(t, "part-1")

	// Back from the partition: its command finished long ago; its late completion must
	// change nothing.
	resume()
	late := []string{"part-1", "slow", "1", stopped.name}
	require.Eventually(t, func() bool {
		for _, l := range lines(t, file) {
			if strings.Join(l, " ") == strings.Join(late, " ") {
				return true
			}
		}
		return false
	}, 30*time.Second, 200*time.Millisecond, "the partitioned attempt's command ran to its end")
	time.Sleep(5 * time.Second) // the resumed worker reports its result (refused)
	after, eventsAfter := history(t, "part-1")
	assert.Equal(t, eventsBefore, eventsAfter, "the late result added nothing to the closed run's history")
	s := after["slow"]
	require.NotNil(t, s)
	assert.Equal(t, 1, s.scheduled)
	assert.Equal(t, 1, s.completed, "one completion recorded")
	assert.Greater(t, s.attempt, int32(1), "the completion is a retry, not the partitioned attempt 1")
	assert.Equal(t, other.identity(), s.identity, "the other worker completed the step")
	assert.Contains(t, s.result, "done by "+other.name, "the recorded result is the other worker's")
	assert.NotContains(t, s.result, "done by "+stopped.name)
	assert.Equal(t, before["slow"].attempt, s.attempt)

	d, why := show(t, queue, "part-1")
	require.NotNil(t, d, why)
	assert.Equal(t, runs.StatusCompleted, d.Status)
	require.Len(t, d.State.Steps, 1)
	assert.Equal(t, int(s.attempt), d.State.Steps[0].Attempt, "the run's record shows the other worker's attempt")
	select {
	case <-stopped.proc.exited:
		t.Fatalf("the partitioned worker died after SIGCONT: %s", stopped.proc.output.String())
	default:
	}
	// Every attempt that started, and by whom. An attempt handed to the stopped worker's
	// open poll while it was stopped may start when it resumes; its worker learns on its
	// first heartbeat that the run is gone and kills the command, or it runs to its end.
	// Wait for either, so nothing writes into the test's directory once it is removed.
	starts := lines(t, file+".starts")
	lateEnds := map[string]string{}
	for _, l := range starts {
		t.Logf("started: %v", l)
		if len(l) == 4 && l[2] != "1" && l[3] == stopped.name {
			want := strings.Join([]string{"part-1", "slow", l[2], l[3]}, " ")
			assert.Eventually(t, func() bool {
				for _, e := range lines(t, file) {
					if strings.Join(e, " ") == want {
						lateEnds[l[2]] = "ran to its end"
						return true
					}
				}
				if len(childProcesses(stopped.proc.cmd.Process.Pid)) == 0 {
					lateEnds[l[2]] = "was killed by its worker"
					return true
				}
				return false
			}, 30*time.Second, 200*time.Millisecond, "attempt %s on the resumed worker neither ended nor was killed", l[2])
		}
	}
	after, eventsAfter = history(t, "part-1")
	assert.Equal(t, eventsBefore, eventsAfter, "no late result of any attempt entered the history")
	report(t, "partition: attempts started %d (attempt:worker in order: %s); later attempts on the resumed worker: %v", len(starts), startedBy(starts), lateEnds)
	report(t, "partition: worker %s stopped in attempt 1 for %s (heartbeat timeout 30s); attempt %d on %s completed the run; the late attempt's side effect appeared, its result was discarded (history %d events before, %d after)",
		stopped.name, partitioned.Round(time.Millisecond), s.attempt, other.name, eventsBefore, eventsAfter)
}

// startedBy lists who started each attempt: "1:p1 2:p1 3:p2".
func startedBy(starts [][]string) string {
	var out []string
	for _, l := range starts {
		if len(l) == 4 {
			out = append(out, l[2]+":"+l[3])
		}
	}
	return strings.Join(out, " ")
}

// childProcesses are the PIDs whose parent is pid (from /proc).
func childProcesses(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after the last ')'.
		rest := string(b)
		if i := strings.LastIndexByte(rest, ')'); i >= 0 {
			rest = rest[i+1:]
		}
		fields := strings.Fields(rest)
		if len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err == nil && ppid == pid {
			child, _ := strconv.Atoi(strings.TrimSuffix(filepath.Base(filepath.Dir(f)), "/"))
			out = append(out, child)
		}
	}
	return out
}
