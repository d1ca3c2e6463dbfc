package flow

import (
	"testing"

	"github.com/gateflow/gateflow/schedule"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/searchattr"
)

// TestScheduledRunsGetTheFlowsStartDefaults: a flow's default priority, labels and worker
// tags apply to its scheduled runs as to the runs a client starts.
func TestScheduledRunsGetTheFlowsStartDefaults(t *testing.T) {
	info := core.WorkflowInfo{Name: "nightly", Category: "ops", Priority: 2, Labels: map[string]string{"team": "web"}, WorkerTags: []string{"gpu"}}
	o, err := scheduleOptions("sched-1", info, schedule.Info{Spec: "@every 1h"}, "q")
	require.NoError(t, err)
	a, ok := o.Action.(*client.ScheduleWorkflowAction)
	require.True(t, ok)
	assert.Equal(t, "q@gpu", a.TaskQueue)
	assert.Equal(t, 2, a.Priority.PriorityKey)
	labels, _ := a.TypedSearchAttributes.GetKeywordList(searchattr.LabelsKey)
	assert.Equal(t, []string{"team=web"}, labels)
	p, _ := a.TypedSearchAttributes.GetInt64(searchattr.PriorityKey)
	assert.Equal(t, int64(2), p)
	assert.Equal(t, protocol.RunOptions{Labels: map[string]string{"team": "web"}}, a.Memo[protocol.MemoOptions])

	plain, err := scheduleOptions("sched-2", core.WorkflowInfo{Name: "plain"}, schedule.Info{Spec: "@every 1h"}, "q")
	require.NoError(t, err)
	pa := plain.Action.(*client.ScheduleWorkflowAction)
	assert.Equal(t, "q", pa.TaskQueue)
	assert.Equal(t, core.DefaultPriority, pa.Priority.PriorityKey)
}

// TestScheduleIDs: a schedule with an ID is named by it, one without by its position; an
// ID must look like one and be unique among the flow's schedules.
func TestScheduleIDs(t *testing.T) {
	f := Define("ids", func(*Context, struct{}) (string, error) { return "", nil },
		Schedule("@every 1h"), Schedule("@daily", schedule.ID("nightly")))
	require.NoError(t, f.Err())
	s := f.Info().Schedules
	require.Len(t, s, 2)
	assert.Equal(t, "gateflow-schedule/ids/0@q", protocol.FlowScheduleID("ids", 0, s[0].ID, "q"))
	assert.Equal(t, "gateflow-schedule/ids/nightly@q", protocol.FlowScheduleID("ids", 1, s[1].ID, "q"))

	for _, tc := range []struct {
		name string
		opts []Option
		want string
	}{
		{"digits", []Option{Schedule("@daily", schedule.ID("1"))}, `schedule id "1": want 1-63 lower-case letters, digits and _.- starting with a letter`},
		{"upper", []Option{Schedule("@daily", schedule.ID("Nightly"))}, `schedule id "Nightly"`},
		{"empty", []Option{Schedule("@daily", schedule.ID(""))}, `schedule id ""`},
		{"slash", []Option{Schedule("@daily", schedule.ID("a/b"))}, `schedule id "a/b"`},
		{"twice", []Option{Schedule("@daily", schedule.ID("n")), Schedule("@hourly", schedule.ID("n"))}, `schedule "@hourly": id "n" is given to another schedule of the flow`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Define("ids", func(*Context, struct{}) (string, error) { return "", nil }, tc.opts...)
			require.Error(t, f.Err())
			assert.Contains(t, f.Err().Error(), tc.want)
		})
	}
}
