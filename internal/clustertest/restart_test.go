//go:build cluster

package clustertest

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/runs"
)

// Runs waiting on an approval survive a SIGKILL of the Temporal server process and its
// restart: they still wait afterwards, take the approval and complete.
func TestClusterServerRestartWhileRunsWait(t *testing.T) {
	restartWhileWaiting(t, "cluster-srv", "Temporal server SIGKILL + restart", func() {
		env.server.kill9()
		require.NoError(t, env.server.start())
	})
}

// Runs waiting on an approval survive a restart of PostgreSQL (a fast shutdown: its
// connections are cut, the Temporal server stays up and reconnects).
func TestClusterPostgresRestartWhileRunsWait(t *testing.T) {
	restartWhileWaiting(t, "cluster-pg", "PostgreSQL stop + start", func() {
		require.NoError(t, env.pg.stop())
		time.Sleep(3 * time.Second) // the server notices it is gone
		require.NoError(t, env.pg.start())
	})
}

func restartWhileWaiting(t *testing.T, queue, what string, restart func()) {
	const n = 5
	file := filepath.Join(t.TempDir(), "effects.txt")
	startWorker(t, queue+"-1", queue)
	startWorker(t, queue+"-2", queue)
	var ids []string
	terminateOnFailure(t, &ids)
	for i := range n {
		id := fmt.Sprintf("%s-%d", queue, i+1)
		r := flowctl(t, queue, "start", "cluster-gate", "--id", id, "--input", fmt.Sprintf(`{"file":%q}`, file))
		require.Equal(t, 0, r.code, r.stderr)
		ids = append(ids, id)
	}
	for _, id := range ids {
		waitFor(t, queue, id, "waiting for the approval", time.Minute, hasStatus(runs.StatusAwaitingApproval))
	}

	begin := time.Now()
	restart()
	down := time.Since(begin)

	// Still waiting once the server answers (and a worker answers the state query).
	for _, id := range ids {
		waitFor(t, queue, id, "still waiting after the restart", 2*time.Minute, hasStatus(runs.StatusAwaitingApproval))
	}
	back := time.Since(begin)
	for _, id := range ids {
		r := flowctl(t, queue, "approve", id, "ok", "--as", "alice")
		require.Equal(t, 0, r.code, "approve %s: %s%s", id, r.stdout, r.stderr)
	}
	for _, id := range ids {
		d := waitFor(t, queue, id, "completed", 2*time.Minute, hasStatus(runs.StatusCompleted))
		require.NotNil(t, d.State)
		for _, s := range d.State.Steps {
			assert.Equal(t, runs.StepCompleted, s.Status, "run %s step %s", id, s.Name)
		}
		steps, _ := history(t, id)
		for name, s := range steps {
			assert.Equal(t, 1, s.completed, "run %s: activity %s completed once", id, name)
		}
	}
	count := map[string]int{}
	for _, f := range lines(t, file) {
		count[strings.Join(f, " ")]++
	}
	for _, id := range ids {
		assert.Equal(t, 1, count[id+" before"], "run %s: step before ran once", id)
		assert.Equal(t, 1, count[id+" after"], "run %s: step after ran once", id)
	}
	assert.Len(t, count, 2*n, "no other side effects: %v", count)
	report(t, "%s: %d runs waiting on a gate; restart took %s, runs answered again %s after it began; all %d approved and completed, each step once",
		what, n, down.Round(time.Millisecond), back.Round(time.Millisecond), n)
}
