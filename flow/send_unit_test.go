package flow

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/signals"
)

// sendIn says where sendFlow sends "deploy-done" (twice, with n 1 and 2).
type sendIn struct {
	Run string `json:"run,omitempty"`
	Key string `json:"key,omitempty"`
}

var sendFlow = Define("unit/send", func(ctx *Context, in sendIn) (string, error) {
	for n := 1; n <= 2; n++ {
		if err := ctx.Send("deploy-done", in.Run, in.Key, ping{N: n}); err != nil {
			return "", err
		}
	}
	return "sent", nil
})

func TestSendToARunSignalsItWithADeterministicEnvelope(t *testing.T) {
	env := newUnitEnv(t, runConfig{}, sendFlow)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "send-1"})
	var sent callLog[signals.Envelope]
	env.OnSignalExternalWorkflow(mock.Anything, "other-1", "", protocol.SignalName, mock.Anything).Run(func(args mock.Arguments) {
		sent.add(args.Get(4).(signals.Envelope))
	}).Return(nil)
	env.ExecuteWorkflow(sendFlow.Name(), sendIn{Run: "other-1", Key: "v1"})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())

	got := sent.all()
	require.Len(t, got, 2, "each send is delivered once")
	for i, id := range []string{"send-1/deploy-done", "send-1/deploy-done#2"} {
		e := got[i]
		assert.Equal(t, id, e.ID, "the sending run's ID and the step's activity ID")
		assert.Equal(t, "send-1", e.Sender)
		assert.Equal(t, "deploy-done", e.Name)
		assert.Equal(t, "v1", e.Key)
		assert.JSONEq(t, `{"n":`+string(rune('1'+i))+`}`, string(e.Payload))
		assert.False(t, e.SentAt.IsZero())
		assert.NoError(t, e.Validate(), "the same envelope as flowctl signals")
	}
	st := queryState(t, env)
	require.Len(t, st.Steps, 2)
	s := st.Steps[0]
	assert.Equal(t, runs.KindSend, s.Kind)
	assert.Equal(t, runs.StepCompleted, s.Status)
	assert.Equal(t, "deploy-done", s.Name)
	assert.Equal(t, `to run other-1: {"n":1}`, s.Output)
}

func TestSendToAKeyedMailboxPostsThroughTheActivityOnce(t *testing.T) {
	env := newUnitEnv(t, runConfig{}, sendFlow)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "send-2"})
	var posts callLog[signals.Envelope]
	var ids callLog[string]
	env.RegisterActivityWithOptions(func(ctx context.Context, e signals.Envelope) error {
		posts.add(e)
		ids.add(activity.GetInfo(ctx).ActivityID)
		if len(posts.all()) == 1 {
			return errors.New("server unavailable") // the retry posts the same envelope
		}
		return nil
	}, activity.RegisterOptions{Name: protocol.MailboxPostActivity})
	env.ExecuteWorkflow(sendFlow.Name(), sendIn{Key: "v1.2.3"})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())

	got := posts.all()
	require.Len(t, got, 3, "the first post retried once, the second once")
	assert.Equal(t, got[0], got[1], "a retry posts the same envelope, which the mailbox keeps once")
	assert.Equal(t, "send-2/deploy-done", got[0].ID)
	assert.Equal(t, "send-2/deploy-done#2", got[2].ID)
	assert.Equal(t, "v1.2.3", got[0].Key)
	assert.Equal(t, "send-2", got[0].Sender)
	assert.Equal(t, []string{"deploy-done", "deploy-done", "deploy-done#2"}, ids.all(), "the step's activity ID")
	s := stepByName(t, queryState(t, env), "deploy-done")
	assert.Equal(t, runs.KindSend, s.Kind)
	assert.Equal(t, runs.StepCompleted, s.Status)
	assert.Equal(t, `to mailbox signal:deploy-done/v1.2.3: {"n":1}`, s.Output)
}

func TestSendFailsItsStep(t *testing.T) {
	tests := []struct {
		name    string
		in      sendIn
		signal  error
		wantErr string
	}{
		{"no run and no key", sendIn{}, nil, "step deploy-done: send deploy-done: give a run, or a key for the mailbox"},
		{"a run that has ended", sendIn{Run: "gone-1"}, &temporal.UnknownExternalWorkflowExecutionError{},
			"step deploy-done: run gone-1 is not found or has ended"},
		{"a key too long", sendIn{Run: "r", Key: string(make([]byte, 300))}, nil, "step deploy-done: signals: envelope key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newUnitEnv(t, runConfig{}, sendFlow)
			env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, mock.Anything, mock.Anything, mock.Anything).Return(tt.signal).Maybe()
			env.ExecuteWorkflow(sendFlow.Name(), tt.in)
			require.True(t, env.IsWorkflowCompleted())
			require.ErrorContains(t, env.GetWorkflowError(), tt.wantErr)
			s := stepByName(t, queryState(t, env), "deploy-done")
			assert.Equal(t, runs.KindSend, s.Kind)
			assert.Equal(t, runs.StepFailed, s.Status)
		})
	}
}

func TestEnvelopeIDFitsTheLimit(t *testing.T) {
	assert.Equal(t, "rel-1/notify#2", envelopeID("rel-1", "notify#2"))
	long := envelopeID(string(make([]rune, 150)), string(make([]rune, 100)))
	assert.Regexp(t, `^sig-[0-9a-f]{32}$`, long)
}

// cancelFlow cancels the run in.Run and sends nothing else.
var cancelFlow = Define("unit/canceller", func(ctx *Context, in sendIn) (string, error) {
	return "", ctx.CancelRun(in.Run, "superseded by v2")
})

func TestCancelRunSendsTheReasonThenCancels(t *testing.T) {
	env := newUnitEnv(t, runConfig{}, cancelFlow)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "boss-1"})
	var order callLog[string]
	env.OnSignalExternalWorkflow(mock.Anything, "victim-1", "", protocol.SignalCancel,
		protocol.CancelReason{By: "boss-1", Reason: "superseded by v2"}).Run(func(mock.Arguments) { order.add("reason") }).Return(nil).Once()
	env.OnRequestCancelExternalWorkflow(mock.Anything, "victim-1", "").Run(func(mock.Arguments) { order.add("cancel") }).Return(nil).Once()
	env.ExecuteWorkflow(cancelFlow.Name(), sendIn{Run: "victim-1"})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	env.AssertExpectations(t)
	assert.Equal(t, []string{"reason", "cancel"}, order.all())
	s := stepByName(t, queryState(t, env), "cancel victim-1")
	assert.Equal(t, runs.KindSend, s.Kind)
	assert.Equal(t, runs.StepCompleted, s.Status)
	assert.Equal(t, "cancellation of run victim-1 requested", s.Output)
}

func TestCancelRunFailsForARunNotFoundOrItself(t *testing.T) {
	tests := []struct{ name, run, wantErr string }{
		{"not found or ended", "victim-2", "step cancel victim-2: run victim-2 is not found or has ended"},
		{"itself", "boss-2", "step cancel boss-2: cancel: a run cannot cancel itself"},
		{"no ID", "", "step cancel : cancel: the run ID is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newUnitEnv(t, runConfig{}, cancelFlow)
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "boss-2"})
			env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, mock.Anything, mock.Anything, mock.Anything).
				Return(&temporal.UnknownExternalWorkflowExecutionError{}).Maybe()
			cancels := 0
			env.OnRequestCancelExternalWorkflow(mock.Anything, mock.Anything, mock.Anything).Run(func(mock.Arguments) { cancels++ }).Return(nil).Maybe()
			env.ExecuteWorkflow(cancelFlow.Name(), sendIn{Run: tt.run})
			require.True(t, env.IsWorkflowCompleted())
			require.ErrorContains(t, env.GetWorkflowError(), tt.wantErr)
			assert.Zero(t, cancels, "nothing is cancelled")
			st := queryState(t, env)
			require.Len(t, st.Steps, 1)
			assert.Equal(t, runs.StepFailed, st.Steps[0].Status)
		})
	}
}

func TestSendAndCancelRunAreAllowedToFail(t *testing.T) {
	f := Define("unit/send-allowed", func(ctx *Context, _ none) (string, error) {
		actx := ctx.With(AllowFailure())
		var allowed *AllowedFailure
		if err := actx.Send("ping", "gone-3", "", json.RawMessage(`1`)); !errors.As(err, &allowed) {
			return "", err
		}
		if err := actx.CancelRun("gone-3", ""); !errors.As(err, &allowed) {
			return "", err
		}
		return "ok", nil
	})
	env := newUnitEnv(t, runConfig{}, f)
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, mock.Anything, mock.Anything, mock.Anything).
		Return(&temporal.UnknownExternalWorkflowExecutionError{})
	env.ExecuteWorkflow(f.Name(), none{})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	st := queryState(t, env)
	assert.Equal(t, runs.StatusWarning, st.Status)
	assert.Equal(t, 2, st.AllowedFailures)
}
