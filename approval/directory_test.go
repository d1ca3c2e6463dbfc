package approval

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "approvers.json")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

func TestLoadDirectory(t *testing.T) {
	path := writeFile(t, `{
  "release": ["alice", "bob"],
  "security": ["carol"],
  "nobody": []
}
`)
	d, err := LoadDirectory(path)
	require.NoError(t, err)
	assert.Equal(t, StaticDirectory{"release": {"alice", "bob"}, "security": {"carol"}, "nobody": {}}, d)
	assert.Equal(t, []string{"nobody", "release", "security"}, d.Groups())

	ok, err := Request{Approvers: []string{"group:security"}}.Allowed("carol", d)
	require.NoError(t, err)
	assert.True(t, ok)
}

func TestLoadDirectoryErrors(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    string // substring after "approval directory PATH: "
	}{
		{name: "empty file", content: " \n", want: "the file is empty"},
		{name: "null", content: "null", want: "the file holds null"},
		{name: "syntax error", content: "{\n  \"release\": [\"alice\",]\n}", want: "line 2, column 23: want a JSON object from group name to a list of members: invalid character ']'"},
		{name: "not an object", content: `["alice"]`, want: "line 1, column 1: want a JSON object"},
		{name: "members not a list", content: `{"release": "alice"}`, want: "cannot unmarshal string"},
		{name: "members not strings", content: `{"release": [1]}`, want: "cannot unmarshal number"},
		{name: "trailing data", content: `{"release": ["alice"]} {}`, want: "unexpected data after the JSON object"},
		{name: "trailing garbage", content: `{"release": ["alice"]} x`, want: "unexpected data after the JSON object"},
		{name: "empty group name", content: `{"": ["alice"]}`, want: "group name is empty"},
		{name: "group name with a space", content: `{"re lease": ["alice"]}`, want: `group name "re lease" contains a space`},
		{name: "group name with prefix", content: `{"group:release": ["alice"]}`, want: `group name "group:release": write it without "group:"`},
		{name: "empty member", content: `{"release": ["alice", ""]}`, want: `group "release": member 2: member is empty`},
		{name: "member with a space", content: `{"release": ["al ice"]}`, want: `group "release": member 1: member "al ice" contains a space`},
		{name: "nested group", content: `{"release": ["group:ops"]}`, want: `group "release": member 1 is "group:ops"; groups do not nest`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, tt.content)
			d, err := LoadDirectory(path)
			assert.Nil(t, d)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "approval directory "+path+": ")
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestLoadDirectoryMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.json")
	_, err := LoadDirectory(path)
	require.Error(t, err)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.EqualError(t, err, "approval directory "+path+": cannot read it: no such file or directory")
}

func TestStaticDirectoryMembers(t *testing.T) {
	d := StaticDirectory{"release": {"alice", "bob"}}
	members, err := d.Members("release")
	require.NoError(t, err)
	assert.Equal(t, []string{"alice", "bob"}, members)
	members[0] = "mallory"
	assert.Equal(t, "alice", d["release"][0], "Members returns a copy")

	_, err = d.Members("ops")
	assert.ErrorIs(t, err, ErrUnknownGroup)
	assert.EqualError(t, err, `unknown group "ops" in the approval directory`)

	var none StaticDirectory
	_, err = none.Members("release")
	assert.ErrorIs(t, err, ErrUnknownGroup)
	assert.NoError(t, none.Validate())
}

func TestSnapshot(t *testing.T) {
	full := StaticDirectory{"release": {"alice", "bob"}, "ops": {"carol"}, "unused": {"dave"}}
	req := Request{Approvers: []string{"erin", "group:release", "group:ops", "group:missing"}}

	snap, err := Snapshot(full, req)
	assert.Equal(t, StaticDirectory{"release": {"alice", "bob"}, "ops": {"carol"}}, snap, "only the gate's groups")
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrUnknownGroup)
	assert.Contains(t, err.Error(), "resolving group:missing")

	// The snapshot answers like the directory did, even after the directory changes.
	full["release"] = []string{"mallory"}
	ok, err := req.Allowed("bob", snap)
	require.NoError(t, err)
	assert.True(t, ok)

	snap, err = Snapshot(full, Request{Approvers: []string{"alice"}})
	require.NoError(t, err)
	assert.Empty(t, snap)

	snap, err = Snapshot(nil, Request{Approvers: []string{"group:ops"}})
	assert.Empty(t, snap)
	assert.EqualError(t, err, "no directory to resolve group:ops")

	_, err = Snapshot(failingDirectory{}, Request{Approvers: []string{"group:ops"}})
	assert.False(t, errors.Is(err, ErrUnknownGroup))
	assert.EqualError(t, err, "resolving group:ops: service down")
}
