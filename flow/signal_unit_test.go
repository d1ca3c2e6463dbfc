package flow

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/signals"
)

type ping struct {
	N int `json:"n"`
}

type pingsIn struct {
	Key    string        `json:"key,omitempty"`
	Before time.Duration `json:"before,omitempty"`
	// First and Second are the timeouts of the two waits; Second 0 skips the second.
	First  time.Duration `json:"first,omitempty"`
	Second time.Duration `json:"second,omitempty"`
}

type pingsOut struct {
	Got       []int  `json:"got"`
	SecondErr string `json:"second_err,omitempty"`
}

// pingsFlow waits for "ping" once, and a second time if asked, after an optional sleep.
// The first wait's error fails the run; the second's is returned in the result.
var pingsFlow = Define("people/pings", func(ctx *Context, in pingsIn) (pingsOut, error) {
	var out pingsOut
	if in.Before > 0 {
		if err := ctx.Sleep("before", in.Before); err != nil {
			return out, err
		}
	}
	p, err := WaitSignal[ping](ctx, "ping", in.Key, in.First)
	if err != nil {
		return out, err
	}
	out.Got = append(out.Got, p.N)
	if in.Second > 0 {
		p, err := WaitSignal[ping](ctx, "ping", in.Key, in.Second)
		if err != nil {
			out.SecondErr = err.Error()
		} else {
			out.Got = append(out.Got, p.N)
		}
	}
	return out, nil
})

func pingEnvelope(id, payload string) signals.Envelope {
	return signals.Envelope{Name: "ping", ID: id, Payload: json.RawMessage(payload), Sender: "alice"}
}

func TestWaitSignalDeliversASignalSentBeforeTheWaitOnce(t *testing.T) {
	env := newPeopleEnv(t, pingsFlow)
	signalAt(env, time.Minute, protocol.SignalName, pingEnvelope("p-1", `{"n":7}`))
	signalAt(env, 2*time.Minute, protocol.SignalName, pingEnvelope("p-1", `{"n":8}`))
	before := stateAt(t, env, 3*time.Minute)
	signalAt(env, 7*time.Minute, protocol.SignalName, pingEnvelope("p-1", `{"n":9}`)) // during the second wait
	env.ExecuteWorkflow(pingsFlow.Name(), pingsIn{Before: 5 * time.Minute, First: time.Hour, Second: 10 * time.Minute})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var out pingsOut
	require.NoError(t, env.GetWorkflowResult(&out))
	assert.Equal(t, []int{7}, out.Got, "delivered once")
	assert.Equal(t, "step ping: signal ping: nothing arrived within 10m0s", out.SecondErr, "the second wait timed out")

	assert.Equal(t, runs.StatusSleeping, before.Status)
	assert.Empty(t, before.SignalWaits)

	st := queryState(t, env)
	assert.Empty(t, st.Refused, "a repeated id is dropped, not refused")
	require.Len(t, st.SignalWaits, 2)
	require.NotNil(t, st.SignalWaits[0].Received)
	assert.Equal(t, "p-1", st.SignalWaits[0].Received.ID)
	assert.JSONEq(t, `{"n":7}`, string(st.SignalWaits[0].Received.Payload))
	assert.Equal(t, st.StartedAt.Add(time.Minute), st.SignalWaits[0].Received.SentAt, "stamped on arrival when the sender gave no time")
	assert.Nil(t, st.SignalWaits[1].Received)
	require.NotNil(t, st.SignalWaits[1].Deadline)
	assert.Equal(t, st.SignalWaits[1].Since.Add(10*time.Minute), *st.SignalWaits[1].Deadline)

	var pings []runs.Step
	for _, s := range st.Steps {
		if s.Name == "ping" {
			pings = append(pings, s)
		}
	}
	require.Len(t, pings, 2)
	assert.Equal(t, runs.KindSignal, pings[0].Kind)
	assert.Equal(t, runs.StepCompleted, pings[0].Status)
	assert.Equal(t, `from alice: {"n":7}`, pings[0].Output)
	assert.Equal(t, time.Duration(0), pings[0].EndedAt.Sub(pings[0].StartedAt), "the kept signal needed no wait")
	assert.Equal(t, runs.StepFailed, pings[1].Status)
	assert.Equal(t, "signal ping: nothing arrived within 10m0s", pings[1].Error)
}

func TestWaitSignalRefusesAPayloadThatDoesNotFitAndWaitsOn(t *testing.T) {
	env := newPeopleEnv(t, pingsFlow)
	signalAt(env, time.Minute, protocol.SignalName, pingEnvelope("p-bad", `{"n":"seven"}`))
	signalAt(env, 2*time.Minute, protocol.SignalName, signals.Envelope{Name: "ping", ID: "p-anon", Payload: json.RawMessage(`{"n":1}`)})
	signalAt(env, 3*time.Minute, protocol.SignalName, signals.Envelope{Name: "ping", Key: "other", ID: "p-key", Payload: json.RawMessage(`{"n":2}`), Sender: "bob"})
	during := stateAt(t, env, 6*time.Minute)
	signalAt(env, 10*time.Minute, protocol.SignalName, pingEnvelope("p-good", `{"n":8}`))
	env.ExecuteWorkflow(pingsFlow.Name(), pingsIn{Before: 5 * time.Minute, First: time.Hour})
	require.NoError(t, env.GetWorkflowError())
	var out pingsOut
	require.NoError(t, env.GetWorkflowResult(&out))
	assert.Equal(t, []int{8}, out.Got, "neither the bad payload nor another key's signal satisfied the wait")

	assert.Equal(t, runs.StatusWaitingSignal, during.Status)
	assert.Equal(t, []string{"signal:ping"}, during.Waiting)
	require.Len(t, during.Refused, 2)
	anon := during.Refused[0]
	assert.Equal(t, runs.RefusedSignal, anon.Kind)
	assert.Equal(t, "ping", anon.Name)
	assert.Contains(t, anon.Reason, "sender: required", "an envelope without a sender is refused on arrival")
	assert.Equal(t, during.StartedAt.Add(2*time.Minute), anon.At)
	bad := during.Refused[1]
	assert.Equal(t, runs.RefusedSignal, bad.Kind)
	assert.Equal(t, "alice", bad.By)
	assert.Contains(t, bad.Reason, "signal ping (id p-bad): payload refused: ")
	assert.Contains(t, bad.Reason, "at /n: want null or integer")
	assert.Equal(t, during.StartedAt.Add(5*time.Minute), bad.At, "refused when the wait took it")

	st := queryState(t, env)
	assert.Len(t, st.Refused, 2)
	assert.Equal(t, "p-good", st.SignalWaits[0].Received.ID)
}

func TestWaitSignalTimeoutFailsTheStep(t *testing.T) {
	env := newPeopleEnv(t, pingsFlow)
	env.ExecuteWorkflow(pingsFlow.Name(), pingsIn{First: time.Hour})
	require.True(t, env.IsWorkflowCompleted())
	require.ErrorContains(t, env.GetWorkflowError(), "step ping: signal ping: nothing arrived within 1h0m0s")
	st := queryState(t, env)
	assert.Equal(t, runs.StatusFailed, st.Status)
	p := stepByName(t, st, "ping")
	assert.Equal(t, runs.StepFailed, p.Status)
	assert.Equal(t, time.Hour, p.EndedAt.Sub(p.StartedAt))
	assert.Empty(t, st.Waiting)
}

func TestWaitSignalRefusesABadName(t *testing.T) {
	f := Define("people/bad-signal", func(ctx *Context, _ none) (none, error) {
		_, err := WaitSignal[ping](ctx, "no spaces", "", time.Minute)
		return none{}, err
	})
	env := newPeopleEnv(t, f)
	env.ExecuteWorkflow(f.Name(), none{})
	require.ErrorContains(t, env.GetWorkflowError(), `signals: envelope name: "no spaces": want 1-200 letters`)
	st := queryState(t, env)
	assert.Empty(t, st.SignalWaits)
	assert.Equal(t, runs.StepFailed, stepByName(t, st, "no spaces").Status)
}

// mockMailbox registers the mailbox activities and answers them with err, logging calls.
func mockMailbox(env *testsuite.TestWorkflowEnvironment, subErr error) (subs, unsubs *callLog[protocol.MailboxRequest]) {
	subs, unsubs = &callLog[protocol.MailboxRequest]{}, &callLog[protocol.MailboxRequest]{}
	env.RegisterActivityWithOptions(func(context.Context, protocol.MailboxRequest) error { return nil }, activity.RegisterOptions{Name: protocol.MailboxSubscribeActivity})
	env.RegisterActivityWithOptions(func(context.Context, protocol.MailboxRequest) error { return nil }, activity.RegisterOptions{Name: protocol.MailboxUnsubscribeActivity})
	env.OnActivity(protocol.MailboxSubscribeActivity, mock.Anything, mock.Anything).Return(func(_ context.Context, r protocol.MailboxRequest) error {
		subs.add(r)
		return subErr
	}).Maybe()
	env.OnActivity(protocol.MailboxUnsubscribeActivity, mock.Anything, mock.Anything).Return(func(_ context.Context, r protocol.MailboxRequest) error {
		unsubs.add(r)
		return nil
	}).Maybe()
	return subs, unsubs
}

func TestWaitSignalKeyedSubscribesToTheMailbox(t *testing.T) {
	env := newPeopleEnv(t, pingsFlow)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "run-keyed-1"})
	subs, unsubs := mockMailbox(env, nil)
	var subsDuring, unsubsDuring int
	signalAt(env, time.Minute, protocol.SignalName, pingEnvelope("p-unkeyed", `{"n":1}`))
	during := stateAt(t, env, 2*time.Minute)
	env.RegisterDelayedCallback(func() { subsDuring, unsubsDuring = len(subs.all()), len(unsubs.all()) }, 2*time.Minute)
	// The mailbox workflow delivers with this very signal.
	signalAt(env, 3*time.Minute, protocol.SignalName, signals.Envelope{Name: "ping", Key: "v1.2", ID: "p-k", Payload: json.RawMessage(`{"n":5}`), Sender: "mailbox"})
	env.ExecuteWorkflow(pingsFlow.Name(), pingsIn{Key: "v1.2", First: time.Hour})
	require.NoError(t, env.GetWorkflowError())
	var out pingsOut
	require.NoError(t, env.GetWorkflowResult(&out))
	assert.Equal(t, []int{5}, out.Got, "the unkeyed signal does not satisfy a keyed wait")

	want := protocol.MailboxRequest{Name: "ping", Key: "v1.2", WorkflowID: "run-keyed-1"}
	assert.Equal(t, []protocol.MailboxRequest{want}, subs.all(), "subscribed once, as this run, for every kept signal (zero since)")
	assert.Equal(t, []protocol.MailboxRequest{want}, unsubs.all(), "unsubscribed once the wait ended")
	assert.Equal(t, 1, subsDuring)
	assert.Equal(t, 0, unsubsDuring, "subscribed while waiting")
	assert.Equal(t, []string{"signal:ping/v1.2"}, during.Waiting)
	assert.Equal(t, runs.StatusWaitingSignal, during.Status)
	require.Len(t, during.SignalWaits, 1)
	assert.Equal(t, "v1.2", during.SignalWaits[0].Key)
}

func TestWaitSignalKeyedSubscribeFailureFailsTheStep(t *testing.T) {
	env := newPeopleEnv(t, pingsFlow)
	subs, unsubs := mockMailbox(env, temporal.NewNonRetryableApplicationError("no mailbox", "test", nil))
	env.ExecuteWorkflow(pingsFlow.Name(), pingsIn{Key: "v1", First: time.Hour})
	require.ErrorContains(t, env.GetWorkflowError(), "subscribe to signal:ping/v1")
	assert.Len(t, subs.all(), 1)
	assert.Empty(t, unsubs.all(), "nothing to undo")
	st := queryState(t, env)
	assert.Equal(t, runs.StepFailed, stepByName(t, st, "ping").Status)
	assert.Empty(t, st.Waiting, "it never waited")
}

func TestWaitSignalUnkeyedDoesNotUseTheMailbox(t *testing.T) {
	env := newPeopleEnv(t, pingsFlow)
	subs, unsubs := mockMailbox(env, nil)
	signalAt(env, time.Minute, protocol.SignalName, pingEnvelope("p-1", `{"n":1}`))
	env.ExecuteWorkflow(pingsFlow.Name(), pingsIn{First: time.Hour})
	require.NoError(t, env.GetWorkflowError())
	assert.Empty(t, subs.all())
	assert.Empty(t, unsubs.all())
}
