package flow

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/internal/typeschema"
)

func TestEncodeInput(t *testing.T) {
	tests := []struct {
		name    string
		input   any
		want    string
		wantErr string
	}{
		{"nil", nil, "null", ""},
		{"raw JSON compacted", json.RawMessage("{ \"a\" : [1, 2] }\n"), `{"a":[1,2]}`, ""},
		{"bytes compacted", []byte(" [ true ] "), `[true]`, ""},
		{"empty bytes are null", []byte("  "), "null", ""},
		{"nil raw message is null", json.RawMessage(nil), "null", ""},
		{"invalid raw JSON", json.RawMessage("{bad"), "", "input is not valid JSON"},
		{"trailing data", []byte(`{} {}`), "", "input is not valid JSON"},
		{"struct encoded", someType{Name: "Ada"}, `{"name":"Ada"}`, ""},
		{"map encoded", map[string]int{"n": 1}, `{"n":1}`, ""},
		{"string is a JSON string", `{"not":"raw"}`, `"{\"not\":\"raw\"}"`, ""},
		{"unencodable", make(chan int), "", "encode input: json: unsupported type: chan int"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := encodeInput(tt.input)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
		})
	}
}

func TestValidJSON(t *testing.T) {
	got, err := validJSON([]byte("\n\t 42 \n"))
	require.NoError(t, err)
	assert.Equal(t, "42", string(got))
	_, err = validJSON([]byte(`{"a":}`))
	assert.ErrorContains(t, err, "input is not valid JSON")
}

func TestCheckInput(t *testing.T) {
	schema := typeschema.For(reflect.TypeFor[stepsInput]())
	tests := []struct {
		name    string
		schema  json.RawMessage
		raw     string
		wantErr string
	}{
		{"fits", schema, `{"steps":[{"name":"a","shell":{"command":"true","timeout":5}}]}`, ""},
		{"null", schema, `null`, ""},
		{"no schema accepts anything", nil, `[1,"x"]`, ""},
		{"big integers stay exact", typeschema.For(reflect.TypeFor[int64]()), `9007199254740993`, ""},
		{"wrong nested type", schema, `{"steps":[{"name":"a"},{"name":1}]}`, "at /steps/1/name: "},
		{"unknown field", schema, `{"stepz":[]}`, "stepz"},
		{"non-integer duration", schema, `{"steps":[{"shell":{"timeout":1.5}}]}`, "at /steps/0/shell/timeout: "},
		{"invalid JSON", schema, `{`, "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkInput(tt.schema, json.RawMessage(tt.raw))
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

func TestDetailsMarkdown(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	end1, end2 := t0.Add(1500*time.Millisecond), t0.Add(3*time.Second)
	st := &runs.State{
		Workflow: "release",
		Status:   runs.StatusFailed,
		Error:    "step deploy: exit | code `3`\nbad",
		Steps: []runs.Step{
			{Name: "build|all", Kind: runs.KindShell, Status: runs.StepCompleted, Attempt: 1, StartedAt: t0, EndedAt: &end1, Output: "a | b\n  c"},
			{Name: "deploy", Kind: runs.KindShell, Status: runs.StepFailed, Attempt: 2, StartedAt: end1, EndedAt: &end2, Output: "ignored", Error: "exit code 3: `no` | way"},
			{Name: "watch", Kind: runs.KindShell, Status: runs.StepRunning, Attempt: 1, StartedAt: end2, Output: strings.Repeat("x", 100)},
		},
	}
	want := "**release** — failed\n\nCost **$0.0000**\n\n" +
		"Error: `step deploy: exit \\| code '3' bad`\n\n" +
		"| step | kind | status | attempt | duration | cost | detail |\n" +
		"| --- | --- | --- | --- | --- | --- | --- |\n" +
		"| build\\|all | shell | completed | 1 | 1.5s | - | a \\| b c |\n" +
		"| deploy | shell | failed | 2 | 1.5s | - | exit code 3: 'no' \\| way |\n" +
		"| watch | shell | running | 1 | 7s | - | " + strings.Repeat("x", 79) + "… |\n"
	assert.Equal(t, want, detailsMarkdown(st, end2.Add(7*time.Second)))

	empty := detailsMarkdown(&runs.State{Workflow: "hello", Status: runs.StatusRunning}, t0)
	assert.Equal(t, "**hello** — running\n\nCost **$0.0000**\n\nNo steps yet.\n", empty)
}

func TestNewRunID(t *testing.T) {
	a, b := newRunID("delivery/web/release"), newRunID("delivery/web/release")
	assert.Regexp(t, regexp.MustCompile(`^delivery-web-release-[0-9a-f]{10}$`), a)
	assert.NotEqual(t, a, b)
}
