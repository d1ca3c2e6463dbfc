package integration

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/internal/integration/testflows"
	"github.com/gateflow/gateflow/internal/protocol"
)

func TestInvalidScheduleIsRefusedAtDefine(t *testing.T) {
	f := flow.Define("test.badschedule", func(*flow.Context, struct{}) (string, error) { return "", nil },
		flow.Schedule("every now and then"))
	require.Error(t, f.Err())
	assert.Contains(t, f.Err().Error(), `schedule "every now and then"`)
}

func TestScheduleFiresAndFlowctlControlsIt(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	queue := "sched"
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue}, testflows.Scheduled)
	require.NoError(t, w.Start())
	defer w.Stop()
	id := protocol.ScheduleID("test.scheduled", 0, queue)
	defer func() { _ = shared.tc.ScheduleClient().GetHandle(ctx, id).Delete(ctx) }()
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})

	var fired []string
	require.Eventually(t, func() bool {
		list, err := c.Schedules(ctx)
		if err != nil || len(list) != 1 {
			return false
		}
		fired = list[0].Recent
		return len(fired) >= 1
	}, 30*time.Second, 200*time.Millisecond, "the schedule fired")
	d, err := c.Wait(ctx, fired[0])
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.Equal(t, "schedule", d.CreatedBy)

	r := run(t, queue, "schedules")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)^gateflow-schedule/test\.scheduled/0@sched\s+test\.scheduled\s+@every 2s\s+active\s+\d+`, r.stdout)
	r = run(t, queue, "schedules", "pause", "test.scheduled", "--note", "maintenance")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "Schedule "+id+" paused.\n", r.stdout)
	r = run(t, queue, "schedules", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var list []flowclient.ScheduleSummary
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &list))
	require.Len(t, list, 1)
	assert.True(t, list[0].Paused)
	assert.Equal(t, "maintenance", list[0].Note)
	before := list[0].Actions
	r = run(t, queue, "schedules", "trigger", id)
	require.Equal(t, 0, r.code, r.stderr)
	require.Eventually(t, func() bool {
		l, err := c.Schedules(ctx)
		return err == nil && len(l) == 1 && l[0].Actions > before
	}, 20*time.Second, 200*time.Millisecond, "trigger starts a run even when paused")
	r = run(t, queue, "schedules", "unpause", "test.scheduled")
	require.Equal(t, 0, r.code, r.stderr)
	r = run(t, queue, "schedules", "pause", "no.such.flow")
	assert.Equal(t, flowctl.ExitNotFound, r.code, r.stderr)

	// A restarted worker updates the schedule rather than failing on it.
	w2 := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue}, testflows.Scheduled)
	require.NoError(t, w2.Start())
	w2.Stop()
}

// run runs flowctl in process against the shared server on queue.
func run(t *testing.T, queue string, args ...string) result {
	t.Helper()
	return flowctlRunOn(t, queue, args...)
}
