package flow

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities"
)

// A run records its times to the millisecond, whatever the precision of the clock it
// runs on: the state's times have no sub-millisecond part, and its JSON no nanoseconds.
func TestARunRecordsItsTimesToTheMillisecond(t *testing.T) {
	env := newEnv(t)
	env.SetStartTime(time.Date(2025, 6, 1, 9, 0, 0, 123_456_789, time.UTC)) // ns on the clock
	env.ExecuteWorkflow(stepsFlow.Name(), stepsInput{Steps: []testStep{
		{Name: "build", Shell: activities.Shell{Command: "echo built"}}, {Name: "test", Shell: activities.Shell{Command: "echo ok"}}}})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	st := queryState(t, env)
	require.Len(t, st.Steps, 2)
	ms := func(what string, at time.Time) {
		t.Helper()
		assert.False(t, at.IsZero(), what)
		assert.Zero(t, at.Nanosecond()%int(time.Millisecond), "%s %s has a sub-millisecond part", what, at.Format(time.RFC3339Nano))
	}
	ms("run start", st.StartedAt)
	require.NotNil(t, st.EndedAt)
	ms("run end", *st.EndedAt)
	for _, s := range st.Steps {
		ms(s.Name+" start", s.StartedAt)
		require.NotNil(t, s.EndedAt, s.Name)
		ms(s.Name+" end", *s.EndedAt)
		assert.False(t, s.EndedAt.Before(s.StartedAt), "%s ends after it starts", s.Name)
	}
	assert.Equal(t, time.Date(2025, 6, 1, 9, 0, 0, 123_000_000, time.UTC), st.StartedAt.UTC(), "the run's start, truncated")
	b, err := json.Marshal(st)
	require.NoError(t, err)
	assert.NotRegexp(t, regexp.MustCompile(`:\d\d\.\d{4,}`), string(b), "no time in the state's JSON has more than 3 fractional digits")
}
