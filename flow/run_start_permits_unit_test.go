package flow

import (
	"context"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/internal/protocol"
)

// TestRunWithUnreadableStartOptionsFails: start options the run cannot decode used to be
// ignored (the run went on with no cap, no labels, no concurrency). The run fails with the
// reason before any step.
func TestRunWithUnreadableStartOptionsFails(t *testing.T) {
	env := newEnv(t)
	require.NoError(t, env.SetMemoOnStart(map[string]any{protocol.MemoOptions: "not an object"}))
	env.ExecuteWorkflow(stepsFlow.Name(), stepsInput{Steps: []testStep{{Name: "build", Shell: activities.Shell{Command: "true"}}}})
	require.True(t, env.IsWorkflowCompleted())
	err := env.GetWorkflowError()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the start options in memo gateflow.options cannot be read")
	st := queryState(t, env)
	assert.Empty(t, st.Steps, "no step ran")
	assert.Equal(t, runs.StatusFailed, st.Status)
}

// TestFailedPermitReleaseIsRecorded: a concurrency permit that cannot be given back used
// to be dropped silently. It is logged and recorded in the run's problems (the semaphore
// reclaims it once it sees the run closed).
func TestFailedPermitReleaseIsRecorded(t *testing.T) {
	env := newEnv(t)
	startWith(t, env, protocol.RunOptions{QuotaChecked: true, Concurrency: map[string]int{"deploys": 1}})
	env.RegisterActivityWithOptions(func(context.Context, string, protocol.SemaphoreMessage) error { return nil },
		activity.RegisterOptions{Name: protocol.SemaphoreSignalActivity})
	var released []string
	env.OnActivity(protocol.SemaphoreSignalActivity, mock.Anything, mock.Anything, mock.Anything).Return(
		func(_ context.Context, signal string, m protocol.SemaphoreMessage) error {
			if signal == protocol.SemaphoreRelease {
				released = append(released, m.Group)
				return temporal.NewNonRetryableApplicationError("semaphore unreachable", "test", nil)
			}
			return nil
		})
	env.OnActivity(activities.ShellActivity, mock.Anything, mock.Anything).Return(activities.ShellResult{}, nil)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(protocol.SignalPermit, "deploys") }, time.Second)
	env.ExecuteWorkflow(stepsFlow.Name(), stepsInput{Steps: []testStep{{Name: "build", Shell: activities.Shell{Command: "true"}}}})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError(), "a failed release does not fail the run")
	assert.Equal(t, []string{"deploys"}, released)
	st := queryState(t, env)
	require.Len(t, st.Problems, 1)
	assert.Contains(t, st.Problems[0], "release the permit of concurrency group deploys: semaphore unreachable")
	assert.Equal(t, runs.StatusCompleted, st.Status)
}

// TestHeldRunOnATaggedQueueAsksTheBaseQueuesControl: a run started on a tagged queue
// while its type was paused used to ask the control entity of its tagged queue to hold
// it, which flowctl resume never signals; it asks the base queue's.
func TestHeldRunOnATaggedQueueAsksTheBaseQueuesControl(t *testing.T) {
	env := newEnv(t)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{TaskQueue: "q@gpu"})
	startWith(t, env, protocol.RunOptions{QuotaChecked: true, Paused: true})
	var queues []string
	env.RegisterActivityWithOptions(func(context.Context, string, protocol.ControlMessage) error { return nil },
		activity.RegisterOptions{Name: protocol.ControlHoldActivity})
	env.OnActivity(protocol.ControlHoldActivity, mock.Anything, mock.Anything, mock.Anything).Return(
		func(_ context.Context, queue string, _ protocol.ControlMessage) error {
			queues = append(queues, queue)
			return nil
		})
	env.OnActivity(activities.ShellActivity, mock.Anything, mock.Anything).Return(activities.ShellResult{}, nil)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(protocol.SignalResume, stepsFlow.Name()) }, time.Minute)
	env.ExecuteWorkflow(stepsFlow.Name(), stepsInput{Steps: []testStep{{Name: "build", Shell: activities.Shell{Command: "true"}}}})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, []string{"q"}, queues)
}
