package flow

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/searchattr"
)

// TestScheduledRunsGetTheFlowsStartDefaults: a flow's default priority, labels and worker
// tags apply to its scheduled runs as to the runs a client starts.
func TestScheduledRunsGetTheFlowsStartDefaults(t *testing.T) {
	info := WorkflowInfo{Name: "nightly", Category: "ops", Priority: 2, Labels: map[string]string{"team": "web"}, WorkerTags: []string{"gpu"}}
	o, err := scheduleOptions("sched-1", info, ScheduleInfo{Spec: "@every 1h"}, "q")
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

	plain, err := scheduleOptions("sched-2", WorkflowInfo{Name: "plain"}, ScheduleInfo{Spec: "@every 1h"}, "q")
	require.NoError(t, err)
	pa := plain.Action.(*client.ScheduleWorkflowAction)
	assert.Equal(t, "q", pa.TaskQueue)
	assert.Equal(t, DefaultPriority, pa.Priority.PriorityKey)
}
