package approval

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseVoteKind(t *testing.T) {
	tests := []struct {
		in   string
		want VoteKind
	}{
		{"approve", Approve},
		{"approved", Approve},
		{" APPROVE ", Approve},
		{"reject", Reject},
		{"rejected", Reject},
		{"Rejected", Reject},
		{"request_changes", RequestChanges},
		{"request-changes", RequestChanges},
		{"changes", RequestChanges},
		{"changes_requested", RequestChanges},
		{"changes-requested", RequestChanges},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseVoteKind(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	for _, bad := range []string{"", "maybe", "yes", "approve!", "request changes"} {
		t.Run("refuses "+bad, func(t *testing.T) {
			_, err := ParseVoteKind(bad)
			var verr *VoteError
			require.True(t, errors.As(err, &verr))
			assert.Equal(t, CodeUnknownKind, verr.Code)
			assert.Contains(t, err.Error(), "(want approve, reject or request_changes)")
		})
	}
	_, err := ParseVoteKind("maybe")
	assert.EqualError(t, err, `approval: unknown vote "maybe" (want approve, reject or request_changes)`)
}

func TestVoteValidate(t *testing.T) {
	tests := []struct {
		name string
		vote Vote
		code Code // empty means valid
		msg  string
	}{
		{name: "approve", vote: Vote{Gate: "ship", Kind: Approve, By: "alice"}},
		{name: "alias kind", vote: Vote{Gate: "ship", Kind: "approved", By: "alice"}},
		{name: "reject without comment", vote: Vote{Gate: "ship", Kind: Reject, By: "alice"}},
		{name: "changes with comment", vote: Vote{Gate: "ship", Kind: RequestChanges, By: "alice", Comment: "fix it"}},
		{name: "gate with spaces inside", vote: Vote{Gate: "deploy prod", Kind: Approve, By: "alice"}},

		{name: "no gate", vote: Vote{Kind: Approve, By: "alice"}, code: CodeNoGate,
			msg: "approval: a vote needs the name of the gate it is for"},
		{name: "gate with control character", vote: Vote{Gate: "sh\nip", Kind: Approve, By: "alice"}, code: CodeNoGate},
		{name: "no identity", vote: Vote{Gate: "ship", Kind: Approve}, code: CodeNoIdentity,
			msg: "approval ship: a vote needs an identity"},
		{name: "blank identity", vote: Vote{Gate: "ship", Kind: Approve, By: "  "}, code: CodeNoIdentity},
		{name: "group identity", vote: Vote{Gate: "ship", Kind: Approve, By: "group:release"}, code: CodeBadIdentity,
			msg: `approval ship: "group:release" is a group; a vote is cast by one person`},
		{name: "identity with a space", vote: Vote{Gate: "ship", Kind: Approve, By: "al ice"}, code: CodeBadIdentity},
		{name: "unknown kind", vote: Vote{Gate: "ship", Kind: "maybe", By: "alice"}, code: CodeUnknownKind,
			msg: `approval ship: unknown vote "maybe" (want approve, reject or request_changes)`},
		{name: "empty kind", vote: Vote{Gate: "ship", By: "alice"}, code: CodeUnknownKind},
		{name: "changes without comment", vote: Vote{Gate: "ship", Kind: RequestChanges, By: "bob", Comment: "  "}, code: CodeEmptyComment,
			msg: "approval ship: bob asked for changes without a comment; say what to change"},
		{name: "comment too long", vote: Vote{Gate: "ship", Kind: Reject, By: "bob", Comment: strings.Repeat("x", MaxCommentLen+1)},
			code: CodeCommentTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.vote.Validate()
			if tt.code == "" {
				assert.NoError(t, err)
				return
			}
			var verr *VoteError
			require.True(t, errors.As(err, &verr), "want a *VoteError, got %v", err)
			assert.Equal(t, tt.code, verr.Code)
			if tt.msg != "" {
				assert.EqualError(t, err, tt.msg)
			}
		})
	}
}

func TestVoteNormalize(t *testing.T) {
	v, err := Vote{Gate: " ship ", Kind: "Changes", By: " bob ", Comment: " bump it \n"}.normalize()
	require.Nil(t, err)
	assert.Equal(t, Vote{Gate: "ship", Kind: RequestChanges, By: "bob", Comment: "bump it"}, v)
}

func TestVoteErrorUnwrap(t *testing.T) {
	cause := errors.New("service down")
	err := error(&VoteError{Gate: "ship", By: "bob", Code: CodeDirectory, Reason: "cannot tell", Err: cause})
	assert.ErrorIs(t, err, cause)
	assert.EqualError(t, err, "approval ship: cannot tell")
}
