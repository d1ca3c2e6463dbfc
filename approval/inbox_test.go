package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInboxOrder(t *testing.T) {
	var in Inbox // the zero value is ready
	assert.Equal(t, 0, in.Len())
	assert.Nil(t, in.Take("ship"))
	assert.Empty(t, in.Gates())

	arrivals := []Vote{
		{Gate: "ship", Kind: Approve, By: "carol"},
		{Gate: "deploy", Kind: Approve, By: "alice"},
		{Gate: " ship ", Kind: "rejected", By: " alice ", Comment: "no"},
		{Gate: "ship", Kind: Approve, By: "bob"},
	}
	for _, v := range arrivals {
		require.NoError(t, in.Add(v))
	}
	assert.Equal(t, 4, in.Len())
	assert.Equal(t, []string{"deploy", "ship"}, in.Gates())

	waiting := in.Waiting("ship")
	require.Len(t, waiting, 3)
	waiting[0].By = "changed"
	assert.Equal(t, "carol", in.Waiting("ship")[0].By, "Waiting returns a copy")

	got := in.Take("ship")
	require.Len(t, got, 3)
	assert.Equal(t, []string{"carol", "alice", "bob"}, []string{got[0].By, got[1].By, got[2].By}, "arrival order")
	assert.Equal(t, Vote{Gate: "ship", Kind: Reject, By: "alice", Comment: "no"}, got[1], "kept normalized")
	assert.Equal(t, 1, in.Len())
	assert.Nil(t, in.Take("ship"))
	assert.Equal(t, []string{"deploy"}, in.Gates())
}

func TestInboxRefusals(t *testing.T) {
	var in Inbox
	tests := []struct {
		vote Vote
		code Code
	}{
		{Vote{Kind: Approve, By: "alice"}, CodeNoGate},
		{Vote{Gate: "ship", Kind: Approve}, CodeNoIdentity},
		{Vote{Gate: "ship", Kind: "maybe", By: "alice"}, CodeUnknownKind},
		{Vote{Gate: "ship", Kind: RequestChanges, By: "alice"}, CodeEmptyComment},
		{Vote{Gate: "ship", Kind: Approve, By: "group:release"}, CodeBadIdentity},
	}
	for _, tt := range tests {
		t.Run(string(tt.code), func(t *testing.T) {
			err := in.Add(tt.vote)
			var verr *VoteError
			require.True(t, errors.As(err, &verr), "want a *VoteError, got %v", err)
			assert.Equal(t, tt.code, verr.Code)
		})
	}
	assert.Equal(t, 0, in.Len())
}

func TestInboxDropsRepeats(t *testing.T) {
	var in Inbox
	require.NoError(t, in.Add(Vote{Gate: "ship", Kind: Approve, By: "alice"}))
	require.NoError(t, in.Add(Vote{Gate: "ship", Kind: "approved", By: " alice"}))
	require.NoError(t, in.Add(Vote{Gate: "ship", Kind: Reject, By: "alice"}), "another kind is another vote")
	require.NoError(t, in.Add(Vote{Gate: "deploy", Kind: Approve, By: "alice"}), "another gate is another vote")
	assert.Equal(t, 3, in.Len())
	assert.Len(t, in.Waiting("ship"), 2)
}

func TestInboxBounds(t *testing.T) {
	in := Inbox{PerGate: 2, Total: 3}
	require.NoError(t, in.Add(Vote{Gate: "a", Kind: Approve, By: "u1"}))
	require.NoError(t, in.Add(Vote{Gate: "a", Kind: Approve, By: "u2"}))

	err := in.Add(Vote{Gate: "a", Kind: Approve, By: "u3"})
	var verr *VoteError
	require.True(t, errors.As(err, &verr))
	assert.Equal(t, CodeInboxFull, verr.Code)
	assert.EqualError(t, err, "approval a: the run has not reached this gate and already keeps 2 early votes for it, the most it keeps; u3's vote was not kept, send it again once the gate is open")

	require.NoError(t, in.Add(Vote{Gate: "b", Kind: Approve, By: "u1"}))
	err = in.Add(Vote{Gate: "c", Kind: Approve, By: "u1"})
	require.True(t, errors.As(err, &verr))
	assert.Equal(t, CodeInboxFull, verr.Code)
	assert.Contains(t, err.Error(), "already keeps 3 early votes for its gates")
	assert.Equal(t, 3, in.Len())

	// A repeat of a waiting vote is not refused even when full: it changes nothing.
	assert.NoError(t, in.Add(Vote{Gate: "a", Kind: Approve, By: "u1"}))

	// Taking frees room.
	in.Take("a")
	assert.NoError(t, in.Add(Vote{Gate: "c", Kind: Approve, By: "u1"}))
}

func TestInboxDefaultBounds(t *testing.T) {
	var in Inbox
	for i := range DefaultInboxPerGate {
		require.NoError(t, in.Add(Vote{Gate: "a", Kind: Approve, By: fmt.Sprintf("u%d", i)}))
	}
	assert.Error(t, in.Add(Vote{Gate: "a", Kind: Approve, By: "one-more"}))

	in = Inbox{}
	for i := range DefaultInboxTotal {
		require.NoError(t, in.Add(Vote{Gate: fmt.Sprintf("g%d", i/DefaultInboxPerGate), Kind: Approve, By: fmt.Sprintf("u%d", i)}))
	}
	assert.Equal(t, DefaultInboxTotal, in.Len())
	assert.Error(t, in.Add(Vote{Gate: "fresh", Kind: Approve, By: "one-more"}))
}

func TestInboxJSONRoundTrip(t *testing.T) {
	in := Inbox{PerGate: 5}
	require.NoError(t, in.Add(Vote{Gate: "ship", Kind: Approve, By: "carol", At: t0}))
	require.NoError(t, in.Add(Vote{Gate: "ship", Kind: Reject, By: "alice", Comment: "no", At: at(1)}))
	require.NoError(t, in.Add(Vote{Gate: "deploy", Kind: Approve, By: "bob"}))

	data, err := json.Marshal(in)
	require.NoError(t, err)
	assert.JSONEq(t, `{
		"per_gate": 5,
		"votes": {
			"deploy": [{"gate": "deploy", "vote": "approve", "by": "bob"}],
			"ship": [
				{"gate": "ship", "vote": "approve", "by": "carol", "at": "2026-05-01T09:00:00Z"},
				{"gate": "ship", "vote": "reject", "by": "alice", "comment": "no", "at": "2026-05-01T09:01:00Z"}
			]
		}
	}`, string(data))

	var back Inbox
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, in, back)
	assert.Equal(t, 3, back.Len())
	assert.Equal(t, in.Take("ship"), back.Take("ship"))

	// An Inbox inside another value (workflow state) round-trips too.
	type state struct{ Inbox Inbox }
	data, err = json.Marshal(state{Inbox: in})
	require.NoError(t, err)
	var s state
	require.NoError(t, json.Unmarshal(data, &s))
	assert.Equal(t, 1, s.Inbox.Len())

	assert.Error(t, json.Unmarshal([]byte(`{"votes": 3}`), &back))
}
