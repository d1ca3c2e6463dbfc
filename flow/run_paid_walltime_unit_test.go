package flow

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/runs"
)

func TestAttemptTimeout(t *testing.T) {
	for _, tc := range []struct {
		name          string
		timeout, left time.Duration
		limited       bool
		want          time.Duration
		ok            bool
	}{
		{"no wall-time guard: the step's timeout", 10 * time.Minute, 0, false, 10 * time.Minute, true},
		{"no guard and no timeout", 0, 0, false, 0, true},
		{"more time left than the step's timeout", 10 * time.Minute, 20 * time.Minute, true, 10 * time.Minute, true},
		{"less time left: cut to it", 10 * time.Minute, 2 * time.Minute, true, 2 * time.Minute, true},
		{"exactly the step's timeout left", time.Minute, time.Minute, true, time.Minute, true},
		{"no timeout set: the time left", 0, 3 * time.Second, true, 3 * time.Second, true},
		{"nothing left", 10 * time.Minute, 0, true, 0, false},
		{"past the limit", 10 * time.Minute, -time.Second, true, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := attemptTimeout(tc.timeout, tc.left, tc.limited)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.ok, ok)
		})
	}
}

// The case, on the mock clock: MaxWallTime 10m and attempts that fail after 8m.
// The second attempt gets what is left of the 10m, not the step's full timeout, and no
// third attempt starts: the step fails with the wall-time guard naming it.
func TestPaidStepRetriesStopAtTheWallTime(t *testing.T) {
	f := Define("unit/paid-walltime", func(ctx *Context, _ none) (string, error) {
		a, err := ctx.Agent("summarize", activities.Agent{Prompt: "p", Model: "m"}, StepTimeout(30*time.Minute))
		return a.Text, err
	}, WithGuards(Guards{MaxWallTime: 10 * time.Minute}))
	env := newUnitEnv(t, runConfig{}, f)
	// The first workflow task of a cold test binary on a loaded machine may take over the
	// default second: the check of yields is not what this test is about.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	start := env.Now()
	env.OnActivity(activities.AgentActivity, mock.Anything, mock.Anything).After(8 * time.Minute).Return(
		func(_ context.Context, _ activities.Agent) (activities.AgentResult, error) {
			return activities.AgentResult{}, badJSON("0.01", 1, 1)
		}).Maybe()
	started := startedActivities(env)
	env.ExecuteWorkflow(f.Name(), none{})
	err := env.GetWorkflowError()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "guard: wall time")
	assert.Contains(t, err.Error(), "at step summarize")
	var agents []time.Time
	for _, a := range started.all() {
		if a.ActivityType.Name == activities.AgentActivity {
			agents = append(agents, a.Deadline)
		}
	}
	require.Len(t, agents, 2, "a first attempt, a second one in the time left, no third")
	for i, d := range agents {
		assert.False(t, d.After(start.Add(10*time.Minute+time.Second)), "attempt %d ends by the wall time (%s)", i+1, d.Sub(start))
	}
	s := stepByName(t, queryState(t, env), "summarize")
	assert.Equal(t, runs.StepFailed, s.Status)
	assert.Len(t, s.Attempts, 2, "both attempts made are recorded")
	assert.Contains(t, s.Error, "attempt 3 not made: guard: wall time")
}
