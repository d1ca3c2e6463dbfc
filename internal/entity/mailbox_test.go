package entity

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/signals"
)

// The mailbox workflow (ported from flow/mailbox_unit_test.go).

// mailboxStartedBySignal is the mailbox as SignalWithStartWorkflow starts it.
var mailboxStartedBySignal = startedBySignal(mailboxWorkflow,
	protocol.MailboxPost, protocol.MailboxSubscribe, protocol.MailboxUnsubscribe)

// delivery is one signal the mailbox sent to a run.
type delivery struct {
	To string
	ID string
	N  int
	At time.Duration // after the start
	// Failed marks a delivery to a run that has ended.
	Failed bool
}

// newMailboxEnv is a test environment running fn as the mailbox workflow, whose deliveries
// to runs are logged; deliveries to the runs in gone fail as for runs that have ended.
func newMailboxEnv(t *testing.T, fn any, gone ...string) (*testsuite.TestWorkflowEnvironment, *callLog[delivery], time.Time) {
	t.Helper()
	env := newTestEnv(t, protocol.MailboxWorkflowType, fn)
	log := &callLog[delivery]{}
	t0 := env.Now()
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", protocol.SignalName, mock.Anything).Return(
		func(_, workflowID, _, _ string, arg any) error {
			e, ok := arg.(signals.Envelope)
			if !ok {
				return fmt.Errorf("delivered a %T", arg)
			}
			var p ping
			_ = json.Unmarshal(e.Payload, &p)
			d := delivery{To: workflowID, ID: e.ID, N: p.N, At: env.Now().Sub(t0)}
			for _, g := range gone {
				if g == workflowID {
					d.Failed = true
					log.add(d)
					return errors.New("workflow execution already completed")
				}
			}
			log.add(d)
			return nil
		}).Maybe()
	return env, log, t0
}

func post(id string, n int) signals.Envelope {
	return signals.Envelope{Name: "go", Key: "v1", ID: id, Payload: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)), Sender: "alice"}
}

func subscribe(run string, since time.Time) protocol.MailboxRequest {
	return protocol.MailboxRequest{Name: "go", Key: "v1", WorkflowID: run, Since: since}
}

func mailboxState() MailboxState { return MailboxState{Name: "go", Key: "v1"} }

func TestMailboxDeliversEachPostToEverySubscriberOnce(t *testing.T) {
	env, log, t0 := newMailboxEnv(t, mailboxStartedBySignal, "run-gone")
	minute := time.Minute
	signalAt(env, 1*minute, protocol.MailboxSubscribe, subscribe("run-1", time.Time{}))
	signalAt(env, 2*minute, protocol.MailboxPost, post("s-1", 1))
	signalAt(env, 3*minute, protocol.MailboxSubscribe, subscribe("run-2", time.Time{})) // gets s-1, kept
	signalAt(env, 4*minute, protocol.MailboxPost, post("s-1", 99))                      // same id: delivered once
	signalAt(env, 5*minute, protocol.MailboxSubscribe, subscribe("run-gone", time.Time{}))
	signalAt(env, 6*minute, protocol.MailboxPost, post("s-2", 2)) // the failed delivery drops run-gone
	signalAt(env, 7*minute, protocol.MailboxUnsubscribe, subscribe("run-1", time.Time{}))
	signalAt(env, 8*minute, protocol.MailboxPost, post("s-3", 3))
	signalAt(env, 9*minute, protocol.MailboxSubscribe, subscribe("run-3", t0.Add(7*minute))) // only what was posted since
	signalAt(env, 10*minute, protocol.MailboxPost, signals.Envelope{Name: "go", Key: "v2", ID: "s-other", Sender: "alice"})
	signalAt(env, 11*minute, protocol.MailboxUnsubscribe, subscribe("run-2", time.Time{}))
	signalAt(env, 12*minute, protocol.MailboxUnsubscribe, subscribe("run-3", time.Time{}))
	env.ExecuteWorkflow(protocol.MailboxWorkflowType, mailboxState())
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())

	assert.Equal(t, []delivery{
		{To: "run-1", ID: "s-1", N: 1, At: 2 * minute},
		{To: "run-2", ID: "s-1", N: 1, At: 3 * minute},
		{To: "run-gone", ID: "s-1", N: 1, At: 5 * minute, Failed: true}, // then dropped
		{To: "run-1", ID: "s-2", N: 2, At: 6 * minute},
		{To: "run-2", ID: "s-2", N: 2, At: 6 * minute},
		{To: "run-2", ID: "s-3", N: 3, At: 8 * minute},
		{To: "run-3", ID: "s-3", N: 3, At: 9 * minute},
	}, log.all())
	ended := env.Now().Sub(t0)
	assert.GreaterOrEqual(t, ended, 8*minute+signals.DefaultRetention, "it keeps the last post for the retention window")
	assert.Less(t, ended, 8*minute+signals.DefaultRetention+time.Minute, "and ends when idle")
}

func TestMailboxKeepsAPostForALaterSubscriber(t *testing.T) {
	env, log, _ := newMailboxEnv(t, mailboxStartedBySignal)
	signalAt(env, time.Minute, protocol.MailboxPost, post("s-1", 1))
	signalAt(env, 2*time.Hour, protocol.MailboxSubscribe, subscribe("run-late", time.Time{}))
	signalAt(env, 3*time.Hour, protocol.MailboxSubscribe, subscribe("run-late", time.Time{})) // again: nothing new
	signalAt(env, 4*time.Hour, protocol.MailboxUnsubscribe, subscribe("run-late", time.Time{}))
	env.ExecuteWorkflow(protocol.MailboxWorkflowType, mailboxState())
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, []delivery{{To: "run-late", ID: "s-1", N: 1, At: 2 * time.Hour}}, log.all())
}

func TestMailboxEndsWhenIdle(t *testing.T) {
	t.Run("nothing kept, nobody subscribed", func(t *testing.T) {
		env, log, t0 := newMailboxEnv(t, mailboxWorkflow)
		env.ExecuteWorkflow(protocol.MailboxWorkflowType, mailboxState())
		require.True(t, env.IsWorkflowCompleted())
		require.NoError(t, env.GetWorkflowError())
		assert.Equal(t, time.Duration(0), env.Now().Sub(t0))
		assert.Empty(t, log.all())
	})
	t.Run("a kept signal expires", func(t *testing.T) {
		env, log, t0 := newMailboxEnv(t, mailboxWorkflow)
		m := signals.NewMailbox("go", "v1", time.Hour)
		require.True(t, m.Post(post("s-1", 1), t0.Add(-10*time.Minute)))
		env.ExecuteWorkflow(protocol.MailboxWorkflowType, MailboxState{Name: "go", Key: "v1", Mailbox: m})
		require.NoError(t, env.GetWorkflowError())
		ended := env.Now().Sub(t0)
		assert.GreaterOrEqual(t, ended, 50*time.Minute, "kept for the carried retention, from its posting")
		assert.Less(t, ended, 51*time.Minute)
		assert.Empty(t, log.all())
	})
	t.Run("the last subscriber leaves", func(t *testing.T) {
		env, log, t0 := newMailboxEnv(t, mailboxWorkflow)
		m := signals.NewMailbox("go", "v1", 0)
		assert.Empty(t, m.Subscribe("run-1", time.Time{}, t0))
		signalAt(env, time.Hour, protocol.MailboxUnsubscribe, subscribe("run-1", time.Time{}))
		env.ExecuteWorkflow(protocol.MailboxWorkflowType, MailboxState{Name: "go", Key: "v1", Mailbox: m})
		require.NoError(t, env.GetWorkflowError())
		assert.Equal(t, time.Hour, env.Now().Sub(t0))
		assert.Empty(t, log.all())
	})
}

func TestMailboxContinuesAsNewWithItsState(t *testing.T) {
	env, log, t0 := newMailboxEnv(t, mailboxStartedBySignal)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(protocol.MailboxSubscribe, subscribe("run-1", time.Time{}))
		for i := range mailboxMaxEvents {
			env.SignalWorkflow(protocol.MailboxPost, post(fmt.Sprintf("s-%d", i), i))
		}
	}, time.Minute)
	env.ExecuteWorkflow(protocol.MailboxWorkflowType, mailboxState())
	require.True(t, env.IsWorkflowCompleted())
	next := continuedAs[MailboxState](t, env.GetWorkflowError(), protocol.MailboxWorkflowType)
	assert.Equal(t, "go", next.Name)
	assert.Equal(t, "v1", next.Key)
	require.NotNil(t, next.Mailbox)
	assert.Len(t, next.Mailbox.Kept(t0.Add(time.Minute)), mailboxMaxEvents, "the kept signals go along")
	assert.Equal(t, []string{"run-1"}, next.Mailbox.Subscribers(), "and so do the subscribers")
	assert.Len(t, log.all(), mailboxMaxEvents)
	assert.Empty(t, next.Mailbox.Subscribe("run-1", time.Time{}, t0.Add(time.Minute)), "with what each was delivered")
}
