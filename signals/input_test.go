package signals

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInputRequestValidate(t *testing.T) {
	tests := []struct {
		name  string
		req   InputRequest
		field string
	}{
		{name: "minimal", req: InputRequest{Prompt: "Notes?"}},
		{name: "full", req: InputRequest{Prompt: "Notes?", Schema: json.RawMessage(`{"type":"string"}`),
			Assignees: []string{"alice", "group:release"}, Timeout: time.Hour}},
		{name: "prompt required", req: InputRequest{Prompt: " "}, field: "prompt"},
		{name: "schema must compile", req: InputRequest{Prompt: "p", Schema: json.RawMessage(`{"type":5}`)}, field: "schema"},
		{name: "schema must be self-contained", req: InputRequest{Prompt: "p", Schema: json.RawMessage(`{"$ref":"https://x/y"}`)}, field: "schema"},
		{name: "blank assignee", req: InputRequest{Prompt: "p", Assignees: []string{"alice", ""}}, field: "assignees"},
		{name: "group without a name", req: InputRequest{Prompt: "p", Assignees: []string{"group:"}}, field: "assignees"},
		{name: "negative timeout", req: InputRequest{Prompt: "p", Timeout: -time.Second}, field: "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.req.Validate()
			if tt.field == "" {
				require.NoError(t, err)
				return
			}
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, "input request", fe.Type)
			assert.Equal(t, tt.field, fe.Field)
		})
	}
	var ce *CompileError
	require.ErrorAs(t, InputRequest{Prompt: "p", Schema: json.RawMessage(`{"$ref":"https://x/y"}`)}.Validate(), &ce)
	assert.Equal(t, CompileRemoteRef, ce.Code)
}

func TestInputRequestJSON(t *testing.T) {
	r := InputRequest{Prompt: "Notes?", Schema: json.RawMessage(`{"type":"string"}`), Assignees: []string{"alice"}, Timeout: time.Minute}
	b, err := json.Marshal(r)
	require.NoError(t, err)
	assert.JSONEq(t, `{"prompt":"Notes?","schema":{"type":"string"},"assignees":["alice"],"timeout":60000000000}`, string(b))
	var back InputRequest
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, r, back)
}

func TestInputRequestAllowed(t *testing.T) {
	anyone := InputRequest{Prompt: "p"}
	assert.True(t, anyone.Allowed("bob"))
	assert.False(t, anyone.Allowed(""), "an identity is always needed")

	r := InputRequest{Prompt: "p", Assignees: []string{"alice", "group:release"}}
	assert.True(t, r.Allowed("alice"))
	assert.False(t, r.Allowed("Alice"), "exact match")
	assert.False(t, r.Allowed("release"), "group entries are not users")
	assert.False(t, r.Allowed("group:release"))
}

func TestInputRequestCheck(t *testing.T) {
	members := func(group, user string) bool { return group == "release" && user == "carol" }
	r := InputRequest{Prompt: "Age?", Schema: json.RawMessage(`{"type":"object","required":["age"],"properties":{"age":{"type":"integer"}}}`),
		Assignees: []string{"alice", "group:release"}}
	tests := []struct {
		name     string
		req      InputRequest
		by       string
		payload  string
		isMember func(group, user string) bool
		code     AnswerCode // "" means accepted
		errors   []string
	}{
		{name: "assignee with a valid answer", req: r, by: "alice", payload: `{"age":3}`, isMember: members},
		{name: "group member", req: r, by: "carol", payload: `{"age":3}`, isMember: members},
		{name: "anyone when no assignees", req: InputRequest{Prompt: "p"}, by: "zed", payload: `"x"`},
		{name: "no identity", req: r, by: "", payload: `{"age":3}`, isMember: members, code: CodeNoIdentity},
		{name: "blank identity", req: r, by: "  ", payload: `{"age":3}`, isMember: members, code: CodeNoIdentity},
		{name: "not an assignee", req: r, by: "bob", payload: `{"age":3}`, isMember: members, code: CodeNotAllowed},
		{name: "group without a resolver", req: r, by: "carol", payload: `{"age":3}`, code: CodeNotAllowed},
		{name: "identity before schema", req: r, by: "bob", payload: `{"age":"x"}`, isMember: members, code: CodeNotAllowed},
		{name: "schema mismatch", req: r, by: "alice", payload: `{"age":"3"}`, isMember: members, code: CodeSchema,
			errors: []string{"at /age: want integer, got string"}},
		{name: "invalid JSON", req: r, by: "alice", payload: `{`, isMember: members, code: CodeSchema,
			errors: []string{"not valid JSON: unexpected EOF"}},
		{name: "bad request schema", req: InputRequest{Prompt: "p", Schema: json.RawMessage(`{"type":5}`)}, by: "alice", payload: `1`, code: CodeSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.req.Check(tt.by, json.RawMessage(tt.payload), tt.isMember)
			if tt.code == "" {
				require.NoError(t, err)
				return
			}
			var ae *AnswerError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, tt.code, ae.Code)
			if tt.errors != nil {
				assert.Equal(t, tt.errors, ae.Errors)
				var se *SchemaError
				require.ErrorAs(t, err, &se)
			}
		})
	}
}

func TestInputLifecycle(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	in, err := NewInput("release-notes", InputRequest{Prompt: "Notes?", Schema: json.RawMessage(`{"type":"string","minLength":1}`),
		Assignees: []string{"alice"}, Timeout: time.Hour}, t0)
	require.NoError(t, err)
	d, ok := in.Deadline()
	require.True(t, ok)
	assert.Equal(t, t0.Add(time.Hour), d)

	tests := []struct {
		name    string
		by      string
		payload string
		at      time.Time
		code    AnswerCode
	}{
		{name: "schema refused at once", by: "alice", payload: `""`, at: t0.Add(time.Minute), code: CodeSchema},
		{name: "wrong person", by: "bob", payload: `"hi"`, at: t0.Add(time.Minute), code: CodeNotAllowed},
		{name: "past the deadline", by: "alice", payload: `"hi"`, at: t0.Add(time.Hour), code: CodeClosed},
	}
	for _, tt := range tests {
		var ae *AnswerError
		require.ErrorAs(t, in.Check(tt.by, json.RawMessage(tt.payload), tt.at, nil), &ae, tt.name)
		assert.Equal(t, tt.code, ae.Code, tt.name)
		assert.Equal(t, "release-notes", ae.Name, tt.name)
		assert.True(t, strings.HasPrefix(ae.Error(), `input "release-notes": `), ae.Error())
	}

	ans, err := in.Accept("alice", json.RawMessage(`"hi"`), t0.Add(2*time.Minute), nil)
	require.NoError(t, err)
	assert.Equal(t, InputAnswer{Name: "release-notes", Payload: json.RawMessage(`"hi"`), By: "alice", At: t0.Add(2 * time.Minute)}, ans)
	assert.True(t, in.Closed(t0.Add(2*time.Minute)))
	_, err = in.Accept("alice", json.RawMessage(`"again"`), t0.Add(3*time.Minute), nil)
	var ae *AnswerError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, CodeClosed, ae.Code)

	// Carried as JSON (e.g. over continue-as-new), it still checks the schema.
	b, err := json.Marshal(in)
	require.NoError(t, err)
	var back Input
	require.NoError(t, json.Unmarshal(b, &back))
	back.Answer = nil
	require.ErrorAs(t, back.Check("alice", json.RawMessage(`""`), t0.Add(time.Minute), nil), &ae)
	assert.Equal(t, CodeSchema, ae.Code)

	forever, err := NewInput("x", InputRequest{Prompt: "p"}, t0)
	require.NoError(t, err)
	_, ok = forever.Deadline()
	assert.False(t, ok)
	assert.False(t, forever.Closed(t0.Add(1000*time.Hour)))
	ans, err = forever.Accept("bob", nil, t0, nil)
	require.NoError(t, err)
	assert.Equal(t, json.RawMessage("null"), ans.Payload)

	_, err = NewInput("x", InputRequest{}, t0)
	var fe *FieldError
	require.ErrorAs(t, err, &fe)
}
