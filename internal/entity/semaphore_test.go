package entity

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/gateflow/gateflow/internal/protocol"
)

// The semaphore workflow.

var semaphoreStartedBySignal = startedBySignal(semaphoreWorkflow, protocol.SemaphoreAcquire, protocol.SemaphoreRelease)

// permit is one permit the semaphore sent to a run.
type permit struct {
	To    string
	Group string
	At    time.Duration // after the start
	// Failed marks a permit to a run that has ended.
	Failed bool
}

// semaphoreEnv is a test environment running the semaphore as SignalWithStartWorkflow starts
// it. Permits are logged; those to the runs in gone fail as for runs that have ended.
// closed answers the holder checks (nil: nobody closed); the checks are logged.
type semaphoreEnv struct {
	*testsuite.TestWorkflowEnvironment
	permits *callLog[permit]
	checks  *callLog[[]string]
	memos   *callLog[SemaphoreState]
	t0      time.Time
	// checkCall is the holder check's mock: a test may make it take time (After).
	checkCall *testsuite.MockCallWrapper
}

func newSemaphoreEnv(t *testing.T, closed func(holders []string) []string, gone ...string) *semaphoreEnv {
	t.Helper()
	return newSemaphoreEnvOf(t, semaphoreStartedBySignal, closed, gone...)
}

// newSemaphoreEnvOf is newSemaphoreEnv running wf (the semaphore as some start starts it).
func newSemaphoreEnvOf(t *testing.T, wf any, closed func(holders []string) []string, gone ...string) *semaphoreEnv {
	t.Helper()
	env := newTestEnv(t, protocol.SemaphoreWorkflowType, wf)
	s := &semaphoreEnv{TestWorkflowEnvironment: env, permits: &callLog[permit]{}, checks: &callLog[[]string]{},
		memos: &callLog[SemaphoreState]{}, t0: env.Now()}
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", protocol.SignalPermit, mock.Anything).Return(
		func(_, workflowID, _, _ string, arg any) error {
			g, _ := arg.(string)
			p := permit{To: workflowID, Group: g, At: env.Now().Sub(s.t0)}
			for _, r := range gone {
				if r == workflowID {
					p.Failed = true
					s.permits.add(p)
					return errors.New("workflow execution already completed")
				}
			}
			s.permits.add(p)
			return nil
		}).Maybe()
	env.RegisterActivityWithOptions(semaphoreActivities{}.check, activity.RegisterOptions{Name: protocol.SemaphoreCheckActivity})
	s.checkCall = env.OnActivity(protocol.SemaphoreCheckActivity, mock.Anything, mock.Anything).Return(
		func(_ context.Context, holders []string) ([]string, error) {
			s.checks.add(append([]string(nil), holders...))
			if closed == nil {
				return nil, nil
			}
			return closed(holders), nil
		}).Maybe()
	env.OnUpsertMemo(mock.Anything).Run(func(args mock.Arguments) {
		st, ok := args.Get(0).(map[string]any)[protocol.MemoSemaphore].(SemaphoreState)
		if !ok {
			return
		}
		st.Holders = append([]string(nil), st.Holders...)
		st.Waiting = append([]string(nil), st.Waiting...)
		st.Claims = maps.Clone(st.Claims)
		s.memos.add(st)
	}).Return(nil)
	return s
}

func acquire(run string, limit int) protocol.SemaphoreMessage {
	return protocol.SemaphoreMessage{Group: "deploys", Run: run, Limit: limit}
}

func release(run string) protocol.SemaphoreMessage {
	return protocol.SemaphoreMessage{Group: "deploys", Run: run}
}

func (s *semaphoreEnv) run(t *testing.T, st SemaphoreState) time.Duration {
	t.Helper()
	s.ExecuteWorkflow(protocol.SemaphoreWorkflowType, st)
	require.True(t, s.IsWorkflowCompleted())
	require.NoError(t, s.GetWorkflowError())
	return s.Now().Sub(s.t0)
}

func TestSemaphoreWorkflowGrantsOnePermitAtATime(t *testing.T) {
	s := newSemaphoreEnv(t, nil)
	var during SemaphoreState
	signalAt(s.TestWorkflowEnvironment, time.Second, protocol.SemaphoreAcquire, acquire("run-1", 1))
	signalAt(s.TestWorkflowEnvironment, 2*time.Second, protocol.SemaphoreAcquire, acquire("run-2", 1))
	s.RegisterDelayedCallback(func() { m := s.memos.all(); during = m[len(m)-1] }, 3*time.Second)
	signalAt(s.TestWorkflowEnvironment, 30*time.Second, protocol.SemaphoreRelease, release("run-1"))
	signalAt(s.TestWorkflowEnvironment, 40*time.Second, protocol.SemaphoreRelease, release("run-2"))
	ended := s.run(t, SemaphoreState{Group: "deploys", Limit: 1})

	assert.Equal(t, []permit{
		{To: "run-1", Group: "deploys", At: time.Second},
		{To: "run-2", Group: "deploys", At: 30 * time.Second}, // only once run-1 released
	}, s.permits.all())
	assert.Equal(t, SemaphoreState{Group: "deploys", Limit: 1, Holders: []string{"run-1"}, Waiting: []string{"run-2"}}, during,
		"the memo shows the holder and the waiter")
	assert.Equal(t, 40*time.Second, ended, "it ends when idle")
	memos := s.memos.all()
	require.NotEmpty(t, memos)
	assert.Empty(t, memos[len(memos)-1].Holders)
	assert.Empty(t, memos[len(memos)-1].Waiting)
	checks := s.checks.all()
	require.NotEmpty(t, checks, "the holders are checked while held")
	for _, c := range checks {
		require.Len(t, c, 1)
	}
	assert.Equal(t, []string{"run-1"}, checks[0])
	assert.Equal(t, []string{"run-2"}, checks[len(checks)-1])
}

func TestSemaphoreWorkflowDropsAPermitItCannotDeliver(t *testing.T) {
	s := newSemaphoreEnv(t, nil, "run-gone")
	signalAt(s.TestWorkflowEnvironment, time.Second, protocol.SemaphoreAcquire, acquire("run-1", 1))
	signalAt(s.TestWorkflowEnvironment, 2*time.Second, protocol.SemaphoreAcquire, acquire("run-gone", 1))
	signalAt(s.TestWorkflowEnvironment, 3*time.Second, protocol.SemaphoreAcquire, acquire("run-3", 1))
	signalAt(s.TestWorkflowEnvironment, 20*time.Second, protocol.SemaphoreRelease, release("run-1"))
	var after SemaphoreState
	s.RegisterDelayedCallback(func() { m := s.memos.all(); after = m[len(m)-1] }, 21*time.Second)
	signalAt(s.TestWorkflowEnvironment, 30*time.Second, protocol.SemaphoreRelease, release("run-3"))
	ended := s.run(t, SemaphoreState{Group: "deploys", Limit: 1})

	assert.Equal(t, []permit{
		{To: "run-1", Group: "deploys", At: time.Second},
		{To: "run-gone", Group: "deploys", At: 20 * time.Second, Failed: true}, // dropped
		{To: "run-3", Group: "deploys", At: 20 * time.Second},                  // the next waiter, at once
	}, s.permits.all())
	assert.Equal(t, []string{"run-3"}, after.Holders)
	assert.Empty(t, after.Waiting)
	assert.Equal(t, 30*time.Second, ended)
}

func TestSemaphoreWorkflowGrantsAgainAHolderThatAsksAgain(t *testing.T) {
	s := newSemaphoreEnv(t, nil)
	signalAt(s.TestWorkflowEnvironment, time.Second, protocol.SemaphoreAcquire, acquire("run-1", 1))
	signalAt(s.TestWorkflowEnvironment, 2*time.Second, protocol.SemaphoreAcquire, acquire("run-1", 1)) // its permit was lost
	signalAt(s.TestWorkflowEnvironment, 3*time.Second, protocol.SemaphoreRelease, release("run-1"))
	ended := s.run(t, SemaphoreState{Group: "deploys", Limit: 1})
	assert.Equal(t, []permit{
		{To: "run-1", Group: "deploys", At: time.Second},
		{To: "run-1", Group: "deploys", At: 2 * time.Second},
	}, s.permits.all())
	assert.Equal(t, 3*time.Second, ended)
}

func TestSemaphoreWorkflowReclaimsTheClosedHolders(t *testing.T) {
	// run-1 was terminated: it never releases; the check finds it closed 5s after the
	// semaphore last woke up.
	s := newSemaphoreEnv(t, func(holders []string) []string {
		var closed []string
		for _, h := range holders {
			if h == "run-1" {
				closed = append(closed, h)
			}
		}
		return closed
	})
	signalAt(s.TestWorkflowEnvironment, time.Second, protocol.SemaphoreAcquire, acquire("run-1", 1))
	signalAt(s.TestWorkflowEnvironment, 2*time.Second, protocol.SemaphoreAcquire, acquire("run-2", 1))
	signalAt(s.TestWorkflowEnvironment, time.Minute, protocol.SemaphoreRelease, release("run-2"))
	ended := s.run(t, SemaphoreState{Group: "deploys", Limit: 1})
	assert.Equal(t, []permit{
		{To: "run-1", Group: "deploys", At: time.Second},
		{To: "run-2", Group: "deploys", At: 2*time.Second + reclaimEvery},
	}, s.permits.all())
	assert.Equal(t, []string{"run-1"}, s.checks.all()[0])
	assert.Equal(t, time.Minute, ended)
}

func TestSemaphoreWorkflowLimitTwoFiveRuns(t *testing.T) {
	s := newSemaphoreEnv(t, nil)
	for i := 1; i <= 5; i++ {
		signalAt(s.TestWorkflowEnvironment, time.Duration(i)*time.Second, protocol.SemaphoreAcquire, acquire(fmt.Sprintf("run-%d", i), 2))
	}
	// Each holder releases 10s after its permit: run-1 and run-2 at 11s and 12s, and so on.
	for i, at := range []time.Duration{11, 12, 21, 22, 31} {
		signalAt(s.TestWorkflowEnvironment, at*time.Second, protocol.SemaphoreRelease, release(fmt.Sprintf("run-%d", i+1)))
	}
	ended := s.run(t, SemaphoreState{Group: "deploys"})
	var to []string
	for _, p := range s.permits.all() {
		to = append(to, p.To)
	}
	assert.Equal(t, []string{"run-1", "run-2", "run-3", "run-4", "run-5"}, to, "all 5 got a permit, in arrival order")
	for _, m := range s.memos.all() {
		assert.LessOrEqual(t, len(m.Holders), 2, "never more than 2 holders: %v", m.Holders)
		assert.Equal(t, 2, m.Limit, "the acquirers' limit")
	}
	assert.Equal(t, 31*time.Second, ended)
}

func TestSemaphoreWorkflowContinuesAsNewWithItsState(t *testing.T) {
	env := newTestEnv(t, protocol.SemaphoreWorkflowType, semaphoreStartedBySignal)
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", protocol.SignalPermit, mock.Anything).Return(nil).Maybe()
	// No memo mock: testify formats every call's memo, which grows with the queue.
	env.RegisterDelayedCallback(func() {
		for i := range semaphoreMaxSeen {
			env.SignalWorkflow(protocol.SemaphoreAcquire, acquire(fmt.Sprintf("run-%03d", i), 2))
		}
	}, time.Second)
	env.ExecuteWorkflow(protocol.SemaphoreWorkflowType, SemaphoreState{Group: "deploys", Limit: 2})
	require.True(t, env.IsWorkflowCompleted())
	next := continuedAs[SemaphoreState](t, env.GetWorkflowError(), protocol.SemaphoreWorkflowType)
	assert.Equal(t, "deploys", next.Group)
	assert.Equal(t, 2, next.Limit)
	assert.Equal(t, []string{"run-000", "run-001"}, next.Holders)
	require.Len(t, next.Waiting, semaphoreMaxSeen-2)
	assert.Equal(t, "run-002", next.Waiting[0], "the queue keeps its order")
}

// TestSemaphoreIdleAtItsEventLimitEnds: a semaphore that reached semaphoreMaxSeen messages
// just as its last holder left used to continue as new idle, and the next run waited for
// a signal for ever (its idle exit needed a message first). It ends instead.
func TestSemaphoreIdleAtItsEventLimitEnds(t *testing.T) {
	env := newTestEnv(t, protocol.SemaphoreWorkflowType, semaphoreStartedBySignal)
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", protocol.SignalPermit, mock.Anything).Return(nil).Maybe()
	env.OnUpsertMemo(mock.Anything).Return(nil)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(protocol.SemaphoreAcquire, acquire("h", 1000))
		for i := range (semaphoreMaxSeen - 2) / 2 {
			env.SignalWorkflow(protocol.SemaphoreAcquire, acquire(fmt.Sprint(i), 1000))
			env.SignalWorkflow(protocol.SemaphoreRelease, release(fmt.Sprint(i)))
		}
		env.SignalWorkflow(protocol.SemaphoreRelease, release("h"))
	}, time.Second)
	env.ExecuteWorkflow(protocol.SemaphoreWorkflowType, SemaphoreState{Group: "deploys", Limit: 1000})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError(), "an idle semaphore ends rather than continuing as new")
}

// TestSemaphoreContinuedIdleEnds: a run continued as new with nobody holding or waiting
// ends at once (as one continued by the old code would now).
func TestSemaphoreContinuedIdleEnds(t *testing.T) {
	env := newTestEnv(t, protocol.SemaphoreWorkflowType, semaphoreWorkflow)
	env.SetTestTimeout(10 * time.Second)
	env.OnUpsertMemo(mock.Anything).Return(nil).Maybe()
	env.ExecuteWorkflow(protocol.SemaphoreWorkflowType, SemaphoreState{Group: "deploys", Limit: 1, Holders: []string{}, Waiting: []string{}})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
}
