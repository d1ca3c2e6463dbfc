package approval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
)

// Directory resolves approver groups to their members on the worker side. Members gets a
// group name without GroupPrefix ("release" for "group:release") and returns the user
// identities in it; an unknown group is an error (wrapping ErrUnknownGroup where that is
// the reason), not an empty list, so a typo in a gate's approvers is reported rather than
// silently allowing nobody.
//
// Implementations backed by a service must be careful in workflow code: answers must be
// the same on replay. Take a Snapshot when the gate opens and pass that instead.
type Directory interface {
	Members(group string) ([]string, error)
}

// ErrUnknownGroup is matched (errors.Is) by the error of a StaticDirectory asked about a
// group it does not have, and by the errors that wrap it (Allowed, *VoteError).
var ErrUnknownGroup = errors.New("unknown group")

// StaticDirectory is the default Directory: group name (without GroupPrefix) to member
// identities. It is plain data, so it is deterministic and may be kept in workflow state;
// LoadDirectory reads one from a JSON file, and Snapshot copies the groups a gate needs
// out of any Directory.
type StaticDirectory map[string][]string

// Members returns a copy of the group's members, or an error wrapping ErrUnknownGroup.
func (d StaticDirectory) Members(group string) ([]string, error) {
	members, ok := d[group]
	if !ok {
		return nil, fmt.Errorf("%w %q in the approval directory", ErrUnknownGroup, group)
	}
	return slices.Clone(members), nil
}

// Groups returns the directory's group names, sorted.
func (d StaticDirectory) Groups() []string {
	names := make([]string, 0, len(d))
	for name := range d {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Validate reports the first invalid entry, looking at groups in sorted order: a group
// name that is empty, carries GroupPrefix, or has spaces or control characters; a member
// that is empty, a group (groups do not nest) or has spaces or control characters. A
// group with no members is valid (it allows nobody).
func (d StaticDirectory) Validate() error {
	for _, name := range d.Groups() {
		if err := checkName("group name", name); err != nil {
			return err
		}
		if hasGroupPrefix(name) {
			return fmt.Errorf("group name %q: write it without %q", name, GroupPrefix)
		}
		for i, m := range d[name] {
			if hasGroupPrefix(m) {
				return fmt.Errorf("group %q: member %d is %q; groups do not nest", name, i+1, m)
			}
			if err := checkName("member", m); err != nil {
				return fmt.Errorf("group %q: member %d: %w", name, i+1, err)
			}
		}
	}
	return nil
}

// Snapshot resolves the groups req lists through dir and returns them as a
// StaticDirectory, to be recorded when a gate opens (in a side effect or local activity)
// and used for that gate's Check and Apply, so that replays see the same membership. The
// groups dir cannot resolve are left out (a later lookup reports them as unknown) and
// their errors are returned together; the snapshot is usable even when err is not nil.
func Snapshot(dir Directory, req Request) (StaticDirectory, error) {
	out := StaticDirectory{}
	var errs []error
	for _, group := range req.Groups() {
		if dir == nil {
			errs = append(errs, fmt.Errorf("no directory to resolve %s%s", GroupPrefix, group))
			continue
		}
		members, err := dir.Members(group)
		if err != nil {
			errs = append(errs, fmt.Errorf("resolving %s%s: %w", GroupPrefix, group, err))
			continue
		}
		out[group] = slices.Clone(members)
	}
	return out, errors.Join(errs...)
}

// LoadDirectory reads a StaticDirectory from a JSON file holding one object from group
// name to member list:
//
//	{"release": ["alice", "bob"], "security": ["carol"]}
//
// Every error names the file: one that cannot be read (errors.Is(err, fs.ErrNotExist)
// works for a missing file), is empty, is not that JSON shape (with the line and column
// of the problem), has data after the object, or fails Validate.
func LoadDirectory(path string) (StaticDirectory, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is already in our message
		}
		return nil, fmt.Errorf("approval directory %s: cannot read it: %w", path, err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("approval directory %s: the file is empty; want a JSON object like {\"release\": [\"alice\", \"bob\"]}", path)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var dir StaticDirectory
	if err := dec.Decode(&dir); err != nil {
		return nil, fmt.Errorf("approval directory %s: %swant a JSON object from group name to a list of members: %w",
			path, position(data, err), err)
	}
	if dir == nil {
		return nil, fmt.Errorf("approval directory %s: the file holds null; want a JSON object from group name to a list of members", path)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("approval directory %s: %sunexpected data after the JSON object", path, lineCol(data, dec.InputOffset()))
	}
	if err := dir.Validate(); err != nil {
		return nil, fmt.Errorf("approval directory %s: %w", path, err)
	}
	return dir, nil
}

// position returns "line L, column C: " for JSON errors that carry an offset, else "".
// encoding/json reports the offset just after the byte in error, hence the -1.
func position(data []byte, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return lineCol(data, syn.Offset-1)
	case errors.As(err, &typ):
		return lineCol(data, typ.Offset-1)
	}
	return ""
}

// lineCol turns a byte offset into "line L, column C: " (both from 1).
func lineCol(data []byte, offset int64) string {
	if offset < 0 || offset > int64(len(data)) {
		return ""
	}
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(offset) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return fmt.Sprintf("line %d, column %d: ", line, col)
}
