package flow

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/runs"
	"github.com/gateflow/gateflow/signals"
)

// bigNotes is a schema-valid answer to notesFlow of about n bytes.
func bigNotes(n int) json.RawMessage {
	b, _ := json.Marshal(releaseNotes{Summary: strings.Repeat("x", n), Risk: "low"})
	return b
}

// An answer bigger than the request's limit (64 KiB by default) is refused by the Validator
// with the limit, even when it matches the schema, and leaves nothing in the state; a small
// one then completes the run, and the state keeps it once.
func TestInputValidatorRefusesAnAnswerOverTheLimit(t *testing.T) {
	env := newPeopleEnv(t, notesFlow)
	huge := bigNotes(1_500_000)
	over := bigNotes(signals.DefaultMaxAnswerBytes)
	tooBig := updateAt(env, time.Minute, protocol.UpdateInput, protocol.InputAnswer{Name: "notes", Data: huge, By: "carol"})
	justOver := updateAt(env, 2*time.Minute, protocol.UpdateInput, protocol.InputAnswer{Name: "notes", Data: over, By: "mallory"})
	during := stateAt(t, env, 3*time.Minute)
	good := updateAt(env, 4*time.Minute, protocol.UpdateInput, protocol.InputAnswer{Name: "notes", Data: json.RawMessage(goodNotes), By: "carol"})
	env.ExecuteWorkflow(notesFlow.Name(), notesIn{})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())

	err := tooBig.refusal(t)
	assert.ErrorContains(t, err, `input "notes": the answer is 1500027 bytes of JSON; the limit is 65536 (max_answer_bytes)`)
	assert.ErrorContains(t, justOver.refusal(t), "the limit is 65536",
		"the size is checked before who answers: a non-assignee's big answer is refused with the limit too")
	require.Len(t, during.Inputs, 1)
	assert.Nil(t, during.Inputs[0].Answer, "a refused answer leaves nothing")
	good.value(t)
	st := queryState(t, env)
	require.NotNil(t, st.Inputs[0].Answer)
	assert.JSONEq(t, goodNotes, string(st.Inputs[0].Answer.Payload))
}

// A request may raise its limit up to signals.MaxAnswerBytesLimit; past it, the step fails
// at once with the field named.
func TestInputRequestMaxAnswerBytes(t *testing.T) {
	type in struct {
		Max int `json:"max"`
	}
	f := Define("people/limit", func(ctx *Context, in in) (releaseNotes, error) {
		return Input[releaseNotes](ctx, "notes", signals.InputRequest{Prompt: "Notes?", Schema: notesSchema, MaxAnswerBytes: in.Max})
	})
	t.Run("raised", func(t *testing.T) {
		env := newPeopleEnv(t, f)
		big := bigNotes(100 << 10)
		ok := updateAt(env, time.Minute, protocol.UpdateInput, protocol.InputAnswer{Name: "notes", Data: big, By: "carol"})
		env.ExecuteWorkflow(f.Name(), in{Max: 200 << 10})
		require.NoError(t, env.GetWorkflowError())
		ok.value(t)
	})
	t.Run("over the hard limit", func(t *testing.T) {
		env := newPeopleEnv(t, f)
		env.ExecuteWorkflow(f.Name(), in{Max: signals.MaxAnswerBytesLimit + 1})
		require.ErrorContains(t, env.GetWorkflowError(), "input request max_answer_bytes: 262145: want 0 (the default, 65536) to 262144")
	})
}

// A signal whose payload is over signals.MaxPayloadBytes, or whose name is junk, is refused
// on arrival and kept without its payload, with its name, sender and reason cut short; the
// wait goes on and a good signal completes it.
func TestOversizedSignalIsRefusedWithoutItsPayload(t *testing.T) {
	env := newPeopleEnv(t, pingsFlow)
	bigPayload := `{"n":1,"junk":"` + strings.Repeat("j", signals.MaxPayloadBytes) + `"}`
	signalAt(env, time.Minute, protocol.SignalName, pingEnvelope("p-big", bigPayload))
	junkName := strings.Repeat("n", 1<<20)
	signalAt(env, 2*time.Minute, protocol.SignalName, signals.Envelope{Name: junkName, ID: "p-name", Payload: json.RawMessage(`{"n":2}`), Sender: strings.Repeat("s", 1<<20)})
	signalAt(env, 3*time.Minute, protocol.SignalApproval, approval.Vote{Gate: strings.Repeat("g", 1<<20), Kind: approval.Approve, By: "alice"})
	during := stateAt(t, env, 4*time.Minute)
	signalAt(env, 5*time.Minute, protocol.SignalName, pingEnvelope("p-good", `{"n":8}`))
	env.ExecuteWorkflow(pingsFlow.Name(), pingsIn{First: time.Hour})
	require.NoError(t, env.GetWorkflowError())
	var out pingsOut
	require.NoError(t, env.GetWorkflowResult(&out))
	assert.Equal(t, []int{8}, out.Got)

	require.Len(t, during.Refused, 3)
	big := during.Refused[0]
	assert.Equal(t, runs.RefusedSignal, big.Kind)
	assert.Equal(t, "ping", big.Name)
	assert.Contains(t, big.Reason, "payload: 262161 bytes, more than the limit of 262144")
	for i, r := range during.Refused {
		assert.LessOrEqual(t, len(r.Name), maxRefusedName, "refusal %d", i)
		assert.LessOrEqual(t, len(r.By), maxRefusedName, "refusal %d", i)
		assert.LessOrEqual(t, len(r.Reason), maxRefusedReason, "refusal %d", i)
	}
	assert.Contains(t, during.Refused[1].Name, "bytes cut)")
	assert.Contains(t, during.Refused[1].Reason, "signals: envelope name: ")
	assert.Equal(t, runs.RefusedVote, during.Refused[2].Kind)
	raw, err := json.Marshal(during)
	require.NoError(t, err)
	assert.Less(t, len(raw), 16<<10, "the state keeps none of the 3 MB refused")
}

func TestBudgetRaiseAndPauseRefuseALongIdentity(t *testing.T) {
	env := newUnitEnv(t, runConfig{}, sleepyFlow)
	long := strings.Repeat("a", approval.MaxNameLen+1)
	raise := updateAt(env, time.Minute, protocol.UpdateBudget, protocol.BudgetRaise{To: "2", By: long})
	pause := updateAt(env, 2*time.Minute, protocol.UpdatePause, protocol.RunPause{Action: protocol.ControlPause, By: long})
	env.ExecuteWorkflow(sleepyFlow.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	assert.ErrorContains(t, raise.refusal(t), "budget raise: the identity (by) is 257 bytes long; the limit is 256")
	assert.ErrorContains(t, pause.refusal(t), "pause: the identity (by) is 257 bytes long; the limit is 256")
}

func TestClipText(t *testing.T) {
	assert.Equal(t, "short", clipText("short", 10))
	s := clipText(strings.Repeat("é", 1000), 100)
	assert.LessOrEqual(t, len(s), 100)
	assert.True(t, utf8.ValidString(s))
	assert.True(t, strings.HasSuffix(s, "bytes cut)"), s)
	assert.Equal(t, "a\uFFFDb", clipText("a\xffb", 10), "invalid UTF-8 is replaced")
}
