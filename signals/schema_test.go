package signals

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCompileSchemaErrors(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		code    CompileCode
		url     string
		message string // a substring of the first message
	}{
		{name: "bad JSON", raw: `{"type":`, code: CompileBadJSON, message: "unexpected EOF"},
		{name: "trailing data", raw: `{} {}`, code: CompileBadJSON, message: "after top-level value"},
		{name: "type is a number", raw: `{"type":5}`, code: CompileInvalid, message: "at /type: "},
		{name: "unknown type name", raw: `{"properties":{"a":{"type":"strin"}}}`, code: CompileInvalid, message: "at /properties/a/type: "},
		{name: "minimum not a number", raw: `{"minimum":"a"}`, code: CompileInvalid, message: "at /minimum: want number, got string"},
		{name: "bad pattern", raw: `{"pattern":"("}`, code: CompileInvalid, message: `at /pattern: want format "regex", got "("`},
		{name: "missing local ref", raw: `{"$ref":"#/$defs/missing"}`, code: CompileInvalid, message: `"#/$defs/missing" not found`},
		{name: "remote https ref", raw: `{"$ref":"https://example.com/x.json"}`, code: CompileRemoteRef, url: "https://example.com/x.json"},
		{name: "relative ref", raw: `{"$ref":"other.json"}`, code: CompileRemoteRef, url: "other.json"},
		{name: "ref against own $id", raw: `{"$id":"https://e.com/a.json","$ref":"b.json"}`, code: CompileRemoteRef, url: "https://e.com/b.json"},
		{name: "nested file ref", raw: `{"properties":{"x":{"$ref":"file:///etc/passwd"}}}`, code: CompileRemoteRef, url: "file:///etc/passwd"},
		{name: "unknown meta-schema", raw: `{"$schema":"https://example.com/meta"}`, code: CompileRemoteRef, url: "https://example.com/meta"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := CompileSchema(json.RawMessage(tt.raw))
			require.Error(t, err)
			assert.Nil(t, s)
			var ce *CompileError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tt.code, ce.Code)
			assert.Equal(t, tt.url, ce.URL)
			require.NotEmpty(t, ce.Errors)
			assert.Contains(t, ce.Errors[0], tt.message)
			assert.NotContains(t, err.Error(), "mem://", "internal base URL leaks")
			if tt.code == CompileRemoteRef {
				assert.Contains(t, err.Error(), "only references inside the schema are allowed")
			}
		})
	}
}

func TestCompileSchemaAccepts(t *testing.T) {
	for _, raw := range []string{
		``, ` `, `null`, `true`, `{}`,
		`{"$defs":{"n":{"type":"integer"}},"properties":{"a":{"$ref":"#/$defs/n"}}}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"string"}`,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"string"}`,
	} {
		s, err := CompileSchema(json.RawMessage(raw))
		require.NoError(t, err, raw)
		require.NotNil(t, s, raw)
	}
}

func TestSchemaValidateMessages(t *testing.T) {
	schema := MustCompileSchema(json.RawMessage(`{
		"type": "object",
		"required": ["name", "age"],
		"additionalProperties": false,
		"properties": {
			"name":  {"type": "string", "minLength": 2},
			"age":   {"type": "integer", "minimum": 0},
			"color": {"enum": ["red", "green"]},
			"mail":  {"type": "string", "format": "email"},
			"tags":  {"type": "array", "items": {"type": "string"}, "maxItems": 2},
			"n":     {"$ref": "#/$defs/small"},
			"a/b":   {"const": "x"}
		},
		"$defs": {"small": {"type": "number", "exclusiveMaximum": 10}}
	}`))
	tests := []struct {
		name    string
		payload string
		want    []string // nil: valid
	}{
		{name: "valid", payload: `{"name":"Al","age":3}`},
		{name: "type", payload: `{"name":"Al","age":"3"}`, want: []string{"at /age: want integer, got string"}},
		{name: "required", payload: `{"age":1}`, want: []string{`at (root): missing property "name"`}},
		{name: "two required", payload: `{}`, want: []string{`at (root): missing property "age"`, `at (root): missing property "name"`}},
		{name: "enum", payload: `{"name":"Al","age":1,"color":"blue"}`, want: []string{`at /color: want one of "red", "green", got "blue"`}},
		{name: "additional properties sorted", payload: `{"name":"Al","age":1,"zz":1,"yy":2}`,
			want: []string{`at (root): property "yy" not allowed`, `at (root): property "zz" not allowed`}},
		{name: "minimum and minLength", payload: `{"name":"A","age":-1}`,
			want: []string{"at /age: want >= 0, got -1", "at /name: want at least 2 characters, got 1"}},
		{name: "array item", payload: `{"name":"Al","age":1,"tags":["a",2]}`, want: []string{"at /tags/1: want string, got number"}},
		{name: "max items", payload: `{"name":"Al","age":1,"tags":["a","b","c"]}`, want: []string{"at /tags: want at most 2 items, got 3"}},
		{name: "format asserted", payload: `{"name":"Al","age":1,"mail":"nope"}`, want: []string{`at /mail: want format "email", got "nope"`}},
		{name: "local ref", payload: `{"name":"Al","age":1,"n":10}`, want: []string{"at /n: want < 10, got 10"}},
		{name: "pointer escaping", payload: `{"name":"Al","age":1,"a/b":"y"}`, want: []string{`at /a~1b: want "x", got "y"`}},
		{name: "root type", payload: `[]`, want: []string{"at (root): want object, got array"}},
		{name: "empty is null", payload: ``, want: []string{"at (root): want object, got null"}},
		{name: "invalid JSON", payload: `{"name":`, want: []string{"not valid JSON: unexpected EOF"}},
		{name: "trailing data", payload: `{} x`, want: []string{"not valid JSON: invalid character after top-level value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := schema.Validate(json.RawMessage(tt.payload))
			if tt.want == nil {
				require.NoError(t, err)
				return
			}
			var se *SchemaError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.want, se.Errors)
			// The same input gives the same messages every time (map order must not show).
			for range 20 {
				assert.Equal(t, err.Error(), schema.Validate(json.RawMessage(tt.payload)).Error())
			}
		})
	}
}

func TestSchemaValidateCapsMessages(t *testing.T) {
	schema := MustCompileSchema(json.RawMessage(`{"type":"object","additionalProperties":false}`))
	payload := `{"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1,"j":1,"k":1,"l":1}`
	var se *SchemaError
	require.ErrorAs(t, schema.Validate(json.RawMessage(payload)), &se)
	require.Len(t, se.Errors, MaxSchemaErrors)
	assert.Equal(t, `at (root): property "a" not allowed`, se.Errors[0])
	assert.Equal(t, "and 3 more", se.Errors[MaxSchemaErrors-1])
}

func TestNoSchemaAcceptsAnything(t *testing.T) {
	empty, err := CompileSchema(nil)
	require.NoError(t, err)
	null, err := CompileSchema(json.RawMessage("null"))
	require.NoError(t, err)
	var nilSchema *Schema
	for _, s := range []*Schema{empty, null, nilSchema, {}} {
		for _, p := range []string{`1`, `"x"`, `{"a":[1,2]}`, `null`, ``, `[]`} {
			assert.NoError(t, s.Validate(json.RawMessage(p)), p)
		}
		// Any JSON, but JSON all the same.
		var se *SchemaError
		require.ErrorAs(t, s.Validate(json.RawMessage(`{`)), &se)
		assert.Equal(t, []string{"not valid JSON: unexpected EOF"}, se.Errors)
		assert.Nil(t, s.Raw())
	}
}

func TestFalseSchemaAndRaw(t *testing.T) {
	s := MustCompileSchema(json.RawMessage(`false`))
	var se *SchemaError
	require.True(t, errors.As(s.Validate(json.RawMessage(`1`)), &se))
	assert.Equal(t, []string{"at (root): not allowed"}, se.Errors)
	assert.JSONEq(t, `false`, string(s.Raw()))
	assert.Panics(t, func() { MustCompileSchema(json.RawMessage(`{`)) })
}

func TestSchemaConcurrentValidate(t *testing.T) {
	s := MustCompileSchema(json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`))
	done := make(chan error, 8)
	for i := range 8 {
		go func() {
			var err error
			for range 50 {
				if i%2 == 0 {
					err = s.Validate(json.RawMessage(`{"n":1}`))
				} else if e := s.Validate(json.RawMessage(`{"n":"x"}`)); e == nil {
					err = errors.New("mismatch accepted")
				}
				if err != nil {
					break
				}
			}
			done <- err
		}()
	}
	for range 8 {
		require.NoError(t, <-done)
	}
}
