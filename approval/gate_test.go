package approval

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	t0  = time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	dir = StaticDirectory{"release": {"bob", "carol"}}
)

// at returns t0 plus m minutes.
func at(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }

func vote(kind VoteKind, by string, m int, comment string) Vote {
	return Vote{Gate: "ship", Kind: kind, By: by, At: at(m), Comment: comment}
}

func openShip(t *testing.T, req Request) *Gate {
	t.Helper()
	g, err := Open("ship", req, t0)
	require.NoError(t, err)
	return g
}

func TestOpen(t *testing.T) {
	g, err := Open("ship", Request{Message: "Ship?", Approvers: []string{" alice", "group:release", "alice"}, Timeout: time.Hour}, t0)
	require.NoError(t, err)
	assert.Equal(t, "ship", g.Name)
	assert.Equal(t, []string{"alice", "group:release"}, g.Request.Approvers)
	assert.Equal(t, 1, g.Request.Required)
	assert.Equal(t, RejectOnTimeout, g.Request.OnTimeout)
	assert.Equal(t, t0, g.OpenedAt)
	require.NotNil(t, g.Deadline)
	assert.Equal(t, at(60), *g.Deadline)
	assert.False(t, g.Closed())
	assert.NoError(t, g.Err())

	g, err = Open("ship", Request{}, t0)
	require.NoError(t, err)
	assert.Nil(t, g.Deadline)

	_, err = Open("ship", Request{Required: 2, Approvers: []string{"alice"}}, t0)
	assert.EqualError(t, err, "approval ship: required is 2 but only 1 distinct approvers are listed (alice)")
	_, err = Open("", Request{}, t0)
	assert.EqualError(t, err, `approval: gate name "" is empty or has surrounding spaces`)
	_, err = Open(" ship", Request{}, t0)
	assert.Error(t, err)
}

func TestQuorumOfTwo(t *testing.T) {
	g := openShip(t, Request{Approvers: []string{"alice", "group:release"}, Required: 2})

	d, err := g.Apply(vote(Approve, "alice", 1, "lgtm"), dir)
	require.NoError(t, err)
	assert.Nil(t, d, "one approval of two keeps the gate open")
	assert.Equal(t, 1, g.Remaining())
	assert.Equal(t, []string{"group:release"}, g.Pending())

	again := vote(Approve, " alice ", 2, "still lgtm")
	assert.True(t, g.IsDuplicate(again))
	require.NoError(t, g.Check(again, dir), "a repeat is not an error")
	d, err = g.Apply(again, dir)
	require.NoError(t, err)
	assert.Nil(t, d, "the same person twice counts once")
	assert.Equal(t, 1, g.Remaining())
	assert.Equal(t, []string{"alice"}, g.Approvals())
	require.Len(t, g.Duplicates, 1)
	assert.Equal(t, "alice", g.Duplicates[0].By)

	assert.False(t, g.IsDuplicate(vote(Approve, "bob", 3, "")))
	d, err = g.Apply(vote(Approve, "bob", 3, "ship it"), dir)
	require.NoError(t, err)
	require.NotNil(t, d)
	assert.Equal(t, Approved, d.Outcome)
	assert.Equal(t, "bob", d.By)
	assert.Equal(t, "ship it", d.Comment)
	assert.Equal(t, at(3), d.DecidedAt)
	assert.Equal(t, []string{"alice", "bob"}, []string{d.Votes[0].By, d.Votes[1].By})
	assert.False(t, d.Expired)
	assert.True(t, g.Closed())
	assert.Equal(t, 0, g.Remaining())
	assert.Nil(t, g.Pending())
	assert.NoError(t, g.Err())

	// The returned decision is a copy: changing it does not change the gate.
	d.Votes[0].By = "someone else"
	assert.Equal(t, "alice", g.Decision.Votes[0].By)
}

func TestApplyRefusals(t *testing.T) {
	tests := []struct {
		name  string
		req   Request
		setup []Vote
		vote  Vote
		dir   Directory
		code  Code
		msg   string // exact, or empty
	}{
		{name: "outsider", req: Request{Approvers: []string{"alice", "group:release"}},
			vote: vote(Approve, "mallory", 1, ""), dir: dir, code: CodeNotAllowed,
			msg: "approval ship: mallory may not decide (approvers: alice, group:release)"},
		{name: "outsider may not reject either", req: Request{Approvers: []string{"alice"}},
			vote: vote(Reject, "mallory", 1, "no"), dir: dir, code: CodeNotAllowed},
		{name: "vote after close", req: Request{Approvers: []string{"alice", "bob"}},
			setup: []Vote{vote(Approve, "alice", 1, "")}, vote: vote(Approve, "bob", 2, ""), dir: dir, code: CodeClosed,
			msg: "approval ship: already closed (approved at 2026-05-01T09:01:00Z); bob's vote was not counted"},
		{name: "reject after rejection", req: Request{},
			setup: []Vote{vote(Reject, "alice", 1, "no")}, vote: vote(Reject, "bob", 2, ""), dir: dir, code: CodeClosed,
			msg: "approval ship: already closed (rejected by alice at 2026-05-01T09:01:00Z); bob's vote was not counted"},
		{name: "unknown kind", req: Request{}, vote: vote("maybe", "alice", 1, ""), code: CodeUnknownKind,
			msg: `approval ship: unknown vote "maybe" (want approve, reject or request_changes)`},
		{name: "no identity", req: Request{}, vote: vote(Approve, "", 1, ""), code: CodeNoIdentity,
			msg: "approval ship: a vote needs an identity"},
		{name: "group as identity", req: Request{}, vote: vote(Approve, "group:release", 1, ""), code: CodeBadIdentity},
		{name: "wrong gate", req: Request{}, vote: Vote{Gate: "deploy", Kind: Approve, By: "alice"}, code: CodeWrongGate,
			msg: `approval ship: alice's vote is for gate "deploy", not this one`},
		{name: "no gate", req: Request{}, vote: Vote{Kind: Approve, By: "alice"}, code: CodeNoGate},
		{name: "changes without comment", req: Request{}, vote: vote(RequestChanges, "alice", 1, ""), code: CodeEmptyComment},
		{name: "unknown group", req: Request{Approvers: []string{"group:nope"}}, vote: vote(Approve, "bob", 1, ""), dir: dir,
			code: CodeDirectory, msg: `approval ship: cannot tell whether bob may decide: resolving group:nope: unknown group "nope" in the approval directory`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := openShip(t, tt.req)
			for _, v := range tt.setup {
				_, err := g.Apply(v, tt.dir)
				require.NoError(t, err)
			}
			before := snapshotJSON(t, g)

			checkErr := g.Check(tt.vote, tt.dir)
			d, applyErr := g.Apply(tt.vote, tt.dir)
			assert.Nil(t, d)
			for _, err := range []error{checkErr, applyErr} {
				var verr *VoteError
				require.True(t, errors.As(err, &verr), "want a *VoteError, got %v", err)
				assert.Equal(t, tt.code, verr.Code)
				if tt.msg != "" {
					assert.EqualError(t, err, tt.msg)
				}
			}
			assert.Equal(t, before, snapshotJSON(t, g), "a refused vote leaves no trace")
		})
	}
}

func TestDirectoryErrorUnwraps(t *testing.T) {
	g := openShip(t, Request{Approvers: []string{"group:nope"}})
	err := g.Check(vote(Approve, "bob", 1, ""), dir)
	assert.ErrorIs(t, err, ErrUnknownGroup)
}

func TestCheckNeverMutates(t *testing.T) {
	g := openShip(t, Request{Approvers: []string{"alice", "group:release"}, Required: 2})
	_, err := g.Apply(vote(Approve, "alice", 1, ""), dir)
	require.NoError(t, err)
	before := snapshotJSON(t, g)
	for _, v := range []Vote{
		vote(Approve, "bob", 2, ""), vote(Approve, "alice", 2, ""), vote(Reject, "carol", 2, "no"),
		vote(RequestChanges, "bob", 2, "fix"), vote(Approve, "mallory", 2, ""), vote("x", "bob", 2, ""),
	} {
		_ = g.Check(v, dir)
	}
	assert.Equal(t, before, snapshotJSON(t, g))
}

func TestRejectClosesImmediately(t *testing.T) {
	g := openShip(t, Request{Approvers: []string{"alice", "group:release"}, Required: 3})
	for _, v := range []Vote{vote(Approve, "alice", 1, ""), vote(Approve, "bob", 2, "")} {
		d, err := g.Apply(v, dir)
		require.NoError(t, err)
		require.Nil(t, d)
	}
	d, err := g.Apply(vote(Reject, "carol", 3, " not ready "), dir)
	require.NoError(t, err)
	require.NotNil(t, d)
	assert.Equal(t, Rejected, d.Outcome)
	assert.Equal(t, "carol", d.By)
	assert.Equal(t, "not ready", d.Comment)
	require.Len(t, d.Votes, 3)
	assert.Equal(t, Reject, d.Votes[2].Kind)

	err = g.Err()
	var rej *RejectedError
	require.True(t, errors.As(err, &rej))
	assert.Equal(t, "ship", rej.Gate)
	assert.Equal(t, *d, rej.Decision)
	assert.ErrorIs(t, err, ErrRejected)
	assert.NotErrorIs(t, err, ErrTimedOut)
	assert.EqualError(t, err, "approval ship: rejected by carol: not ready")
}

func TestChangeOfMind(t *testing.T) {
	// An approval does not stop the same person from rejecting while the gate is open.
	g := openShip(t, Request{Approvers: []string{"alice", "bob"}, Required: 2})
	_, err := g.Apply(vote(Approve, "alice", 1, ""), dir)
	require.NoError(t, err)
	assert.False(t, g.IsDuplicate(vote(Reject, "alice", 2, "")))
	d, err := g.Apply(vote(Reject, "alice", 2, "found a bug"), dir)
	require.NoError(t, err)
	require.NotNil(t, d)
	assert.Equal(t, Rejected, d.Outcome)
	assert.Equal(t, "alice", d.By)
}

func TestRequestChanges(t *testing.T) {
	g := openShip(t, Request{Approvers: []string{"alice", "bob"}, Required: 2})
	_, err := g.Apply(vote(Approve, "alice", 1, ""), dir)
	require.NoError(t, err)

	_, err = g.Apply(vote(RequestChanges, "bob", 2, ""), dir)
	var verr *VoteError
	require.True(t, errors.As(err, &verr))
	assert.Equal(t, CodeEmptyComment, verr.Code)
	assert.False(t, g.Closed())

	d, err := g.Apply(Vote{Gate: "ship", Kind: "changes", By: "bob", Comment: "bump the version", At: at(3)}, dir)
	require.NoError(t, err)
	require.NotNil(t, d)
	assert.Equal(t, ChangesRequested, d.Outcome)
	assert.Equal(t, "bump the version", d.Comment)
	assert.Equal(t, RequestChanges, d.Votes[1].Kind, "the canonical kind is recorded")

	err = g.Err()
	var cr *ChangesRequestedError
	require.True(t, errors.As(err, &cr))
	assert.Equal(t, "bump the version", cr.Comment())
	assert.ErrorIs(t, err, ErrChangesRequested)
	assert.EqualError(t, err, "approval ship: changes requested by bob: bump the version")
}

func TestExpire(t *testing.T) {
	tests := []struct {
		policy  OnTimeout
		outcome Outcome
		failRun bool
		errIs   error
		errMsg  string
	}{
		{policy: "", outcome: TimedOut, errIs: ErrTimedOut,
			errMsg: "approval ship: timed out at 2026-05-01T10:00:00Z without a decision (approved so far by alice)"},
		{policy: RejectOnTimeout, outcome: TimedOut, errIs: ErrTimedOut},
		{policy: ApproveOnTimeout, outcome: Approved},
		{policy: FailOnTimeout, outcome: TimedOut, failRun: true, errIs: ErrTimedOut,
			errMsg: "approval ship: timed out at 2026-05-01T10:00:00Z without a decision (approved so far by alice); the run fails"},
	}
	for _, tt := range tests {
		t.Run("on_timeout="+string(tt.policy), func(t *testing.T) {
			g := openShip(t, Request{Approvers: []string{"alice", "bob"}, Required: 2, Timeout: time.Hour, OnTimeout: tt.policy})
			_, err := g.Apply(vote(Approve, "alice", 1, ""), dir)
			require.NoError(t, err)

			assert.Nil(t, g.Expire(at(59)), "not before the deadline")
			assert.False(t, g.Closed())

			d := g.Expire(at(61))
			require.NotNil(t, d)
			assert.Equal(t, tt.outcome, d.Outcome)
			assert.Equal(t, tt.failRun, d.FailRun)
			assert.True(t, d.Expired)
			assert.Equal(t, TimeoutActor, d.By)
			assert.Equal(t, at(61), d.DecidedAt)
			require.Len(t, d.Votes, 1)
			assert.Equal(t, "alice", d.Votes[0].By)

			assert.Nil(t, g.Expire(at(120)), "a closed gate does not expire again")

			err = g.Err()
			if tt.errIs == nil {
				assert.NoError(t, err)
			} else {
				var to *TimedOutError
				require.True(t, errors.As(err, &to))
				assert.Equal(t, at(60), to.Deadline)
				assert.ErrorIs(t, err, tt.errIs)
				if tt.errMsg != "" {
					assert.EqualError(t, err, tt.errMsg)
				}
			}

			_, err = g.Apply(vote(Approve, "bob", 62, ""), dir)
			var verr *VoteError
			require.True(t, errors.As(err, &verr))
			assert.Equal(t, CodeClosed, verr.Code)
		})
	}
}

func TestExpireEdges(t *testing.T) {
	g := openShip(t, Request{})
	assert.Nil(t, g.Expire(at(10_000)), "no deadline, no expiry")

	g = openShip(t, Request{Timeout: time.Hour})
	d := g.Expire(at(60))
	require.NotNil(t, d, "expires exactly at the deadline")
	assert.Empty(t, d.Votes)
	assert.EqualError(t, g.Err(), "approval ship: timed out at 2026-05-01T10:00:00Z without a decision")

	_, err := g.Apply(vote(Approve, "bob", 61, ""), nil)
	assert.EqualError(t, err, "approval ship: already closed (timed out at 2026-05-01T10:00:00Z); bob's vote was not counted")

	g = openShip(t, Request{Timeout: time.Hour, OnTimeout: ApproveOnTimeout})
	g.Expire(at(60))
	_, err = g.Apply(vote(Approve, "bob", 61, ""), nil)
	assert.EqualError(t, err, "approval ship: already closed (approved at its deadline at 2026-05-01T10:00:00Z); bob's vote was not counted")
}

func TestPending(t *testing.T) {
	g := openShip(t, Request{Approvers: []string{"carol", "group:release", "alice"}, Required: 3})
	assert.Equal(t, []string{"carol", "group:release", "alice"}, g.Pending())
	_, err := g.Apply(vote(Approve, "alice", 1, ""), dir)
	require.NoError(t, err)
	_, err = g.Apply(vote(Approve, "bob", 2, ""), dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"carol", "group:release"}, g.Pending(), "groups stay; approved users go")
	assert.Equal(t, 1, g.Remaining())

	assert.Nil(t, openShip(t, Request{}).Pending(), "anyone may decide")
}

func TestApplyEarly(t *testing.T) {
	var in Inbox
	// Votes arrive before the run reaches the gate; the inbox checks only their form.
	for _, v := range []Vote{
		vote(Approve, "mallory", -30, ""), // not allowed by the gate's rules
		vote(Approve, "carol", -20, ""),   // allowed through group:release
		vote(Approve, "carol", -15, ""),   // a repeat: dropped by the inbox
		vote(Approve, "alice", -10, ""),   // completes the quorum of 2
		vote(Reject, "bob", -5, "late"),   // the gate is closed by then
	} {
		require.NoError(t, in.Add(v))
	}
	require.NoError(t, in.Add(Vote{Gate: "other", Kind: Approve, By: "alice"}))

	g := openShip(t, Request{Approvers: []string{"alice", "group:release"}, Required: 2})
	d := g.ApplyEarly(in.Take("ship"), dir)
	require.NotNil(t, d)
	assert.Equal(t, Approved, d.Outcome)
	assert.Equal(t, "alice", d.By)
	assert.Equal(t, t0, d.DecidedAt, "an early decision is dated when the gate opened")
	assert.Equal(t, []string{"carol", "alice"}, g.Approvals())

	require.Len(t, g.Refused, 2)
	assert.Equal(t, "mallory", g.Refused[0].Vote.By)
	assert.Equal(t, CodeNotAllowed, g.Refused[0].Code)
	assert.Equal(t, "approval ship: mallory may not decide (approvers: alice, group:release)", g.Refused[0].Reason)
	assert.Equal(t, "bob", g.Refused[1].Vote.By)
	assert.Equal(t, CodeClosed, g.Refused[1].Code)

	assert.Nil(t, in.Take("ship"), "taken once")
	assert.Equal(t, 1, in.Len(), "other gates' votes stay")
}

func TestApplyEarlyUsesRulesAtOpenTime(t *testing.T) {
	// Votes are checked against the directory as it is when the gate opens, not when they
	// arrived: dave is in the group then and his early vote counts; erin is not, and hers
	// is refused (first as closed, since dave's vote closed the gate, then, on a gate
	// needing two, as not allowed).
	var in Inbox
	require.NoError(t, in.Add(vote(Approve, "dave", -10, "")))
	require.NoError(t, in.Add(vote(Approve, "erin", -9, "")))
	atOpen := StaticDirectory{"release": {"dave"}}

	g := openShip(t, Request{Approvers: []string{"group:release"}, Required: 1})
	d := g.ApplyEarly(in.Take("ship"), atOpen)
	require.NotNil(t, d)
	assert.Equal(t, "dave", d.By)
	require.Len(t, g.Refused, 1)
	assert.Equal(t, "erin", g.Refused[0].Vote.By)
	assert.Equal(t, CodeClosed, g.Refused[0].Code)

	g = openShip(t, Request{Approvers: []string{"group:release"}, Required: 2})
	assert.Nil(t, g.ApplyEarly([]Vote{vote(Approve, "erin", -9, "")}, atOpen))
	require.Len(t, g.Refused, 1)
	assert.Equal(t, CodeNotAllowed, g.Refused[0].Code)
	assert.Empty(t, g.Votes)
}

func TestDecisionJSONRoundTrip(t *testing.T) {
	d := Decision{
		Outcome:   ChangesRequested,
		Votes:     []Vote{vote(Approve, "alice", 1, "ok"), vote(RequestChanges, "bob", 2, "bump it")},
		DecidedAt: at(2),
		By:        "bob",
		Comment:   "bump it",
	}
	data, err := json.Marshal(d)
	require.NoError(t, err)
	assert.JSONEq(t, `{
		"outcome": "changes_requested",
		"votes": [
			{"gate": "ship", "vote": "approve", "by": "alice", "comment": "ok", "at": "2026-05-01T09:01:00Z"},
			{"gate": "ship", "vote": "request_changes", "by": "bob", "comment": "bump it", "at": "2026-05-01T09:02:00Z"}
		],
		"decided_at": "2026-05-01T09:02:00Z",
		"by": "bob",
		"comment": "bump it"
	}`, string(data))
	var back Decision
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, d, back)

	timeout := Decision{Outcome: TimedOut, DecidedAt: at(60), By: TimeoutActor, Expired: true, FailRun: true}
	data, err = json.Marshal(timeout)
	require.NoError(t, err)
	assert.JSONEq(t, `{"outcome":"timed_out","decided_at":"2026-05-01T10:00:00Z","by":"timeout","expired":true,"fail_run":true}`, string(data))
	back = Decision{}
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, timeout, back)
}

func TestGateJSONRoundTrip(t *testing.T) {
	g := openShip(t, Request{Message: "Ship?", Details: "**v1.4**", Approvers: []string{"alice", "group:release"}, Required: 2, Timeout: time.Hour})
	g.ApplyEarly([]Vote{vote(Approve, "mallory", -1, "")}, dir)
	_, err := g.Apply(vote(Approve, "alice", 1, ""), dir)
	require.NoError(t, err)
	_, err = g.Apply(vote(Approve, "alice", 2, ""), dir)
	require.NoError(t, err)

	data, err := json.Marshal(g)
	require.NoError(t, err)
	var back Gate
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, *g, back)

	// The restored gate goes on where the original left off.
	d, err := back.Apply(vote(Approve, "bob", 3, ""), dir)
	require.NoError(t, err)
	require.NotNil(t, d)
	assert.Equal(t, Approved, d.Outcome)
}

func snapshotJSON(t *testing.T, g *Gate) string {
	t.Helper()
	data, err := json.Marshal(g)
	require.NoError(t, err)
	return string(data)
}
