package approval

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRequestValidate(t *testing.T) {
	tests := []struct {
		name    string
		req     Request
		wantErr string // substring; empty means valid
	}{
		{name: "zero value", req: Request{}},
		{name: "message only", req: Request{Message: "Ship?"}},
		{name: "users", req: Request{Approvers: []string{"alice", "bob"}}},
		{name: "quorum equal to users", req: Request{Approvers: []string{"alice", "bob"}, Required: 2}},
		{name: "quorum with a group is not bounded", req: Request{Approvers: []string{"alice", "group:release"}, Required: 5}},
		{name: "quorum with anyone", req: Request{Required: 3}},
		{name: "spaces around entries", req: Request{Approvers: []string{" alice ", " group:release"}}},
		{name: "all timeout policies", req: Request{Timeout: time.Hour, OnTimeout: ApproveOnTimeout}},
		{name: "fail on timeout", req: Request{Timeout: time.Hour, OnTimeout: FailOnTimeout}},
		{name: "reject on timeout", req: Request{Timeout: time.Hour, OnTimeout: RejectOnTimeout}},
		{name: "identity with punctuation", req: Request{Approvers: []string{"alice@example.com", "spiffe://corp/bob"}}},

		{name: "negative required", req: Request{Required: -1}, wantErr: "required is -1; want 0 (meaning 1) or more"},
		{name: "negative timeout", req: Request{Timeout: -time.Second}, wantErr: "timeout is -1s; want 0 (no deadline) or more"},
		{name: "unknown on_timeout", req: Request{OnTimeout: "maybe"}, wantErr: `on_timeout "maybe" is not one of reject, approve or fail`},
		{name: "quorum above users", req: Request{Approvers: []string{"alice", "bob"}, Required: 3},
			wantErr: "required is 3 but only 2 distinct approvers are listed (alice, bob)"},
		{name: "repeated users count once", req: Request{Approvers: []string{"alice", " alice", "bob"}, Required: 3},
			wantErr: "only 2 distinct approvers"},
		{name: "empty entry", req: Request{Approvers: []string{"alice", ""}}, wantErr: "an approver entry is empty"},
		{name: "blank entry", req: Request{Approvers: []string{"   "}}, wantErr: "an approver entry is empty"},
		{name: "group prefix alone", req: Request{Approvers: []string{"group:"}}, wantErr: `approver "group:" names no group`},
		{name: "group prefix and spaces", req: Request{Approvers: []string{"group:   "}}, wantErr: "names no group"},
		{name: "group prefix in capitals", req: Request{Approvers: []string{"Group:release"}}, wantErr: "write the group prefix in lower case"},
		{name: "user with a space", req: Request{Approvers: []string{"al ice"}}, wantErr: `user name "al ice" contains a space`},
		{name: "group with a space", req: Request{Approvers: []string{"group:rel ease"}}, wantErr: `group name "rel ease" contains a space`},
		{name: "control character", req: Request{Approvers: []string{"al\x00ice"}}, wantErr: "control character"},
		{name: "invalid UTF-8", req: Request{Approvers: []string{"al\xffice"}}, wantErr: "not valid UTF-8"},
		{name: "too long", req: Request{Approvers: []string{strings.Repeat("a", MaxNameLen+1)}}, wantErr: "the limit is 256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.req.Validate()
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

func TestRequestAllowed(t *testing.T) {
	dir := StaticDirectory{
		"release": {"bob", " carol "},
		"empty":   {},
	}
	tests := []struct {
		name      string
		approvers []string
		dir       Directory
		by        string
		want      bool
		wantErr   error  // errors.Is target
		errText   string // substring
	}{
		{name: "anyone", approvers: nil, by: "mallory", want: true},
		{name: "anyone needs an identity", approvers: nil, by: "  ", want: false},
		{name: "listed user", approvers: []string{"alice"}, by: "alice", want: true},
		{name: "identity trimmed", approvers: []string{"alice"}, by: "  alice\t", want: true},
		{name: "entry trimmed", approvers: []string{" alice "}, by: "alice", want: true},
		{name: "case-sensitive", approvers: []string{"alice"}, by: "Alice", want: false},
		{name: "not listed", approvers: []string{"alice"}, by: "mallory", want: false},
		{name: "empty identity", approvers: []string{"alice"}, by: "", want: false},
		{name: "group member", approvers: []string{"alice", "group:release"}, dir: dir, by: "bob", want: true},
		{name: "group member with spaces in the directory", approvers: []string{"group:release"}, dir: dir, by: "carol", want: true},
		{name: "not a member", approvers: []string{"group:release"}, dir: dir, by: "mallory", want: false},
		{name: "empty group allows nobody", approvers: []string{"group:empty"}, dir: dir, by: "bob", want: false},
		{name: "a group name is not a member", approvers: []string{"group:release"}, dir: dir, by: "group:release", want: false},
		{name: "unknown group", approvers: []string{"group:nope"}, dir: dir, by: "bob", want: false,
			wantErr: ErrUnknownGroup, errText: `resolving group:nope: unknown group "nope"`},
		{name: "unknown group does not matter for a listed user", approvers: []string{"group:nope", "alice"}, dir: dir, by: "alice", want: true},
		{name: "unknown group does not matter for a member of another", approvers: []string{"group:nope", "group:release"}, dir: dir, by: "bob", want: true},
		{name: "no directory", approvers: []string{"group:release"}, dir: nil, by: "bob", want: false,
			errText: "no directory to resolve group:release"},
		{name: "no directory, listed user", approvers: []string{"group:release", "alice"}, dir: nil, by: "alice", want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Request{Approvers: tt.approvers}.Allowed(tt.by, tt.dir)
			assert.Equal(t, tt.want, got)
			if tt.wantErr == nil && tt.errText == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
			}
			assert.Contains(t, err.Error(), tt.errText)
		})
	}
}

// failingDirectory fails every lookup, like a directory service that is down.
type failingDirectory struct{}

func (failingDirectory) Members(string) ([]string, error) { return nil, errors.New("service down") }

func TestRequestAllowedWrapsDirectoryErrors(t *testing.T) {
	ok, err := Request{Approvers: []string{"group:ops"}}.Allowed("bob", failingDirectory{})
	assert.False(t, ok)
	assert.EqualError(t, err, "resolving group:ops: service down")
}

func TestRequestGroups(t *testing.T) {
	r := Request{Approvers: []string{"alice", "group:b", " group:a ", "group:b", "group:", "bob"}}
	assert.Equal(t, []string{"b", "a"}, r.Groups())
	assert.Nil(t, Request{Approvers: []string{"alice"}}.Groups())
}

func TestRequestNormalized(t *testing.T) {
	r := Request{Approvers: []string{" alice", "bob", "alice ", "group:x"}}.normalized()
	assert.Equal(t, []string{"alice", "bob", "group:x"}, r.Approvers)
	assert.Equal(t, 1, r.Required)
	assert.Equal(t, RejectOnTimeout, r.OnTimeout)

	r = Request{Required: 2, OnTimeout: FailOnTimeout}.normalized()
	assert.Equal(t, 2, r.Required)
	assert.Equal(t, FailOnTimeout, r.OnTimeout)
	assert.Nil(t, r.Approvers)
}
