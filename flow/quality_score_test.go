package flow

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/gateflow/gateflow/quality"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities"
)

func TestQualityScore(t *testing.T) {
	type review struct {
		Score   float64 `json:"score"`
		Summary string  `json:"summary"`
	}
	type untagged struct{ Score int }
	tests := []struct {
		name      string
		source    any
		field     string
		want      float64
		wantField string
	}{
		{"default field of a map", map[string]any{"score": 80}, "", 80, "score"},
		{"named field", map[string]any{"score": 79}, "score", 79, "score"},
		{"nested field", map[string]any{"review": map[string]any{"score": 91.5}}, "review.score", 91.5, "review.score"},
		{"array index", json.RawMessage(`{"reviews":[{"score":10},{"score":20}]}`), "reviews.1.score", 20, "reviews.1.score"},
		{"json.RawMessage", json.RawMessage(` {"score": 100} `), "", 100, "score"},
		{"string of JSON", `{"review":{"score":0}}`, "review.score", 0, "review.score"},
		{"bytes of JSON", []byte(`{"quality":{"score":42}}`), "quality.score", 42, "quality.score"},
		{"bare number", 80, "", 80, ""},
		{"bare number as JSON text", "79.25", "", 79.25, ""},
		{"tagged struct", review{Score: 85, Summary: "fine"}, "score", 85, "score"},
		{"pointer to struct", &review{Score: 60}, "", 60, "score"},
		{"untagged struct matches ignoring case", untagged{Score: 70}, "score", 70, "score"},
		{"true counts as 100", map[string]any{"ok": true}, "ok", 100, "ok"},
		{"false counts as 0", map[string]any{"ok": false}, "ok", 0, "ok"},
		{"agent result JSON", activities.AgentResult{Text: "```json\n{\"score\": 88}\n```", JSON: json.RawMessage(`{"score":88}`)}, "", 88, "score"},
		{"agent result text that is JSON", activities.AgentResult{Text: ` {"grade":{"score":77}}`}, "grade.score", 77, "grade.score"},
		{"pointer to agent result", &activities.AgentResult{JSON: json.RawMessage(`{"score":50}`)}, "score", 50, "score"},
		{"exact 0 and 100 bounds", map[string]any{"a": 0, "b": 100}, "b", 100, "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, field, err := qualityScore(tt.source, tt.field)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantField, field)
		})
	}
}

func TestQualityScoreErrors(t *testing.T) {
	tests := []struct {
		name    string
		source  any
		field   string
		wantErr string
	}{
		{"missing field", map[string]any{"grade": 80}, "score", `field "score" is missing (the source is an object)`},
		{"missing nested field", map[string]any{"review": map[string]any{"grade": 80}}, "review.score",
			`field "review.score" is missing (review is an object)`},
		{"path through a number", map[string]any{"review": 80}, "review.score", `field "review.score" is missing (review is 80)`},
		{"index out of range", json.RawMessage(`{"r":[{"score":1}]}`), "r.3.score", `field "r.3.score" is missing (r is an array of 1)`},
		{"string score", map[string]any{"score": "high"}, "score", `field score is "high", not a number from 0 to 100`},
		{"numeric string is not a number", map[string]any{"score": "80"}, "score", `field score is "80", not a number from 0 to 100`},
		{"null score", json.RawMessage(`{"score":null}`), "score", `field score is null, not a number from 0 to 100`},
		{"object score", json.RawMessage(`{"score":{"value":80}}`), "score", `field score is {"value":80}, not a number from 0 to 100`},
		{"above 100", map[string]any{"score": 101}, "score", `field score is 101, outside 0–100`},
		{"below 0", map[string]any{"review": map[string]any{"score": -0.5}}, "review.score", `field review.score is -0.5, outside 0–100`},
		{"bare number out of range", 250, "", `field (the source) is 250, outside 0–100`},
		{"huge number", json.RawMessage(`{"score":1e400}`), "score", `field score is 1e400, outside 0–100`},
		{"nil source", nil, "score", "the source is nil"},
		{"nil agent result", (*activities.AgentResult)(nil), "score", "the source is a nil *activities.AgentResult"},
		{"string that is not JSON", "great work", "score", "the source is not JSON: great work"},
		{"empty bytes", []byte("  "), "score", "the source is empty, not JSON"},
		{"agent result without JSON", activities.AgentResult{Text: "Score: 80/100"}, "score",
			"the agent's answer is not JSON: Score: 80/100 (give the agent step a ResponseSchema)"},
		{"value that does not marshal", map[string]any{"score": math.NaN()}, "score",
			"the source (map[string]interface {}) does not marshal to JSON: json: unsupported value: NaN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := qualityScore(tt.source, tt.field)
			assert.EqualError(t, err, tt.wantErr)
		})
	}
}

func TestQualityScorePassesAtTheThreshold(t *testing.T) {
	for _, tt := range []struct {
		score, threshold float64
		pass             bool
	}{{79, 80, false}, {80, 80, true}, {79.99, 80, false}, {100, 100, true}, {0, 0, true}, {81, 80, true}} {
		got, _, err := qualityScore(map[string]any{"score": tt.score}, "score")
		require.NoError(t, err)
		assert.Equal(t, tt.pass, got >= tt.threshold, "%v vs %v", tt.score, tt.threshold)
	}
}

func TestCheckQuality(t *testing.T) {
	tests := []struct {
		name    string
		q       quality.Gate
		wantErr string
	}{
		{"zero value", quality.Gate{}, ""},
		{"full", quality.Gate{Threshold: 80, Field: "review.score", OnFail: quality.Continue}, ""},
		{"bounds", quality.Gate{Threshold: 100, OnFail: quality.Fail}, ""},
		{"negative threshold", quality.Gate{Threshold: -1}, "threshold -1 is outside 0–100"},
		{"threshold over 100", quality.Gate{Threshold: 100.5}, "threshold 100.5 is outside 0–100"},
		{"NaN threshold", quality.Gate{Threshold: math.NaN()}, "threshold NaN is outside 0–100"},
		{"unknown on fail", quality.Gate{OnFail: "retry"}, `on fail "retry": want "fail" or "continue"`},
		{"empty segment", quality.Gate{Field: "review..score"}, `field "review..score" has an empty segment`},
		{"trailing dot", quality.Gate{Field: "score."}, `field "score." has an empty segment`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkQuality(tt.q)
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.EqualError(t, err, tt.wantErr)
		})
	}
}
