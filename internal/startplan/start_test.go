package startplan

import (
	"encoding/json"
	"reflect"
	"regexp"
	"testing"
	"time"

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
		{"struct encoded", planInput{Name: "Ada"}, `{"name":"Ada"}`, ""},
		{"map encoded", map[string]int{"n": 1}, `{"n":1}`, ""},
		{"string is a JSON string", `{"not":"raw"}`, `"{\"not\":\"raw\"}"`, ""},
		{"unencodable", make(chan int), "", "encode input: json: unsupported type: chan int"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EncodeInput(tt.input)
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

// checkedInput is an input type with nesting and a duration, as flows have.
type checkedInput struct {
	Steps []struct {
		Name  string `json:"name"`
		Shell struct {
			Command string        `json:"command"`
			Timeout time.Duration `json:"timeout"`
		} `json:"shell"`
	} `json:"steps"`
}

func TestCheckInput(t *testing.T) {
	schema := typeschema.For(reflect.TypeFor[checkedInput]())
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
			err := CheckInput(tt.schema, json.RawMessage(tt.raw))
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

func TestNewRunID(t *testing.T) {
	a, b := NewRunID("delivery/web/release"), NewRunID("delivery/web/release")
	assert.Regexp(t, regexp.MustCompile(`^delivery-web-release-[0-9a-f]{10}$`), a)
	assert.NotEqual(t, a, b)
}
