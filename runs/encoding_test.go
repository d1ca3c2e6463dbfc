package runs

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// oldState is testdata/state-before-lean.json: a completed run of 20 typical steps
// (shell, agent and activity steps, one in a branch, one used twice) as the version
// before the smaller encoding wrote it, times in nanoseconds.
func oldState(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/state-before-lean.json")
	require.NoError(t, err)
	var c bytes.Buffer
	require.NoError(t, json.Compact(&c, b))
	return c.Bytes()
}

// stepsOf is the encoded steps array of an encoded state.
func stepsOf(t *testing.T, state []byte) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(state, &m))
	return m["steps"]
}

// stepsBytes is the length of the encoded steps array of an encoded state.
func stepsBytes(t *testing.T, state []byte) int { return len(stepsOf(t, state)) }

func TestStateDecodesTheOlderEncoding(t *testing.T) {
	var st State
	require.NoError(t, json.Unmarshal(oldState(t), &st))
	require.Len(t, st.Steps, 20)
	assert.Equal(t, "release-1.4.2", st.ID)
	assert.Equal(t, StatusCompleted, st.Status)
	assert.True(t, decimal.RequireFromString("0.0625").Equal(st.CostUSD))
	assert.Equal(t, Tokens{Input: 6000, Output: 1700}, st.Tokens)
	first := st.Steps[0]
	assert.Equal(t, "step-00", first.ActivityID)
	assert.Equal(t, time.Date(2026, 12, 1, 22, 34, 8, 123456789, time.UTC), first.StartedAt, "an older state keeps its nanoseconds")
	require.NotNil(t, first.ExitCode)
	assert.Equal(t, 0, *first.ExitCode)
	assert.Equal(t, int64(1500), first.DurationMS)
	agent := st.Steps[2]
	assert.Equal(t, KindAgent, agent.Kind)
	assert.True(t, decimal.RequireFromString("0.0125").Equal(agent.CostUSD))
	assert.Equal(t, &Tokens{Input: 1200, Output: 340}, agent.Tokens)
	assert.Equal(t, "checks/step-07", st.Steps[7].ActivityID)
	assert.Equal(t, "checks", st.Steps[7].Branch)
	assert.Equal(t, "step-15#2", st.Steps[15].ActivityID)
}

func TestStateEncodesSmallerAndRoundTrips(t *testing.T) {
	old := oldState(t)
	var st State
	require.NoError(t, json.Unmarshal(old, &st))
	enc, err := json.Marshal(st)
	require.NoError(t, err)

	oldPerStep, newPerStep := stepsBytes(t, old)/len(st.Steps), stepsBytes(t, enc)/len(st.Steps)
	t.Logf("K=%d steps: state %d -> %d bytes; per step %d -> %d bytes (%.2fx)",
		len(st.Steps), len(old), len(enc), oldPerStep, newPerStep, float64(newPerStep)/float64(oldPerStep))
	assert.Less(t, len(enc), len(old))
	assert.LessOrEqual(t, float64(newPerStep), 0.80*float64(oldPerStep), "a step is encoded at least 20%% smaller")
	steps := string(stepsOf(t, enc))
	assert.NotContains(t, steps, `"cost_usd":"0"`, "zero costs are left out")
	assert.NotContains(t, steps, `"activity_id":"step-00"`, "an activity ID that is the step's name is left out")
	assert.Contains(t, steps, `"activity_id":"step-15#2"`, "an activity ID of a name's second use is kept")
	assert.NotContains(t, steps, `"activity_id":"checks/step-07"`, "an activity ID that is the step's branch and name is left out")
	assert.Equal(t, 1, strings.Count(steps, `"activity_id"`), "only the step with another ID keeps its ID")
	assert.NotContains(t, steps, `"attempt":1`, "first attempts are left out")

	var back State
	require.NoError(t, json.Unmarshal(enc, &back))
	want := st
	want.Steps = append([]Step(nil), st.Steps...)
	for i := range want.Steps {
		if s := &want.Steps[i]; s.CostUSD.IsZero() {
			s.CostUSD = decimal.Decimal{} // "0" and absent are the same zero, held differently
		}
	}
	assert.Equal(t, want, back, "the smaller encoding decodes to the same state")
}

func TestStepEncodingKeepsWhatIsSet(t *testing.T) {
	ended := time.Date(2026, 1, 2, 3, 4, 5, 6_999_999, time.UTC)
	s := Step{Name: "deploy", ActivityID: "deploy", Kind: KindShell, Status: StepFailed, Attempt: 3,
		StartedAt: ended.Add(-time.Second), EndedAt: &ended, DurationMS: 1000, RunAttempt: 2,
		CostUSD: decimal.RequireFromString("0.5"), Error: "exit 1"}
	b, err := json.Marshal(s)
	require.NoError(t, err)
	assert.JSONEq(t, `{"name":"deploy","kind":"shell","status":"failed","attempt":3,
		"started_at":"2026-01-02T03:04:04.006999999Z","ended_at":"2026-01-02T03:04:05.006999999Z","error":"exit 1",
		"run_attempt":2,"duration_ms":1000,"cost_usd":"0.5"}`, string(b))
	var back Step
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, s, back)

	// IDs and attempts that are not the usual ones are kept, an empty ID too.
	for _, odd := range []Step{
		{Name: "deploy", ActivityID: "", Kind: KindSleep, Attempt: 0, RunAttempt: 0},
		{Name: "deploy", ActivityID: "deploy", Branch: "eu", Kind: KindShell, Attempt: 1, RunAttempt: 1},
		{Name: "deploy", ActivityID: "eu/deploy", Branch: "eu", Kind: KindShell, Attempt: 1, RunAttempt: 3},
	} {
		b, err := json.Marshal(odd)
		require.NoError(t, err)
		var back Step
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, odd, back, "%s", b)
	}
	var running Step
	require.NoError(t, json.Unmarshal([]byte(`{"name":"x","activity_id":"x","kind":"agent","status":"running","attempt":1,"started_at":"2026-01-02T03:04:05Z","run_attempt":1}`), &running))
	assert.Nil(t, running.EndedAt)
	assert.True(t, running.CostUSD.IsZero())
	assert.Zero(t, running.DurationMS)
	require.Error(t, json.Unmarshal([]byte(`{"name":"x","started_at":"yesterday"}`), &running), "a bad time is an error")
}
