package flow

import (
	"errors"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/internal/searchattr"
)

// TestWorkflowCancelledRunRecordsCancelled fails today: when a run is cancelled while a
// step runs, the wrapper records FlowStatus "failed" (in the search attribute, the query
// and the memo), although Temporal closes the run as Canceled (the SDK's worker finds the
// CanceledError inside the StepError with errors.As). `flowctl list --status cancelled`
// filters on FlowStatus and so never finds cancelled runs (see the report).
func TestWorkflowCancelledRunRecordsCancelled(t *testing.T) {
	env := newEnv(t)
	env.OnActivity(activities.ShellActivity, mock.Anything, mock.Anything).
		After(time.Hour).Return(activities.ShellResult{}, nil)
	var statuses []string
	env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		v, _ := args.Get(0).(temporal.SearchAttributes).GetKeyword(searchattr.StatusKey)
		statuses = append(statuses, v)
	}).Return(nil)
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
	env.ExecuteWorkflow(stepsFlow.Name(), stepsInput{Steps: []testStep{{Name: "slow", Shell: activities.Shell{Command: "sleep 3600"}}}})
	require.True(t, env.IsWorkflowCompleted())

	err := env.GetWorkflowError()
	require.Error(t, err)
	var cancelled *temporal.CanceledError
	assert.True(t, errors.As(err, &cancelled), "the run's error carries the cancellation: %v", err)

	st := queryState(t, env)
	require.Len(t, st.Steps, 1)
	assert.Equal(t, runs.StepCancelled, st.Steps[0].Status)
	assert.Equal(t, "cancelled", st.Steps[0].Error)
	assert.Equal(t, runs.StatusCancelled, st.Status, "run state")
	require.NotEmpty(t, statuses)
	assert.Equal(t, string(runs.StatusCancelled), statuses[len(statuses)-1], "last FlowStatus upsert")
}
