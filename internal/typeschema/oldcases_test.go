package typeschema_test

// The cases of flow/schema_test.go and of the schema cases of flow/client_test.go
// (TestCheckInput), on copies of their types: accept and refuse must agree with the old
// checker (flow.Schema.Check); messages are now signals' `at /path: ...`.

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/internal/typeschema"
)

type schemaInner struct {
	Host string `json:"host"`
	Port int    `json:"port,omitempty"`
}

type schemaEmbedded struct {
	Region string
}

type schemaAll struct {
	Name      string            `json:"name"`
	Count     int               `json:"count,omitempty"`
	Ratio     float64           `json:"ratio"`
	Enabled   bool              `json:"enabled"`
	Skipped   string            `json:"-"`
	Dash      string            `json:"-,"`
	NoTag     uint8             // field name as is
	When      time.Time         `json:"when"`
	WhenPtr   *time.Time        `json:"when_ptr"`
	Blob      []byte            `json:"blob"`
	Tags      []string          `json:"tags"`
	Labels    map[string]string `json:"labels"`
	Inner     *schemaInner      `json:"inner"`
	Servers   []schemaInner     `json:"servers"`
	Raw       json.RawMessage   `json:"raw"`
	Any       any               `json:"any"`
	Matrix    [][]int           `json:"matrix"`
	unexposed int
	schemaEmbedded
	*SchemaZone
}

// SchemaZone is exported so encoding/json can allocate it when embedded as a pointer.
type SchemaZone struct {
	Zone string `json:"zone"`
}

type schemaWithMarshaler struct{ X int }

func (schemaWithMarshaler) MarshalJSON() ([]byte, error) { return []byte(`"x"`), nil }

type schemaList struct {
	Name     string       `json:"name"`
	Children []schemaList `json:"children"`
	Next     *schemaList  `json:"next"`
}

// typeOf returns the "type" of a schema, following a $ref into doc's $defs.
func typeOf(doc, s map[string]any) any {
	if ref, ok := s["$ref"].(string); ok {
		s = doc["$defs"].(map[string]any)[ref[len("#/$defs/"):]].(map[string]any)
	}
	return s["type"]
}

func TestOldSchemaOfCases(t *testing.T) {
	str, integer, number := []any{"string", "null"}, []any{"integer", "null"}, []any{"number", "null"}
	object, array := []any{"object", "null"}, []any{"array", "null"}
	tests := []struct {
		name string
		typ  reflect.Type
		want any // the "type" keyword; nil for a schema that accepts anything
	}{
		{"string", reflect.TypeFor[string](), str},
		{"int64", reflect.TypeFor[int64](), integer},
		{"uint", reflect.TypeFor[uint](), integer},
		{"float32", reflect.TypeFor[float32](), number},
		{"bool", reflect.TypeFor[bool](), []any{"boolean", "null"}},
		{"pointer to pointer", reflect.TypeFor[**int](), integer},
		{"time", reflect.TypeFor[time.Time](), str},
		{"bytes", reflect.TypeFor[[]byte](), str},
		{"slice", reflect.TypeFor[[]float64](), array},
		{"map", reflect.TypeFor[map[string]int](), object},
		{"interface", reflect.TypeFor[any](), nil},
		{"raw JSON", reflect.TypeFor[json.RawMessage](), nil},
		{"marshaler", reflect.TypeFor[schemaWithMarshaler](), nil},
		{"struct", reflect.TypeFor[schemaInner](), object},
		{"empty struct", reflect.TypeFor[struct{}](), object},
		{"all field kinds", reflect.TypeFor[schemaAll](), object},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := decode(t, tt.typ)
			assert.Equal(t, tt.want, typeOf(doc, doc))
		})
	}

	doc := decode(t, reflect.TypeFor[schemaAll]())
	props := doc["properties"].(map[string]any)
	wantProps := map[string]any{
		"name": str, "count": integer, "ratio": number, "enabled": []any{"boolean", "null"}, "-": str, "NoTag": integer,
		"when": str, "when_ptr": str, "blob": str, "tags": array, "labels": object, "inner": object, "servers": array,
		"raw": nil, "any": nil, "matrix": array, "Region": str, "zone": str,
	}
	require.ElementsMatch(t, keys(wantProps), keys(props))
	for name, want := range wantProps {
		assert.Equal(t, want, typeOf(doc, props[name].(map[string]any)), name)
	}
	assert.Equal(t, "date-time", props["when"].(map[string]any)["format"])
	assert.Equal(t, "date-time", props["when_ptr"].(map[string]any)["format"])
	assert.Equal(t, "base64", props["blob"].(map[string]any)["contentEncoding"])
	assert.Equal(t, str, props["tags"].(map[string]any)["items"].(map[string]any)["type"])
	assert.Equal(t, str, props["labels"].(map[string]any)["additionalProperties"].(map[string]any)["type"])
	assert.Equal(t, array, props["matrix"].(map[string]any)["items"].(map[string]any)["type"])
	assert.NotContains(t, string(typeschema.For(reflect.TypeFor[schemaAll]())), `"required"`, "nothing is required")
}

func TestOldRecursiveTypeTerminates(t *testing.T) {
	done := make(chan json.RawMessage, 1)
	go func() { done <- typeschema.For(reflect.TypeFor[schemaList]()) }()
	select {
	case <-done:
		typ := reflect.TypeFor[schemaList]()
		assert.NoError(t, validate(t, typ, `{"name":"a","children":[],"next":null}`))
		assert.ErrorContains(t, validate(t, typ, `{"name":"a","children":{}}`), "at /children")
	case <-time.After(5 * time.Second):
		t.Fatal("For does not terminate on a recursive type")
	}
}

func TestOldCheckCases(t *testing.T) {
	typ := reflect.TypeFor[schemaAll]()
	tests := []struct {
		name    string
		input   string
		wantErr string // "" to accept; else a part of the message, with the path
	}{
		{"empty object", `{}`, ""},
		{"null", `null`, ""},
		{"null fields", `{"name":null,"inner":null,"tags":null,"count":null}`, ""},
		{"full", `{"name":"a","count":3,"ratio":0.5,"enabled":true,"-":"dash","NoTag":7,"when":"2024-01-02T03:04:05Z",
			"when_ptr":"2024-01-02T03:04:05.123+02:00","blob":"aGk=","tags":["x","y"],"labels":{"k":"v"},
			"inner":{"host":"h","port":80},"servers":[{"host":"a"},{"host":"b","port":1}],"raw":[1,{"a":null}],
			"any":{"deep":[true]},"matrix":[[1,2],[3]],"Region":"eu","zone":"z1"}`, ""},
		{"case-insensitive field names", `{"NAME":"a","Count":1,"INNER":{"Host":"h"},"region":"eu","noTAG":1}`, ""},
		{"integer written with exponent is a number", `{"ratio":1e3}`, ""},
		{"not an object", `[1]`, "at (root): want null or object, got array"},
		{"string for object", `"x"`, "at (root): want null or object, got string"},
		{"unknown field", `{"nmae":"a"}`, `at (root): property "nmae" not allowed`},
		{"skipped field is unknown", `{"Skipped":"x"}`, `at (root): property "Skipped" not allowed`},
		{"unexported field is unknown", `{"unexposed":1}`, `at (root): property "unexposed" not allowed`},
		{"unknown nested field", `{"inner":{"hots":"h"}}`, `at /inner: property "hots" not allowed`},
		{"wrong type", `{"name":5}`, "at /name: want null or string, got number"},
		{"wrong type in array", `{"tags":["a","b",3]}`, "at /tags/2: want null or string, got number"},
		{"wrong type in array of objects", `{"servers":[{"host":"a"},{"host":"b"},{"host":"c","port":"80"}]}`, "at /servers/2/port: want null or integer, got string"},
		{"non-integer", `{"count":1.5}`, "at /count: want null or integer, got number"},
		{"integer too big", `{"count":1e30}`, "at /count: want <= 9223372036854775807, got 1000000000000000000000000000000"},
		{"bool for number", `{"ratio":true}`, "at /ratio: want null or number, got boolean"},
		{"string for bool", `{"enabled":"yes"}`, "at /enabled: want null or boolean, got string"},
		{"bad time", `{"when":"yesterday"}`, `at /when: want format "date-time", got "yesterday"`},
		{"array for string", `{"name":["a"]}`, "at /name: want null or string, got array"},
		{"object for array", `{"tags":{"a":1}}`, "at /tags: want null or array, got object"},
		{"map values checked", `{"labels":{"a":"x","b":2}}`, "at /labels/b: want null or string, got number"},
		{"nested arrays", `{"matrix":[[1],[2,"x"]]}`, "at /matrix/1/1: want null or integer, got string"},
		// The old checker stopped at the first problem in key order; all are reported now.
		{"every problem", `{"tags":[1],"name":2}`, "at /name: want null or string, got number; at /tags/0: want null or string, got number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := validate(t, typ, tt.input)
			if tt.wantErr == "" {
				assert.NoError(t, err)
				assertDecodes(t, typ, tt.input)
				return
			}
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func TestOldNilAndOpen(t *testing.T) {
	assert.NoError(t, validate(t, nil, `{"x":1}`))
	assert.NoError(t, validate(t, reflect.TypeFor[any](), `["anything"]`))
	assert.NoError(t, validate(t, reflect.TypeFor[struct{}](), `{}`))
	assert.ErrorContains(t, validate(t, reflect.TypeFor[struct{}](), `{"x":1}`), `at (root): property "x" not allowed`)
}

type schemaTree struct {
	Name     string       `json:"name"`
	Children []schemaTree `json:"children"`
}

type schemaBaseID struct{ ID string }

type schemaOuterID struct {
	ID int
	schemaBaseID
}

type schemaQuoted struct {
	N int `json:"n,string"`
}

type schemaByteArray struct {
	A [4]byte `json:"a"`
}

type schemaAddr struct {
	Addr netip.Addr `json:"addr"`
}

type schemaHidden struct{ Secret string }

type schemaEmbedsHiddenPtr struct {
	*schemaHidden
}

type schemaSelf struct {
	*schemaSelf
	X int
}

// assertAgrees: the schema accepts input exactly when encoding/json, refusing unknown
// members as the schema does, decodes it into typ.
func assertAgrees(t *testing.T, typ reflect.Type, input string) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(input)))
	dec.DisallowUnknownFields()
	jsonErr := dec.Decode(reflect.New(typ).Interface())
	err := validate(t, typ, input)
	if jsonErr == nil {
		assert.NoError(t, err, "encoding/json decodes %s into %s, but the schema refuses it", input, typ)
	} else {
		assert.Error(t, err, "encoding/json refuses %s for %s (%v), but the schema accepts it", input, typ, jsonErr)
	}
}

func TestOldAgreementWithEncodingJSON(t *testing.T) {
	tests := []struct {
		name  string
		typ   reflect.Type
		input string
	}{
		{"struct ok", reflect.TypeFor[schemaInner](), `{"host":"h","port":1}`},
		{"struct bad type", reflect.TypeFor[schemaInner](), `{"host":1}`},
		{"struct unknown field", reflect.TypeFor[schemaInner](), `{"hst":"h"}`},
		{"struct case-insensitive", reflect.TypeFor[schemaInner](), `{"HOST":"h"}`},
		{"integer not float", reflect.TypeFor[schemaInner](), `{"port":1.5}`},
		{"promoted field", reflect.TypeFor[schemaAll](), `{"Region":"x","zone":"y"}`},
		{"bytes base64", reflect.TypeFor[schemaAll](), `{"blob":"aGk="}`},
		{"time", reflect.TypeFor[schemaAll](), `{"when":"2024-01-02T03:04:05Z"}`},
		{"bad time", reflect.TypeFor[schemaAll](), `{"when":"2024-01-02"}`},
		{"map", reflect.TypeFor[map[string][]int](), `{"a":[1,2],"b":[]}`},
		{"map bad value", reflect.TypeFor[map[string][]int](), `{"a":["x"]}`},
		{"top-level list", reflect.TypeFor[[]schemaInner](), `[{"host":"a"},{"port":2}]`},
		// flow's TestSchemaOfMismatchesEncodingJSON and TestSchemaOfAcceptsWhatEncodingJSONRefuses.
		{"recursive type, nested value", reflect.TypeFor[schemaTree](), `{"name":"a","children":[{"name":"b"}]}`},
		{"recursive pointer, nested value", reflect.TypeFor[schemaList](), `{"name":"a","next":{"name":"b"}}`},
		{"outer field wins over promoted field", reflect.TypeFor[schemaOuterID](), `{"ID":5}`},
		{",string option", reflect.TypeFor[schemaQuoted](), `{"n":"5"}`},
		{",string option, unquoted", reflect.TypeFor[schemaQuoted](), `{"n":5}`},
		{",string option, not a number", reflect.TypeFor[schemaQuoted](), `{"n":"x"}`},
		{"byte array is a JSON array", reflect.TypeFor[schemaByteArray](), `{"a":[1,2,3,4]}`},
		{"byte array element out of range", reflect.TypeFor[schemaByteArray](), `{"a":[256]}`},
		{"TextUnmarshaler takes a string", reflect.TypeFor[schemaAddr](), `{"addr":"192.0.2.1"}`},
		{"embedded pointer to unexported struct", reflect.TypeFor[schemaEmbedsHiddenPtr](), `{"Secret":"x"}`},
		{"self-embedding struct", reflect.TypeFor[schemaSelf](), `{"X":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertAgrees(t, tt.typ, tt.input)
		})
	}
	assert.ErrorContains(t, validate(t, reflect.TypeFor[schemaEmbedsHiddenPtr](), `{"Secret":"x"}`), "at /Secret: not allowed")
}

// Copies of flow's stepsInput and testStep (flow/workflow_test.go) and of
// activities.Shell.
type stepsInput struct {
	Steps []testStep `json:"steps"`
}

type testStep struct {
	Name  string `json:"name"`
	Shell shell  `json:"shell"`
	Retry bool   `json:"retry,omitempty"`
}

type shell struct {
	Command string            `json:"command"`
	Dir     string            `json:"dir,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Timeout time.Duration     `json:"timeout,omitempty"`
}

func TestOldCheckInputCases(t *testing.T) {
	steps := reflect.TypeFor[stepsInput]()
	tests := []struct {
		name    string
		typ     reflect.Type
		raw     string
		wantErr string
	}{
		{"fits", steps, `{"steps":[{"name":"a","shell":{"command":"true","timeout":5}}]}`, ""},
		{"null", steps, `null`, ""},
		{"no schema accepts anything", nil, `[1,"x"]`, ""},
		{"big integers stay exact", reflect.TypeFor[int64](), `9007199254740993`, ""},
		{"wrong nested type", steps, `{"steps":[{"name":"a"},{"name":1}]}`, "at /steps/1/name: want null or string, got number"},
		{"unknown field", steps, `{"stepz":[]}`, `at (root): property "stepz" not allowed`},
		{"non-integer duration", steps, `{"steps":[{"shell":{"timeout":1.5}}]}`, "at /steps/0/shell/timeout: want null or integer, got number"},
		{"invalid JSON", steps, `{`, "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := validate(t, tt.typ, tt.raw)
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
}
