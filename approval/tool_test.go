package approval

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVoteArguments(t *testing.T) {
	tests := []struct {
		name string
		vote Vote
		msg  string // empty: accepted
	}{
		{"approve with edits", Vote{Gate: "a/deploy", Kind: Approve, By: "alice", Arguments: json.RawMessage(`{"env":"staging"}`)}, ""},
		{"null means none", Vote{Gate: "a/deploy", Kind: Reject, By: "alice", Arguments: json.RawMessage(`null`)}, ""},
		{"nested object", Vote{Gate: "a/deploy", Kind: Approve, By: "alice", Arguments: json.RawMessage(`{"a":{"b":[{"c":1},{"c":2}]}}`)}, ""},
		{"reject with edits", Vote{Gate: "a/deploy", Kind: Reject, By: "alice", Arguments: json.RawMessage(`{}`)},
			"alice's reject vote carries edited arguments; only an approval may edit them"},
		{"not an object", Vote{Gate: "a/deploy", Kind: Approve, By: "alice", Arguments: json.RawMessage(`[1]`)},
			"alice's edited arguments: not a JSON object"},
		{"not JSON", Vote{Gate: "a/deploy", Kind: Approve, By: "alice", Arguments: json.RawMessage(`{"a":`)},
			"alice's edited arguments: not JSON"},
		{"two values", Vote{Gate: "a/deploy", Kind: Approve, By: "alice", Arguments: json.RawMessage(`{} {}`)},
			"alice's edited arguments: more than one JSON value"},
		{"repeated key", Vote{Gate: "a/deploy", Kind: Approve, By: "alice", Arguments: json.RawMessage(`{"env":"prod","env":"staging"}`)},
			`alice's edited arguments: key "env" is given twice in the arguments`},
		{"repeated nested key", Vote{Gate: "a/deploy", Kind: Approve, By: "alice", Arguments: json.RawMessage(`{"a":[{"x":1,"x":2}]}`)},
			`key "x" is given twice in /a`},
		{"too long", Vote{Gate: "a/deploy", Kind: Approve, By: "alice", Arguments: json.RawMessage(`{"a":"` + strings.Repeat("x", MaxArgumentsLen) + `"}`)},
			"the limit is 65536"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.vote.Validate()
			if tt.msg == "" {
				require.NoError(t, err)
				return
			}
			var verr *VoteError
			require.True(t, errors.As(err, &verr), "%v", err)
			assert.Equal(t, CodeBadArguments, verr.Code)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

func TestArgumentsOnlyOnToolGates(t *testing.T) {
	now := time.Unix(100, 0)
	plain, err := Open("ship", Request{}, now)
	require.NoError(t, err)
	edit := Vote{Gate: "ship", Kind: Approve, By: "alice", Arguments: json.RawMessage(`{"x":1}`)}
	err = plain.Check(edit, nil)
	var verr *VoteError
	require.True(t, errors.As(err, &verr))
	assert.Equal(t, CodeBadArguments, verr.Code)
	assert.EqualError(t, err, "approval ship: alice's vote carries edited arguments, but this gate is not a tool call's")

	_, err = Open("a/deploy", Request{Tool: &ToolCall{}}, now)
	require.EqualError(t, err, "approval a/deploy: the tool call has no tool name")

	g, err := Open("a/deploy", Request{Required: 2, Approvers: []string{"alice", "bob"}, Tool: &ToolCall{Name: "deploy", Arguments: json.RawMessage(`{"x":0}`)}}, now)
	require.NoError(t, err)
	edit.Gate = "a/deploy"
	d, err := g.Apply(edit, nil)
	require.NoError(t, err)
	assert.Nil(t, d)
	d, err = g.Apply(Vote{Gate: "a/deploy", Kind: Approve, By: "bob"}, nil)
	require.NoError(t, err)
	require.NotNil(t, d)
	args, by, ok := d.EditedArguments()
	assert.True(t, ok)
	assert.Equal(t, "alice", by)
	assert.JSONEq(t, `{"x":1}`, string(args))
}

func TestEditedArgumentsOfTheLastEditingApproval(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	d := Decision{Outcome: Approved, Votes: []Vote{
		{Kind: Approve, By: "a", Arguments: raw(`{"v":1}`)},
		{Kind: Approve, By: "b", Arguments: raw(`{"v":2}`)},
		{Kind: Approve, By: "c"},
	}}
	args, by, ok := d.EditedArguments()
	require.True(t, ok)
	assert.Equal(t, "b", by)
	assert.Equal(t, `{"v":2}`, string(args))
	d.Outcome = Rejected
	_, _, ok = d.EditedArguments()
	assert.False(t, ok, "a rejected call runs with nothing")
	_, _, ok = Decision{Outcome: Approved, Votes: []Vote{{Kind: Approve, By: "a", Arguments: raw(`null`)}}}.EditedArguments()
	assert.False(t, ok)
}
