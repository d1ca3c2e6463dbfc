package flow

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/gateflow/gateflow/quality"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/activities"
)

// qualityIn configures qualityFlow: the review agent answers {"review":{"score":Score}}
// and the gate wants Threshold at review.score.
type qualityIn struct {
	Score     float64        `json:"score"`
	Threshold float64        `json:"threshold"`
	OnFail    quality.OnFail `json:"on_fail,omitempty"`
	Field     string         `json:"field,omitempty"`
}

type qualityOut struct {
	Gate  runs.Quality `json:"gate"`
	After bool         `json:"after"`
	// TypedError says the handler saw ErrorQualityGate in the gate's error.
	TypedError bool `json:"typed_error"`
}

var qualityFlow = Define("unit/quality", func(ctx *Context, in qualityIn) (qualityOut, error) {
	review, err := ctx.Agent("review", activities.Agent{Prompt: fmt.Sprintf("Review; score %v", in.Score), Model: "gpt-4o-mini",
		ResponseSchema: json.RawMessage(`{"type":"object"}`)})
	if err != nil {
		return qualityOut{}, err
	}
	field := in.Field
	if field == "" {
		field = "review.score"
	}
	rec, err := ctx.QualityGate("review-quality", review, quality.Gate{Threshold: in.Threshold, Field: field, OnFail: in.OnFail})
	out := qualityOut{Gate: rec, TypedError: ErrorQualityGate.Is(err)}
	if err != nil && !errors.As(err, new(*AllowedFailure)) {
		return out, err
	}
	if _, serr := ctx.Shell("after", activities.Shell{Command: "true"}); serr != nil {
		return out, serr
	}
	out.After = true
	return out, err
})

func runQualityFlow(t *testing.T, in qualityIn) (runs.State, qualityOut, error) {
	t.Helper()
	env := newUnitEnv(t, runConfig{}, qualityFlow)
	mockAgent(env, func(a activities.Agent) (activities.AgentResult, error) {
		js := fmt.Sprintf(`{"review":{"score":%v}}`, in.Score)
		return activities.AgentResult{Text: js, JSON: json.RawMessage(js), Attempt: 1, CostUSD: dec("0.01"), CostKnown: true}, nil
	})
	mockShell(env, func(activities.Shell) (activities.ShellResult, error) { return activities.ShellResult{Attempt: 1}, nil })
	env.ExecuteWorkflow(qualityFlow.Name(), in)
	require.True(t, env.IsWorkflowCompleted())
	var out qualityOut
	err := env.GetWorkflowError()
	if err == nil {
		require.NoError(t, env.GetWorkflowResult(&out))
	}
	return queryState(t, env), out, err
}

// appErrorTypes lists the types of the application errors in err's chain, outermost first.
func appErrorTypes(err error) []string {
	var out []string
	for ; err != nil; err = errors.Unwrap(err) {
		if app, ok := err.(*temporal.ApplicationError); ok {
			out = append(out, app.Type())
		}
	}
	return out
}

func TestQualityGateBelowTheThresholdFailsTheRun(t *testing.T) {
	st, _, err := runQualityFlow(t, qualityIn{Score: 79, Threshold: 80})
	require.Error(t, err)
	assert.Contains(t, appErrorTypes(err), string(ErrorQualityGate), "the run's error carries the gate's error type: %v", err)
	assert.Contains(t, err.Error(), "quality gate review-quality: score 79 (at review.score) is below the threshold 80")
	assert.Equal(t, runs.StatusFailed, st.Status)
	var kept qualityOut
	require.NoError(t, json.Unmarshal(st.Output, &kept))
	assert.True(t, kept.TypedError, "the handler branches on ErrorQualityGate.Is")
	assert.Equal(t, runs.Quality{Score: 79, Threshold: 80, Field: "review.score", OnFail: string(quality.Fail)}, kept.Gate)
	g := stepByName(t, st, "review-quality")
	assert.Equal(t, runs.KindQuality, g.Kind)
	assert.Equal(t, runs.StepFailed, g.Status)
	assert.False(t, g.AllowedFailure)
	require.NotNil(t, g.Quality)
	assert.Equal(t, runs.Quality{Score: 79, Threshold: 80, Field: "review.score", Passed: false, OnFail: string(quality.Fail)}, *g.Quality)
	assert.Equal(t, "quality gate review-quality: score 79 (at review.score) is below the threshold 80", g.Error)
	assert.True(t, g.CostUSD.IsZero(), "the gate itself costs nothing")
	assert.Equal(t, "0.01", st.CostUSD.String(), "the review was charged")
	for _, s := range st.Steps {
		assert.NotEqual(t, "after", s.Name, "the handler stopped at the gate")
	}
}

func TestQualityGateAtTheThresholdPasses(t *testing.T) {
	st, out, err := runQualityFlow(t, qualityIn{Score: 80, Threshold: 80})
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, st.Status)
	want := runs.Quality{Score: 80, Threshold: 80, Field: "review.score", Passed: true, OnFail: string(quality.Fail)}
	assert.Equal(t, want, out.Gate, "the handler gets the record")
	assert.True(t, out.After)
	g := stepByName(t, st, "review-quality")
	assert.Equal(t, runs.StepCompleted, g.Status)
	require.NotNil(t, g.Quality)
	assert.Equal(t, want, *g.Quality)
	assert.Equal(t, "score 80, threshold 80: passed", g.Output)
}

func TestQualityGateContinueRecordsAnAllowedFailureAndGoesOn(t *testing.T) {
	st, out, err := runQualityFlow(t, qualityIn{Score: 42.5, Threshold: 60, OnFail: quality.Continue})
	require.NoError(t, err, "only allowed failures: the run does not fail")
	assert.Equal(t, runs.StatusWarning, st.Status)
	assert.Equal(t, 1, st.AllowedFailures)
	assert.True(t, out.After, "the handler went on")
	assert.True(t, out.TypedError, "the allowed failure wraps the typed error")
	assert.False(t, out.Gate.Passed)
	g := stepByName(t, st, "review-quality")
	assert.Equal(t, runs.StepFailed, g.Status)
	assert.True(t, g.AllowedFailure)
	require.NotNil(t, g.Quality)
	assert.Equal(t, runs.Quality{Score: 42.5, Threshold: 60, Field: "review.score", OnFail: string(quality.Continue)}, *g.Quality)
	assert.Equal(t, runs.StepCompleted, stepByName(t, st, "after").Status)
}

func TestQualityGateRefusesBadSettingsAndUnreadableScores(t *testing.T) {
	tests := []struct {
		name    string
		in      qualityIn
		wantErr string
	}{
		{"threshold over 100", qualityIn{Score: 90, Threshold: 120, OnFail: quality.Continue},
			"quality gate review-quality: threshold 120 is outside 0–100"},
		{"unknown on fail", qualityIn{Score: 90, Threshold: 80, OnFail: "maybe"},
			`quality gate review-quality: on fail "maybe": want "fail" or "continue"`},
		{"missing field, even with continue", qualityIn{Score: 90, Threshold: 80, Field: "review.grade", OnFail: quality.Continue},
			`quality gate review-quality: field "review.grade" is missing (review is an object)`},
		{"score out of range", qualityIn{Score: 180, Threshold: 80},
			"quality gate review-quality: field review.score is 180, outside 0–100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, _, err := runQualityFlow(t, tt.in)
			require.Error(t, err)
			assert.NotContains(t, appErrorTypes(err), string(ErrorQualityGate), "not a failing score but a gate that cannot judge")
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.Equal(t, runs.StatusFailed, st.Status)
			g := stepByName(t, st, "review-quality")
			assert.Equal(t, runs.StepFailed, g.Status)
			assert.False(t, g.AllowedFailure)
			assert.Equal(t, tt.wantErr, g.Error)
			assert.Nil(t, g.Quality, "no score was read")
		})
	}
}
