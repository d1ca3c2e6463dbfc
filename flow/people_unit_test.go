package flow

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/gateflow/gateflow/approval"
)

// peopleDir is the worker's approval directory in these tests.
var peopleDir = approval.StaticDirectory{"release": {"carol", "dave"}, "writers": {"wendy"}}

// newPeopleEnv is newUnitEnv with peopleDir as the worker's directory.
func newPeopleEnv(t *testing.T, flows ...Definition) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	return newUnitEnv(t, runConfig{directory: peopleDir}, flows...)
}

// updateOutcome is what one Update sent to a test run came back with.
type updateOutcome struct {
	mu        sync.Mutex
	sent      bool
	rejected  error
	accepted  bool
	completed bool
	result    any
	err       error
}

var updateSeq atomic.Int64

// updateAt sends the Update name with arg at the virtual time d after the start.
func updateAt(env *testsuite.TestWorkflowEnvironment, d time.Duration, name string, arg any) *updateOutcome {
	o := &updateOutcome{}
	env.RegisterDelayedCallback(func() {
		o.mu.Lock()
		o.sent = true
		o.mu.Unlock()
		env.UpdateWorkflow(name, fmt.Sprintf("%s-%d", name, updateSeq.Add(1)), &testsuite.TestUpdateCallback{
			OnReject: func(err error) { o.mu.Lock(); o.rejected = err; o.mu.Unlock() },
			OnAccept: func() { o.mu.Lock(); o.accepted = true; o.mu.Unlock() },
			OnComplete: func(r any, err error) {
				o.mu.Lock()
				o.completed, o.result, o.err = true, r, err
				o.mu.Unlock()
			},
		}, arg)
	}, d)
	return o
}

func voteAt(env *testsuite.TestWorkflowEnvironment, d time.Duration, v approval.Vote) *updateOutcome {
	return updateAt(env, d, protocol.UpdateApproval, v)
}

// refusal asserts that the Validator refused the Update (it never reached the handler)
// and returns why.
func (o *updateOutcome) refusal(t *testing.T) error {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	require.True(t, o.sent, "the update was sent")
	require.Error(t, o.rejected, "the update was refused")
	assert.False(t, o.accepted, "a refused update is not accepted")
	assert.False(t, o.completed, "a refused update does not run the handler")
	return o.rejected
}

// value asserts that the Update was accepted and completed without error and returns its
// result.
func (o *updateOutcome) value(t *testing.T) any {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	require.True(t, o.sent, "the update was sent")
	require.NoError(t, o.rejected, "the update was not refused")
	require.True(t, o.accepted, "the update was accepted")
	require.True(t, o.completed, "the update completed")
	require.NoError(t, o.err)
	return o.result
}

func (o *updateOutcome) vote(t *testing.T) approval.VoteResult {
	t.Helper()
	r, ok := o.value(t).(approval.VoteResult)
	require.True(t, ok, "the result is a approval.VoteResult")
	return r
}

// stateAt queries the run's state at the virtual time d after the start.
func stateAt(t *testing.T, env *testsuite.TestWorkflowEnvironment, d time.Duration) *runs.State {
	st := &runs.State{}
	env.RegisterDelayedCallback(func() { *st = queryState(t, env) }, d)
	return st
}

// signalAt sends the Signal name with arg at the virtual time d after the start.
func signalAt(env *testsuite.TestWorkflowEnvironment, d time.Duration, name string, arg any) {
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(name, arg) }, d)
}

// gateIn configures gateFlow.
type gateIn struct {
	Req approval.Request `json:"req"`
	// Before and After are sleeps around the gate.
	Before time.Duration `json:"before,omitempty"`
	After  time.Duration `json:"after,omitempty"`
	// Handle makes the handler swallow the gate's error.
	Handle bool `json:"handle,omitempty"`
}

// gateOut is what the handler saw.
type gateOut struct {
	Decision approval.Decision `json:"decision"`
	// Err is the kind of error the handler got: rejected, changes, timed_out, other or "".
	Err        string `json:"err,omitempty"`
	Comment    string `json:"comment,omitempty"`
	IsRejected bool   `json:"is_rejected,omitempty"`
}

// gateFlow opens the gate "ship" with the input's request, between optional sleeps.
var gateFlow = Define("people/gate", func(ctx *Context, in gateIn) (gateOut, error) {
	if in.Before > 0 {
		if err := ctx.Sleep("before", in.Before); err != nil {
			return gateOut{}, err
		}
	}
	d, err := ctx.Approval("ship", in.Req)
	out := gateOut{Decision: d, IsRejected: errors.Is(err, approval.ErrRejected)}
	var rej *approval.RejectedError
	var chg *approval.ChangesRequestedError
	var tmo *approval.TimedOutError
	switch {
	case errors.As(err, &rej):
		out.Err = "rejected"
	case errors.As(err, &chg):
		out.Err, out.Comment = "changes", chg.Comment()
	case errors.As(err, &tmo):
		out.Err = "timed_out"
	case err != nil:
		out.Err = "other"
	}
	if in.After > 0 {
		if serr := ctx.Sleep("after", in.After); serr != nil {
			return out, serr
		}
	}
	if in.Handle {
		return out, nil
	}
	return out, err
})

func runGate(t *testing.T, env *testsuite.TestWorkflowEnvironment, in gateIn) gateOut {
	t.Helper()
	env.ExecuteWorkflow(gateFlow.Name(), in)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var out gateOut
	require.NoError(t, env.GetWorkflowResult(&out))
	return out
}

func voters(votes []approval.Vote) []string {
	out := make([]string, 0, len(votes))
	for _, v := range votes {
		out = append(out, v.By)
	}
	return out
}

func approve(by string) approval.Vote {
	return approval.Vote{Gate: "ship", Kind: approval.Approve, By: by}
}

func TestApprovalQuorumCountsDistinctAllowedVoters(t *testing.T) {
	env := newPeopleEnv(t, gateFlow)
	first := voteAt(env, time.Minute, approve("alice"))
	waiting := stateAt(t, env, 90*time.Second)
	again := voteAt(env, 2*time.Minute, approve("alice"))
	outsider := voteAt(env, 3*time.Minute, approve("mallory"))
	member := voteAt(env, 4*time.Minute, approval.Vote{Gate: "ship", Kind: "approved", By: " carol ", Comment: "lgtm"})
	late := voteAt(env, 5*time.Minute, approval.Vote{Gate: "ship", Kind: approval.Reject, By: "bob", Comment: "too late"})
	after := stateAt(t, env, 6*time.Minute)
	out := runGate(t, env, gateIn{Req: approval.Request{Message: "Ship it?", Approvers: []string{"alice", "bob", "group:release"}, Required: 2}, After: 10 * time.Minute})

	assert.Equal(t, approval.VoteResult{Gate: "ship", Status: "open", Approvals: 1, Required: 2}, first.vote(t), "one vote of two keeps waiting")
	assert.Equal(t, runs.StatusAwaitingApproval, waiting.Status)
	assert.Equal(t, []string{"approval:ship"}, waiting.Waiting)
	require.Len(t, waiting.Gates, 1)
	assert.False(t, waiting.Gates[0].Closed())
	assert.Equal(t, runs.StepRunning, stepByName(t, *waiting, "ship").Status)

	assert.Equal(t, approval.VoteResult{Gate: "ship", Status: "duplicate", Approvals: 1, Required: 2}, again.vote(t), "the same voter twice counts once")
	assert.ErrorContains(t, outsider.refusal(t), "approval ship: mallory may not decide (approvers: alice, bob, group:release)")

	closing := member.vote(t)
	assert.Equal(t, approval.VoteStatus("approved"), closing.Status, "a member of a listed group completes the quorum")
	assert.Equal(t, 2, closing.Approvals)
	require.NotNil(t, closing.Decision)
	assert.Equal(t, "carol", closing.Decision.By, "identities are trimmed")

	assert.ErrorContains(t, late.refusal(t), "approval ship: already closed (approved at ")

	assert.Equal(t, runs.StatusSleeping, after.Status, "the run went on to its next step once the gate closed")
	assert.Empty(t, after.Waiting)

	assert.Equal(t, approval.Approved, out.Decision.Outcome)
	assert.Empty(t, out.Err)
	assert.Equal(t, []string{"alice", "carol"}, voters(out.Decision.Votes))
	assert.Equal(t, "lgtm", out.Decision.Comment)
	assert.Equal(t, approval.Approve, out.Decision.Votes[1].Kind, "the kind is recorded in its canonical spelling")

	st := queryState(t, env)
	assert.Equal(t, runs.StatusCompleted, st.Status)
	require.Len(t, st.Gates, 1)
	assert.Equal(t, []string{"alice"}, voters(st.Gates[0].Duplicates), "the repeated approval is kept, not counted")
	ship := stepByName(t, st, "ship")
	assert.Equal(t, runs.KindApproval, ship.Kind)
	assert.Equal(t, runs.StepCompleted, ship.Status)
	assert.Equal(t, "approved by alice, carol: lgtm", ship.Output)
	assert.Equal(t, 4*time.Minute, ship.EndedAt.Sub(ship.StartedAt))
}

func TestApprovalRefusesMalformedVotes(t *testing.T) {
	env := newPeopleEnv(t, gateFlow)
	cases := []struct {
		vote approval.Vote
		want string
	}{
		{approval.Vote{Gate: "ship", Kind: approval.Approve}, "a vote needs an identity"},
		{approval.Vote{Gate: "ship", Kind: approval.Approve, By: "group:release"}, `"group:release" is a group`},
		{approval.Vote{Gate: "ship", Kind: "maybe", By: "alice"}, `unknown vote "maybe"`},
		{approval.Vote{Gate: "ship", Kind: approval.RequestChanges, By: "alice"}, "asked for changes without a comment"},
		{approval.Vote{Kind: approval.Approve, By: "alice"}, "a vote needs the name of the gate"},
		{approval.Vote{Gate: "other", Kind: "maybe", By: "alice"}, `unknown vote "maybe"`},
	}
	outcomes := make([]*updateOutcome, len(cases))
	for i, c := range cases {
		outcomes[i] = voteAt(env, time.Duration(i+1)*time.Minute, c.vote)
	}
	closing := voteAt(env, time.Hour, approve("alice"))
	out := runGate(t, env, gateIn{Req: approval.Request{Approvers: []string{"alice"}}})
	for i, c := range cases {
		assert.ErrorContains(t, outcomes[i].refusal(t), c.want, "vote %d", i)
	}
	assert.Equal(t, approval.VoteStatus("approved"), closing.vote(t).Status)
	assert.Equal(t, []string{"alice"}, voters(out.Decision.Votes), "refused votes left nothing behind")
	st := queryState(t, env)
	assert.Empty(t, st.Gates[0].Refused)
	assert.Empty(t, st.Refused, "refused Updates are not recorded")
}

func TestApprovalVoteBeforeTheGateIsQueuedAndCountsWhenItOpens(t *testing.T) {
	env := newPeopleEnv(t, gateFlow)
	early := voteAt(env, time.Minute, approval.Vote{Gate: "ship", Kind: approval.Approve, By: "alice", Comment: "early"})
	outsider := voteAt(env, 2*time.Minute, approve("mallory"))
	before := stateAt(t, env, 3*time.Minute)
	opened := stateAt(t, env, 11*time.Minute)
	closing := voteAt(env, 12*time.Minute, approve("bob"))
	out := runGate(t, env, gateIn{Req: approval.Request{Approvers: []string{"alice", "bob"}, Required: 2}, Before: 10 * time.Minute})

	assert.Equal(t, approval.VoteResult{Gate: "ship", Status: "queued"}, early.vote(t))
	assert.Equal(t, approval.VoteResult{Gate: "ship", Status: "queued"}, outsider.vote(t), "the gate's rules are not known before it opens")
	assert.Empty(t, before.Gates)
	assert.Equal(t, runs.StatusSleeping, before.Status)
	require.Len(t, before.KeptVotes, 2, "kept votes show in the state before the gate opens")
	assert.Equal(t, []string{"alice", "mallory"}, voters(before.KeptVotes))
	assert.Empty(t, opened.KeptVotes, "taken by the gate when it opened")

	require.Len(t, opened.Gates, 1)
	g := opened.Gates[0]
	assert.Equal(t, []string{"alice"}, g.Approvals(), "the early vote counted when the gate opened")
	require.Len(t, g.Refused, 1, "the early vote from someone not allowed was refused then")
	assert.Equal(t, "mallory", g.Refused[0].Vote.By)
	assert.Equal(t, approval.CodeNotAllowed, g.Refused[0].Code)
	assert.Contains(t, g.Refused[0].Reason, "mallory may not decide")
	assert.Equal(t, runs.StatusAwaitingApproval, opened.Status)

	res := closing.vote(t)
	assert.Equal(t, approval.VoteStatus("approved"), res.Status)
	assert.Equal(t, 2, res.Approvals)
	assert.Equal(t, 2, res.Required)
	assert.Equal(t, approval.Approved, out.Decision.Outcome)
	assert.Equal(t, []string{"alice", "bob"}, voters(out.Decision.Votes))
	require.Len(t, out.Decision.Votes, 2)
	start := queryState(t, env).StartedAt
	assert.Equal(t, start.Add(time.Minute), out.Decision.Votes[0].At, "an early vote keeps its arrival time")
	assert.Equal(t, start.Add(12*time.Minute), out.Decision.DecidedAt)
}

func TestApprovalEarlyVotesThatMeetTheQuorumCloseTheGateAtOnce(t *testing.T) {
	env := newPeopleEnv(t, gateFlow)
	statuses := statusUpserts(env)
	early := voteAt(env, time.Minute, approve("alice"))
	out := runGate(t, env, gateIn{Req: approval.Request{Approvers: []string{"alice"}}, Before: 10 * time.Minute})
	assert.Equal(t, approval.VoteStatus("queued"), early.vote(t).Status)
	assert.Equal(t, approval.Approved, out.Decision.Outcome)
	st := queryState(t, env)
	ship := stepByName(t, st, "ship")
	assert.Equal(t, time.Duration(0), ship.EndedAt.Sub(ship.StartedAt), "no wait")
	assert.Equal(t, st.StartedAt.Add(10*time.Minute), out.Decision.DecidedAt, "decided when the gate opened, not when the vote arrived")
	assert.NotContains(t, statuses.all(), string(runs.StatusAwaitingApproval))
}

func TestApprovalRejection(t *testing.T) {
	req := approval.Request{Approvers: []string{"alice", "bob"}, Required: 2}
	reject := approval.Vote{Gate: "ship", Kind: approval.Reject, By: "bob", Comment: "not ready"}

	t.Run("handled", func(t *testing.T) {
		env := newPeopleEnv(t, gateFlow)
		voteAt(env, time.Minute, approve("alice"))
		res := voteAt(env, 2*time.Minute, reject)
		out := runGate(t, env, gateIn{Req: req, Handle: true})
		assert.Equal(t, approval.VoteStatus("rejected"), res.vote(t).Status, "one rejection closes the gate whatever approvals came before")
		assert.Equal(t, "rejected", out.Err, "the handler gets an *approval.RejectedError")
		assert.True(t, out.IsRejected)
		assert.Equal(t, approval.Rejected, out.Decision.Outcome)
		assert.Equal(t, "bob", out.Decision.By)
		assert.Equal(t, "not ready", out.Decision.Comment)
		st := queryState(t, env)
		assert.Equal(t, runs.StatusCompleted, st.Status, "a handled rejection does not end the run")
		ship := stepByName(t, st, "ship")
		assert.Equal(t, runs.StepFailed, ship.Status)
		assert.Equal(t, "approval ship: rejected by bob: not ready", ship.Error)
		assert.Equal(t, "rejected by alice, bob: not ready", ship.Output)
	})
	t.Run("returned", func(t *testing.T) {
		env := newUnitEnv(t, runConfig{directory: peopleDir, maxAttempts: 3}, gateFlow)
		voteAt(env, time.Minute, reject)
		env.ExecuteWorkflow(gateFlow.Name(), gateIn{Req: req})
		require.True(t, env.IsWorkflowCompleted())
		require.ErrorContains(t, env.GetWorkflowError(), "approval ship: rejected by bob: not ready")
		st := queryState(t, env)
		assert.Equal(t, runs.StatusRejected, st.Status)
		assert.Equal(t, "approval ship: rejected by bob: not ready", st.Error)
		assert.Equal(t, 1, st.Attempt, "a rejection is not retried")
	})
}

func TestApprovalRequestChangesCarriesTheComment(t *testing.T) {
	env := newPeopleEnv(t, gateFlow)
	res := voteAt(env, time.Minute, approval.Vote{Gate: "ship", Kind: "request-changes", By: "bob", Comment: "bump the version"})
	out := runGate(t, env, gateIn{Req: approval.Request{Approvers: []string{"alice", "bob"}}, Handle: true})
	assert.Equal(t, approval.VoteStatus("changes_requested"), res.vote(t).Status)
	assert.Equal(t, "changes", out.Err, "the handler gets an *approval.ChangesRequestedError")
	assert.Equal(t, "bump the version", out.Comment)
	assert.False(t, out.IsRejected)
	assert.Equal(t, approval.ChangesRequested, out.Decision.Outcome)
	assert.Equal(t, "changes_requested by bob: bump the version", stepByName(t, queryState(t, env), "ship").Output)
}

func TestApprovalDeadline(t *testing.T) {
	cases := []struct {
		name      string
		onTimeout approval.OnTimeout
		handle    bool
		status    runs.Status
		wantErr   string
		outcome   approval.Outcome
		handlerOk bool
	}{
		{"reject returned", approval.RejectOnTimeout, false, runs.StatusFailed, "approval ship: timed out at ", approval.TimedOut, false},
		{"reject handled", approval.RejectOnTimeout, true, runs.StatusCompleted, "", approval.TimedOut, false},
		{"default is reject", "", true, runs.StatusCompleted, "", approval.TimedOut, false},
		{"approve", approval.ApproveOnTimeout, false, runs.StatusCompleted, "", approval.Approved, true},
		{"fail returned", approval.FailOnTimeout, false, runs.StatusFailed, "; the run fails", approval.TimedOut, false},
		{"fail handled", approval.FailOnTimeout, true, runs.StatusFailed, "; the run fails", approval.TimedOut, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := runConfig{directory: peopleDir}
			if c.onTimeout == approval.FailOnTimeout {
				cfg.maxAttempts = 2 // and yet the run is not attempted again
			}
			env := newUnitEnv(t, cfg, gateFlow)
			voteAt(env, time.Minute, approve("alice"))
			late := voteAt(env, time.Hour+time.Minute, approve("bob"))
			env.ExecuteWorkflow(gateFlow.Name(), gateIn{Handle: c.handle, After: 10 * time.Minute, Req: approval.Request{
				Approvers: []string{"alice", "bob"}, Required: 2, Timeout: time.Hour, OnTimeout: c.onTimeout}})
			require.True(t, env.IsWorkflowCompleted())
			st := queryState(t, env)
			assert.Equal(t, c.status, st.Status)
			assert.Equal(t, 1, st.Attempt)
			if c.wantErr != "" {
				require.ErrorContains(t, env.GetWorkflowError(), c.wantErr)
				assert.Contains(t, st.Error, "(approved so far by alice)")
			} else {
				require.NoError(t, env.GetWorkflowError())
				var out gateOut
				require.NoError(t, env.GetWorkflowResult(&out))
				if c.handlerOk {
					assert.Empty(t, out.Err)
				} else {
					assert.Equal(t, "timed_out", out.Err, "the handler gets an *approval.TimedOutError")
				}
			}
			assert.ErrorContains(t, late.refusal(t), "already closed", "a vote after the deadline")
			require.Len(t, st.Gates, 1)
			d := st.Gates[0].Decision
			require.NotNil(t, d)
			assert.Equal(t, c.outcome, d.Outcome)
			assert.True(t, d.Expired)
			assert.Equal(t, approval.TimeoutActor, d.By)
			assert.Equal(t, c.onTimeout == approval.FailOnTimeout, d.FailRun)
			assert.Equal(t, st.StartedAt.Add(time.Hour), d.DecidedAt, "closed at the deadline")
			ship := stepByName(t, st, "ship")
			assert.Equal(t, time.Hour, ship.EndedAt.Sub(ship.StartedAt))
			if c.handlerOk {
				assert.Equal(t, runs.StepCompleted, ship.Status)
			} else {
				assert.Equal(t, runs.StepFailed, ship.Status)
				assert.Contains(t, ship.Error, "approval ship: timed out at ")
			}
			assert.NotNil(t, stepByName(t, st, "after").EndedAt, "the handler carried on after the gate")
		})
	}
}

func TestApprovalVotesSentAsSignalsFollowTheSameRules(t *testing.T) {
	env := newPeopleEnv(t, gateFlow)
	signalAt(env, time.Minute, protocol.SignalApproval, approve("alice")) // early: kept
	signalAt(env, 11*time.Minute, protocol.SignalApproval, approve("mallory"))
	signalAt(env, 12*time.Minute, protocol.SignalApproval, approval.Vote{Gate: "ship", Kind: approval.Approve})
	signalAt(env, 13*time.Minute, protocol.SignalApproval, approve("alice")) // duplicate: not refused, not counted
	during := stateAt(t, env, 14*time.Minute)
	signalAt(env, 15*time.Minute, protocol.SignalApproval, approve("bob"))
	signalAt(env, 16*time.Minute, protocol.SignalApproval, approval.Vote{Gate: "ship", Kind: approval.Reject, By: "alice", Comment: "wait"})
	out := runGate(t, env, gateIn{Req: approval.Request{Approvers: []string{"alice", "bob"}, Required: 2}, Before: 10 * time.Minute, After: 10 * time.Minute})

	assert.Equal(t, runs.StatusAwaitingApproval, during.Status)
	require.Len(t, during.Gates, 1)
	assert.Equal(t, []string{"alice"}, during.Gates[0].Approvals(), "the early signal vote counted")

	assert.Equal(t, approval.Approved, out.Decision.Outcome)
	assert.Equal(t, []string{"alice", "bob"}, voters(out.Decision.Votes))
	st := queryState(t, env)
	require.Len(t, st.Refused, 3)
	start := st.StartedAt
	want := []struct {
		by, reason string
		at         time.Duration
	}{
		{"mallory", "approval ship: mallory may not decide", 11 * time.Minute},
		{"", "approval ship: a vote needs an identity", 12 * time.Minute},
		{"alice", "approval ship: already closed", 16 * time.Minute},
	}
	for i, w := range want {
		r := st.Refused[i]
		assert.Equal(t, runs.RefusedVote, r.Kind)
		assert.Equal(t, "ship", r.Name)
		assert.Equal(t, w.by, r.By)
		assert.Contains(t, r.Reason, w.reason)
		assert.Equal(t, start.Add(w.at), r.At)
	}
	assert.Equal(t, []string{"alice"}, voters(st.Gates[0].Duplicates))
}

// mutableDir is a Directory whose groups change while the run waits.
type mutableDir struct {
	mu      sync.Mutex
	groups  map[string][]string
	lookups int
}

func (d *mutableDir) Members(group string) ([]string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.lookups++
	m, ok := d.groups[group]
	if !ok {
		return nil, fmt.Errorf("%w %q", approval.ErrUnknownGroup, group)
	}
	return slices.Clone(m), nil
}

func (d *mutableDir) set(group string, members ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.groups[group] = members
}

func (d *mutableDir) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lookups
}

func TestApprovalGroupMembershipIsSnapshottedWhenTheGateOpens(t *testing.T) {
	dir := &mutableDir{groups: map[string][]string{"release": {"carol"}}}
	env := newUnitEnv(t, runConfig{directory: dir}, gateFlow)
	env.RegisterDelayedCallback(func() { dir.set("release", "dave") }, time.Minute)
	joined := voteAt(env, 2*time.Minute, approve("dave"))
	left := voteAt(env, 3*time.Minute, approve("carol"))
	out := runGate(t, env, gateIn{Req: approval.Request{Approvers: []string{"group:release"}}})

	assert.ErrorContains(t, joined.refusal(t), "dave may not decide", "membership is the one the gate opened with")
	assert.Equal(t, approval.VoteStatus("approved"), left.vote(t).Status)
	assert.Equal(t, "carol", out.Decision.By)
	assert.Equal(t, 1, dir.count(), "the directory is read once, when the gate opens")
}

func TestApprovalGroupWithoutDirectoryAllowsNobodyFromIt(t *testing.T) {
	env := newUnitEnv(t, runConfig{}, gateFlow)
	member := voteAt(env, time.Minute, approve("carol"))
	user := voteAt(env, 2*time.Minute, approve("alice"))
	out := runGate(t, env, gateIn{Req: approval.Request{Approvers: []string{"alice", "group:release"}}})
	assert.ErrorContains(t, member.refusal(t), "cannot tell whether carol may decide")
	assert.Equal(t, approval.VoteStatus("approved"), user.vote(t).Status)
	assert.Equal(t, "alice", out.Decision.By)
}
