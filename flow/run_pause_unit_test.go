package flow

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/internal/protocol"
)

// One run paused and resumed with the Update gateflow.pause.

func pauseBy(who, reason string) protocol.RunPause {
	return protocol.RunPause{Action: protocol.ControlPause, By: who, Reason: reason}
}

func resumeBy(who string) protocol.RunPause {
	return protocol.RunPause{Action: protocol.ControlResume, By: who}
}

// shellStarts mocks shell steps: "build" takes 200ms of wall time (so an Update can come
// while it is in flight), the others return at once; it logs each start at the run's
// virtual time.
type shellStarts struct {
	mu     sync.Mutex
	env    *testsuite.TestWorkflowEnvironment
	t0     time.Time
	starts map[string]time.Duration
}

func newShellStarts(env *testsuite.TestWorkflowEnvironment) *shellStarts {
	s := &shellStarts{env: env, t0: env.Now(), starts: map[string]time.Duration{}}
	env.OnActivity(activities.ShellActivity, mock.Anything, mock.Anything).Return(
		func(_ context.Context, sh activities.Shell) (activities.ShellResult, error) {
			s.mu.Lock()
			s.starts[sh.Command] = env.Now().Sub(s.t0)
			s.mu.Unlock()
			if sh.Command == "build" {
				time.Sleep(200 * time.Millisecond)
			}
			return activities.ShellResult{Stdout: sh.Command}, nil
		}).Maybe()
	return s
}

func (s *shellStarts) started(cmd string) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.starts[cmd]
	return d, ok
}

// pausedFlow runs build, a wave (lint and unit), a sleep and ship.
var pausedFlow = Define("unit/paused", func(ctx *Context, _ none) (none, error) {
	if _, err := ctx.Shell("build", activities.Shell{Command: "build"}); err != nil {
		return none{}, err
	}
	if _, err := ctx.Parallel("checks", WaitAll,
		ShellStep("lint", activities.Shell{Command: "lint"}), ShellStep("unit", activities.Shell{Command: "unit"})); err != nil {
		return none{}, err
	}
	if err := ctx.Sleep("cool", time.Minute); err != nil {
		return none{}, err
	}
	_, err := ctx.Shell("ship", activities.Shell{Command: "ship"})
	return none{}, err
})

func TestPauseRunFinishesTheStepInFlightAndStartsNothingUntilResumed(t *testing.T) {
	env := newUnitEnv(t, runConfig{}, pausedFlow)
	shells := newShellStarts(env)
	statuses := statusUpserts(env)
	pause := updateAt(env, 50*time.Millisecond, protocol.UpdatePause, pauseBy("alice", "release freeze"))
	during := stateAt(t, env, 120*time.Millisecond)
	paused := stateAt(t, env, time.Hour)
	twice := updateAt(env, 2*time.Hour, protocol.UpdatePause, pauseBy("bob", ""))
	resume := updateAt(env, 3*time.Hour, protocol.UpdatePause, resumeBy("alice"))
	again := updateAt(env, 20*time.Millisecond, protocol.UpdatePause, resumeBy("alice"))
	env.ExecuteWorkflow(pausedFlow.Name(), none{})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())

	assert.Equal(t, runs.StatusPaused, pause.value(t), "the Update returns the run's status")
	assert.Equal(t, runs.StatusPaused, during.Status)
	require.Len(t, during.Steps, 1)
	assert.Equal(t, runs.StepRunning, during.Steps[0].Status, "paused while build was in flight")
	assert.Equal(t, runs.StatusPaused, paused.Status)
	assert.Equal(t, []string{"resume"}, paused.Waiting)
	require.NotNil(t, paused.Paused)
	assert.Equal(t, runs.PausedType{Workflow: "unit/paused", By: "alice", Reason: "release freeze", Since: paused.Paused.Since}, *paused.Paused)
	require.Len(t, paused.Steps, 1, "nothing new started while paused: %v", viewSteps(paused.Steps))
	assert.Equal(t, runs.StepCompleted, paused.Steps[0].Status, "the step in flight finished")
	w, err := runs.ParseWait(paused.Waiting[0])
	require.NoError(t, err)
	assert.Equal(t, "flowctl resume "+paused.ID, w.Command(paused.ID))

	assert.ErrorContains(t, twice.refusal(t), "pause: the run is already paused (by alice since ")
	assert.ErrorContains(t, twice.refusal(t), ": release freeze)")
	assert.Equal(t, runs.StatusRunning, resume.value(t))
	assert.EqualError(t, again.refusal(t), "resume: the run is not paused")

	for _, cmd := range []string{"lint", "unit"} {
		at, ok := shells.started(cmd)
		require.True(t, ok, cmd)
		assert.Equal(t, 3*time.Hour, at.Truncate(time.Second), "the wave started when resumed: %s", cmd)
	}
	at, ok := shells.started("ship")
	require.True(t, ok)
	assert.Equal(t, 3*time.Hour+time.Minute, at.Truncate(time.Second), "the sleep came after the resume")
	st := queryState(t, env)
	assert.Equal(t, runs.StatusCompleted, st.Status)
	assert.Empty(t, st.Waiting)
	assert.Nil(t, st.Paused)
	assert.Len(t, st.Steps, 5)
	assert.Equal(t, []string{"running", "paused", "running", "sleeping", "running", "completed"}, statuses.all())
}

func TestPauseRunSleepStartsOnlyWhenResumed(t *testing.T) {
	f := Define("unit/paused-sleep", func(ctx *Context, _ none) (none, error) {
		if _, err := ctx.Shell("build", activities.Shell{Command: "build"}); err != nil {
			return none{}, err
		}
		return none{}, ctx.Sleep("cool", time.Minute)
	})
	env := newUnitEnv(t, runConfig{}, f)
	newShellStarts(env)
	updateAt(env, 50*time.Millisecond, protocol.UpdatePause, pauseBy("alice", ""))
	paused := stateAt(t, env, time.Hour)
	updateAt(env, 2*time.Hour, protocol.UpdatePause, resumeBy("alice"))
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())

	assert.Len(t, paused.Steps, 1, "the sleep waits for the resume")
	st := queryState(t, env)
	cool := stepByName(t, st, "cool")
	assert.Equal(t, 2*time.Hour, cool.StartedAt.Sub(st.StartedAt).Truncate(time.Second))
	assert.Equal(t, 2*time.Hour+time.Minute, st.EndedAt.Sub(st.StartedAt).Truncate(time.Second))
}

func TestPauseRunGateDeadlineKeepsRunning(t *testing.T) {
	env := newPeopleEnv(t, gateFlow)
	updateAt(env, 10*time.Minute, protocol.UpdatePause, pauseBy("alice", ""))
	open := stateAt(t, env, 20*time.Minute)
	expired := stateAt(t, env, 2*time.Hour)
	updateAt(env, 3*time.Hour, protocol.UpdatePause, resumeBy("alice"))
	out := runGate(t, env, gateIn{Req: approval.Request{Approvers: []string{"alice"}, Timeout: time.Hour}, After: 10 * time.Minute, Handle: true})

	assert.Equal(t, runs.StatusPaused, open.Status, "paused wins over awaiting_approval")
	assert.Equal(t, []string{"approval:ship", "resume"}, open.Waiting, "the gate keeps waiting")
	assert.Equal(t, runs.StatusPaused, expired.Status)
	assert.Equal(t, []string{"resume"}, expired.Waiting)
	require.Len(t, expired.Gates, 1)
	assert.True(t, expired.Gates[0].Closed(), "the deadline passed while paused")
	assert.Len(t, expired.Steps, 1, "the sleep after the gate waits for the resume")

	assert.Equal(t, "timed_out", out.Err)
	st := queryState(t, env)
	assert.Equal(t, time.Hour, out.Decision.DecidedAt.Sub(st.StartedAt), "decided at the deadline")
	after := stepByName(t, st, "after")
	assert.Equal(t, 3*time.Hour, after.StartedAt.Sub(st.StartedAt).Truncate(time.Second))
	assert.Equal(t, runs.StatusCompleted, st.Status)
}

func TestPauseRunCancelledWhilePausedStillCleansUp(t *testing.T) {
	f := Define("unit/paused-cancel", func(ctx *Context, _ none) (none, error) {
		ctx.OnError("cleanup", activities.Shell{Command: "cleanup"})
		if _, err := ctx.Shell("build", activities.Shell{Command: "build"}); err != nil {
			return none{}, err
		}
		_, err := ctx.Shell("ship", activities.Shell{Command: "ship"})
		return none{}, err
	})
	env := newUnitEnv(t, runConfig{}, f)
	shells := newShellStarts(env)
	updateAt(env, 50*time.Millisecond, protocol.UpdatePause, pauseBy("alice", ""))
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Hour)
	env.ExecuteWorkflow(f.Name(), none{})
	require.Error(t, env.GetWorkflowError())

	_, shipped := shells.started("ship")
	assert.False(t, shipped, "ship never started")
	_, ok := shells.started("cleanup")
	assert.True(t, ok, "the OnError step is not held by the pause")
	st := queryState(t, env)
	assert.Equal(t, runs.StatusCancelled, st.Status)
	assert.Empty(t, st.Waiting, "an ended run waits for nothing")
	assert.Nil(t, st.Paused)
}

func TestPauseRunValidator(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	paused := &runs.PausedType{Workflow: "w", By: "alice", Reason: "freeze", Since: t0}
	long := string(make([]byte, maxPauseReason+1))
	tests := []struct {
		name    string
		status  runs.Status
		plan    bool
		paused  *runs.PausedType
		r       protocol.RunPause
		wantErr string
	}{
		{name: "pause", status: runs.StatusRunning, r: pauseBy("bob", "")},
		{name: "pause a pending run", status: runs.StatusPending, r: pauseBy("bob", "")},
		{name: "pause a run waiting for people", status: runs.StatusAwaitingApproval, r: pauseBy("bob", "")},
		{name: "resume", status: runs.StatusPaused, paused: paused, r: resumeBy("bob")},
		{name: "ended", status: runs.StatusCompleted, r: pauseBy("bob", ""), wantErr: "pause: the run has ended (completed)"},
		{name: "ended while paused", status: runs.StatusCancelled, paused: paused, r: resumeBy("bob"), wantErr: "resume: the run has ended (cancelled)"},
		{name: "twice", status: runs.StatusPaused, paused: paused, r: pauseBy("bob", ""), wantErr: "pause: the run is already paused (by alice since 2026-12-01 09:30:00 UTC: freeze)"},
		{name: "not paused", status: runs.StatusRunning, r: resumeBy("bob"), wantErr: "resume: the run is not paused"},
		{name: "a plan", status: runs.StatusRunning, plan: true, r: pauseBy("bob", ""), wantErr: "pause: the run is a plan"},
		{name: "unknown action", status: runs.StatusRunning, r: protocol.RunPause{Action: "stop"}, wantErr: `pause: action "stop": want "pause" or "resume"`},
		{name: "long reason", status: runs.StatusRunning, r: pauseBy("bob", long), wantErr: "pause: the reason is longer than 500 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &pausePart{rt: &runner{state: &runs.State{Status: tt.status}, setup: setupPart{plan: tt.plan}}, paused: tt.paused}
			err := p.check(tt.r)
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.EqualError(t, err, tt.wantErr)
		})
	}
}

func TestPauseRunStatusFor(t *testing.T) {
	rt := &runner{state: &runs.State{}, people: newPeoplePart(nil, nil)}
	p := &pausePart{rt: rt}
	assert.Equal(t, runs.StatusSleeping, p.statusFor(runs.StatusSleeping), "not paused: unchanged")
	p.paused, p.underlying = &runs.PausedType{}, runs.StatusRunning
	assert.Equal(t, runs.StatusPaused, p.statusFor(runs.StatusAwaitingApproval))
	assert.Equal(t, runs.StatusAwaitingApproval, p.underlying, "kept for the resume")
	assert.Equal(t, runs.StatusPaused, p.statusFor(runs.StatusPaused))
	assert.Equal(t, runs.StatusAwaitingApproval, p.underlying)
	assert.Equal(t, runs.StatusFailed, p.statusFor(runs.StatusFailed), "an end is not held")
	assert.Nil(t, p.paused, "and ends the pause")
	var none *pausePart
	assert.Equal(t, runs.StatusRunning, none.statusFor(runs.StatusRunning))
}

func TestResumeWait(t *testing.T) {
	w, err := runs.ParseWait("resume")
	require.NoError(t, err)
	assert.Equal(t, runs.Wait{Kind: runs.ForResume}, w)
	assert.Equal(t, "resume", w.String())
	assert.Equal(t, runs.StatusPaused, w.Status())
	assert.Equal(t, "flowctl resume release-1", w.Command("release-1"))
	typ, err := runs.ParseWait("resume:release")
	require.NoError(t, err)
	assert.Equal(t, runs.StatusPending, typ.Status())
	assert.Equal(t, "flowctl resume release", typ.Command("release-1"))
	_, err = runs.ParseWait("resume:")
	assert.Error(t, err)
}

func TestPauseRunChildStartsOnlyWhenResumed(t *testing.T) {
	child := Define("unit/paused-child", func(ctx *Context, in string) (string, error) { return in + "!", nil })
	parent := Define("unit/paused-parent", func(ctx *Context, _ none) (string, error) {
		if _, err := ctx.Shell("build", activities.Shell{Command: "build"}); err != nil {
			return "", err
		}
		return Child(ctx, "greet", child, "hi")
	})
	env := newUnitEnv(t, runConfig{}, parent, child)
	newShellStarts(env)
	updateAt(env, 50*time.Millisecond, protocol.UpdatePause, pauseBy("alice", ""))
	paused := stateAt(t, env, time.Hour)
	updateAt(env, 2*time.Hour, protocol.UpdatePause, resumeBy("alice"))
	env.ExecuteWorkflow(parent.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	var out string
	require.NoError(t, env.GetWorkflowResult(&out))
	assert.Equal(t, "hi!", out)

	assert.Len(t, paused.Steps, 1, "the child waits for the resume")
	st := queryState(t, env)
	greet := stepByName(t, st, "greet")
	assert.Equal(t, 2*time.Hour, greet.StartedAt.Sub(st.StartedAt).Truncate(time.Second))
}
