package flow

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/signals"
)

// releaseNotes is the answer type of notesFlow. Count is not in the request's schema, so
// only the type says it must be an integer.
type releaseNotes struct {
	Summary string `json:"summary"`
	Risk    string `json:"risk"`
	Count   int    `json:"count,omitempty"`
}

var notesSchema = json.RawMessage(`{"type":"object","required":["summary","risk"],"properties":{
	"summary":{"type":"string","minLength":10},"risk":{"enum":["low","medium","high"]}}}`)

type notesIn struct {
	Timeout time.Duration `json:"timeout,omitempty"`
	// After is a sleep after the input, so answers can arrive once it closed.
	After time.Duration `json:"after,omitempty"`
	// Handle makes the handler swallow the input's error.
	Handle bool `json:"handle,omitempty"`
}

// notesFlow asks carol or the writers group for release notes.
var notesFlow = Define("people/notes", func(ctx *Context, in notesIn) (releaseNotes, error) {
	notes, err := Input[releaseNotes](ctx, "notes", signals.InputRequest{
		Prompt: "Release notes?", Schema: notesSchema, Assignees: []string{"carol", "group:writers"}, Timeout: in.Timeout})
	if in.After > 0 {
		if serr := ctx.Sleep("after", in.After); serr != nil {
			return notes, serr
		}
	}
	if in.Handle {
		return notes, nil
	}
	return notes, err
})

const goodNotes = `{"summary":"Fixes the login bug","risk":"low","count":3}`

func TestInputValidatorRefusesBadAnswers(t *testing.T) {
	env := newPeopleEnv(t, notesFlow)
	cases := []struct {
		name, data, by string
		want           []string
	}{
		{"notes", `{"summary":"short","risk":"extreme"}`, "carol",
			[]string{`input "notes": answer does not match the schema: `, "at /risk: ", "at /summary: "}},
		{"notes", `{"summary":"Fixes the login bug"}`, "carol", []string{`at (root): missing property "risk"`}},
		{"notes", `{"summary":"Fixes the login bug","risk":"low","count":"many"}`, "carol",
			[]string{`input "notes": answer does not match the schema: `, "at /count: want null or integer, got string"}},
		{"notes", `{"summary":"Fixes the login bug","risk":"low","extra":true}`, "carol", []string{`property "extra" not allowed`}},
		{"notes", `[]`, "carol", []string{"at (root): want object, got array"}},
		{"notes", goodNotes, "mallory", []string{`input "notes": "mallory" is not among the assignees`}},
		{"notes", goodNotes, "dave", []string{`"dave" is not among the assignees`}},
		{"notes", goodNotes, "  ", []string{`input "notes": an answer needs an identity`}},
		{"other", goodNotes, "carol", []string{`input "other": the run is not waiting for this input`}},
	}
	outcomes := make([]*updateOutcome, len(cases))
	for i, c := range cases {
		outcomes[i] = updateAt(env, time.Duration(i+1)*time.Minute, protocol.UpdateInput, protocol.InputAnswer{Name: c.name, Data: json.RawMessage(c.data), By: c.by})
	}
	during := stateAt(t, env, 30*time.Minute)
	good := updateAt(env, 31*time.Minute, protocol.UpdateInput, protocol.InputAnswer{Name: "notes", Data: json.RawMessage(goodNotes), By: " wendy "})
	late := updateAt(env, 32*time.Minute, protocol.UpdateInput, protocol.InputAnswer{Name: "notes", Data: json.RawMessage(goodNotes), By: "carol"})
	env.ExecuteWorkflow(notesFlow.Name(), notesIn{After: time.Hour})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())

	for i, c := range cases {
		err := outcomes[i].refusal(t)
		for _, w := range c.want {
			assert.ErrorContains(t, err, w, "answer %d", i)
		}
	}
	assert.Equal(t, runs.StatusAwaitingInput, during.Status)
	assert.Equal(t, []string{"input:notes"}, during.Waiting)
	require.Len(t, during.Inputs, 1)
	assert.Nil(t, during.Inputs[0].Answer, "refused answers leave nothing")
	assert.Empty(t, during.Refused)

	ans, ok := good.value(t).(signals.InputAnswer)
	require.True(t, ok, "the Update returns the accepted answer")
	assert.Equal(t, "wendy", ans.By, "a member of an assigned group, trimmed")
	assert.JSONEq(t, goodNotes, string(ans.Payload))
	assert.ErrorContains(t, late.refusal(t), `input "notes": the run is not waiting for this input`, "an answer once it closed")

	var out releaseNotes
	require.NoError(t, env.GetWorkflowResult(&out))
	assert.Equal(t, releaseNotes{Summary: "Fixes the login bug", Risk: "low", Count: 3}, out, "the handler gets the answer decoded")

	st := queryState(t, env)
	notes := stepByName(t, st, "notes")
	assert.Equal(t, runs.KindInput, notes.Kind)
	assert.Equal(t, runs.StepCompleted, notes.Status)
	assert.Equal(t, "answered by wendy: "+goodNotes, notes.Output)
	assert.Equal(t, 31*time.Minute, notes.EndedAt.Sub(notes.StartedAt))
	require.Len(t, st.Inputs, 1)
	require.NotNil(t, st.Inputs[0].Answer)
	assert.Equal(t, st.StartedAt.Add(31*time.Minute), st.Inputs[0].Answer.At)
	assert.Empty(t, st.Waiting)
}

func TestInputGroupAssigneesNeedTheDirectory(t *testing.T) {
	env := newUnitEnv(t, runConfig{}, notesFlow)
	member := updateAt(env, time.Minute, protocol.UpdateInput, protocol.InputAnswer{Name: "notes", Data: json.RawMessage(goodNotes), By: "wendy"})
	user := updateAt(env, 2*time.Minute, protocol.UpdateInput, protocol.InputAnswer{Name: "notes", Data: json.RawMessage(goodNotes), By: "carol"})
	env.ExecuteWorkflow(notesFlow.Name(), notesIn{})
	require.NoError(t, env.GetWorkflowError())
	assert.ErrorContains(t, member.refusal(t), `"wendy" is not among the assignees`)
	ans, ok := user.value(t).(signals.InputAnswer)
	require.True(t, ok)
	assert.Equal(t, "carol", ans.By)
}

func TestInputTimeoutFailsTheStep(t *testing.T) {
	t.Run("returned", func(t *testing.T) {
		env := newPeopleEnv(t, notesFlow)
		env.ExecuteWorkflow(notesFlow.Name(), notesIn{Timeout: time.Hour})
		require.True(t, env.IsWorkflowCompleted())
		err := env.GetWorkflowError()
		require.ErrorContains(t, err, "input notes: nobody answered within 1h0m0s")
		st := queryState(t, env)
		assert.Equal(t, runs.StatusFailed, st.Status)
		notes := stepByName(t, st, "notes")
		assert.Equal(t, runs.StepFailed, notes.Status)
		assert.Equal(t, "input notes: nobody answered within 1h0m0s", notes.Error)
		assert.Equal(t, time.Hour, notes.EndedAt.Sub(notes.StartedAt))
		assert.Empty(t, st.Waiting)
	})
	t.Run("handled", func(t *testing.T) {
		env := newPeopleEnv(t, notesFlow)
		late := updateAt(env, time.Hour+time.Minute, protocol.UpdateInput, protocol.InputAnswer{Name: "notes", Data: json.RawMessage(goodNotes), By: "carol"})
		env.ExecuteWorkflow(notesFlow.Name(), notesIn{Timeout: time.Hour, After: 10 * time.Minute, Handle: true})
		require.NoError(t, env.GetWorkflowError())
		var out releaseNotes
		require.NoError(t, env.GetWorkflowResult(&out))
		assert.Equal(t, releaseNotes{}, out, "the zero value")
		assert.ErrorContains(t, late.refusal(t), "the run is not waiting for this input")
		st := queryState(t, env)
		assert.Equal(t, runs.StatusCompleted, st.Status)
		assert.Equal(t, runs.StepFailed, stepByName(t, st, "notes").Status)
	})
}

func TestInputStepErrorWrapsTheCause(t *testing.T) {
	var seen callLog[string]
	f := Define("people/input-errors", func(ctx *Context, _ none) (none, error) {
		_, err := Input[releaseNotes](ctx, "bad", signals.InputRequest{Prompt: "  "})
		var se *StepError
		if errors.As(err, &se) {
			seen.add(string(se.Kind) + " " + se.Step)
		}
		_, err = Input[releaseNotes](ctx, "quick", signals.InputRequest{Prompt: "p", Timeout: time.Minute})
		if errors.As(err, &se) {
			seen.add(string(se.Kind) + " " + se.Step)
		}
		return none{}, nil
	})
	env := newPeopleEnv(t, f)
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, []string{"input bad", "input quick"}, seen.all())
	st := queryState(t, env)
	bad := stepByName(t, st, "bad")
	assert.Equal(t, runs.StepFailed, bad.Status)
	assert.Contains(t, bad.Error, "input bad: signals: input request prompt: required")
	assert.Len(t, st.Inputs, 1, "an invalid request opens nothing")
}
