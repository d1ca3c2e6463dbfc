package entity

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/gateflow/gateflow/internal/protocol"
)

// The control workflow.

// resumed is one SignalResume the control entity sent to a held run.
type resumed struct {
	To       string
	Workflow string
	At       time.Duration // after the start
}

// newControlEnv is a test environment running the control entity as SignalWithStartWorkflow
// starts it, until the test sends stopSignal (it never ends by itself). Its resumes are
// logged; resumes to the runs in gone fail.
func newControlEnv(t *testing.T, gone ...string) (*testsuite.TestWorkflowEnvironment, *callLog[resumed], time.Time) {
	t.Helper()
	fn := stoppable(startedBySignal(controlWorkflow, protocol.ControlPause, protocol.ControlResume, protocol.ControlHold))
	env := newTestEnv(t, protocol.ControlWorkflowType, fn)
	log := &callLog[resumed]{}
	t0 := env.Now().UTC() // as workflow.Now gives it
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", protocol.SignalResume, mock.Anything).Return(
		func(_, workflowID, _, _ string, arg any) error {
			name, _ := arg.(string)
			log.add(resumed{To: workflowID, Workflow: name, At: env.Now().Sub(t0)})
			for _, g := range gone {
				if g == workflowID {
					return errors.New("workflow execution already completed")
				}
			}
			return nil
		}).Maybe()
	return env, log, t0
}

// pausedMemos logs the control entity's memos of the paused types.
func pausedMemos(env *testsuite.TestWorkflowEnvironment) *callLog[[]protocol.PausedType] {
	memos := &callLog[[]protocol.PausedType]{}
	env.OnUpsertMemo(mock.Anything).Run(func(args mock.Arguments) {
		if list, ok := args.Get(0).(map[string]any)[protocol.MemoPaused].([]protocol.PausedType); ok {
			memos.add(append([]protocol.PausedType(nil), list...))
		}
	}).Return(nil)
	return memos
}

func pause(name, by, reason string) protocol.ControlMessage {
	return protocol.ControlMessage{Workflow: name, By: by, Reason: reason}
}

func hold(name, run string) protocol.ControlMessage {
	return protocol.ControlMessage{Workflow: name, RunID: run}
}

func TestControlWorkflowHoldsRunsUntilResumed(t *testing.T) {
	env, log, t0 := newControlEnv(t)
	memos := pausedMemos(env)
	minute := time.Minute
	signalAt(env, 1*minute, protocol.ControlPause, pause("deploy", "alice", "freeze"))
	signalAt(env, 2*minute, protocol.ControlPause, pause("build", "bob", ""))
	signalAt(env, 3*minute, protocol.ControlHold, hold("deploy", "d-1"))
	signalAt(env, 4*minute, protocol.ControlHold, hold("deploy", "d-2"))
	signalAt(env, 5*minute, protocol.ControlHold, hold("build", "b-1"))
	signalAt(env, 6*minute, protocol.ControlHold, hold("test", "t-1")) // not paused: resumed on its way
	var beforeResume []resumed
	env.RegisterDelayedCallback(func() { beforeResume = log.all() }, 9*minute)
	signalAt(env, 10*minute, protocol.ControlResume, pause("deploy", "alice", ""))
	signalAt(env, 11*minute, protocol.ControlResume, pause("deploy", "alice", "")) // again: nothing held
	signalAt(env, 12*minute, stopSignal, nil)
	env.ExecuteWorkflow(protocol.ControlWorkflowType, ControlState{})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())

	assert.Equal(t, []resumed{{To: "t-1", Workflow: "test", At: 6 * minute}}, beforeResume, "the paused types' runs are held")
	assert.Equal(t, []resumed{
		{To: "t-1", Workflow: "test", At: 6 * minute},
		{To: "d-1", Workflow: "deploy", At: 10 * minute},
		{To: "d-2", Workflow: "deploy", At: 10 * minute},
	}, log.all(), "resume releases the held runs of that type only (b-1 stays held)")

	deploy := protocol.PausedType{Workflow: "deploy", By: "alice", Reason: "freeze", Since: t0.Add(minute)}
	build := protocol.PausedType{Workflow: "build", By: "bob", Since: t0.Add(2 * minute)}
	all := memos.all()
	require.Len(t, all, 8, "the memo is upserted after every message")
	assert.Equal(t, []protocol.PausedType{deploy}, all[0])
	assert.Equal(t, []protocol.PausedType{build, deploy}, all[1], "sorted by name")
	for i := 2; i < 6; i++ {
		assert.Equal(t, []protocol.PausedType{build, deploy}, all[i], "holds leave the paused types alone")
	}
	assert.Equal(t, []protocol.PausedType{build}, all[6], "deploy resumed")
	assert.Equal(t, []protocol.PausedType{build}, all[7])
}

func TestControlWorkflowGoesOnWhenAHeldRunIsGone(t *testing.T) {
	env, log, _ := newControlEnv(t, "d-gone")
	memos := pausedMemos(env)
	signalAt(env, time.Minute, protocol.ControlPause, pause("deploy", "alice", ""))
	signalAt(env, 2*time.Minute, protocol.ControlHold, hold("deploy", "d-gone"))
	signalAt(env, 3*time.Minute, protocol.ControlHold, hold("deploy", "d-2"))
	signalAt(env, 4*time.Minute, protocol.ControlResume, pause("deploy", "alice", ""))
	signalAt(env, 5*time.Minute, protocol.ControlPause, pause("deploy", "alice", "again"))
	signalAt(env, 6*time.Minute, stopSignal, nil)
	env.ExecuteWorkflow(protocol.ControlWorkflowType, ControlState{})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, []resumed{
		{To: "d-gone", Workflow: "deploy", At: 4 * time.Minute},
		{To: "d-2", Workflow: "deploy", At: 4 * time.Minute}, // after the failure
	}, log.all())
	all := memos.all()
	require.Len(t, all, 5)
	assert.Empty(t, all[3])
	require.Len(t, all[4], 1, "it still takes messages")
	assert.Equal(t, "again", all[4][0].Reason)
}

func TestControlWorkflowContinuesAsNewWithItsState(t *testing.T) {
	env, log, t0 := newControlEnv(t) // no memo mock: testify formats every call's memo
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(protocol.ControlPause, pause("deploy", "alice", "freeze"))
		env.SignalWorkflow(protocol.ControlHold, hold("deploy", "d-1"))
		for i := range controlMaxEvents - 2 {
			env.SignalWorkflow(protocol.ControlPause, pause(fmt.Sprintf("wf-%03d", i), "bob", ""))
		}
	}, time.Minute)
	env.ExecuteWorkflow(protocol.ControlWorkflowType, ControlState{})
	require.True(t, env.IsWorkflowCompleted())
	next := continuedAs[ControlState](t, env.GetWorkflowError(), protocol.ControlWorkflowType)
	assert.Empty(t, log.all(), "nobody resumed")
	assert.Len(t, next.Paused, controlMaxEvents-1)
	d := next.Paused["deploy"]
	assert.True(t, d.Since.Equal(t0.Add(time.Minute)), "paused at %v", d.Since)
	d.Since = time.Time{}
	assert.Equal(t, protocol.PausedType{Workflow: "deploy", By: "alice", Reason: "freeze"}, d)
	assert.Equal(t, map[string][]string{"deploy": {"d-1"}}, next.Held, "the held runs go along")
}
