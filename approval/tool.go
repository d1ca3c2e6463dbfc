package approval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// MaxArgumentsLen is the longest edited tool arguments a vote may carry, in bytes of JSON.
// They end up in workflow history like the comment.
const MaxArgumentsLen = 64 << 10

// CodeBadArguments: the vote carries edited arguments that are malformed, too long, not
// allowed with its kind, for a gate that is not a tool call's, or that do not fit the
// tool's JSON Schema.
const CodeBadArguments Code = "bad_arguments"

// ToolCall is the tool call an agent loop asks people to approve (Request.Tool): the
// tool, the arguments the model chose, the model's reason, and the JSON Schema an
// approver's edited arguments must fit.
type ToolCall struct {
	// Name is the tool's name.
	Name string `json:"name"`
	// Arguments are the model's arguments (a JSON object).
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Reason is what the model said in the turn that made the call, if anything.
	Reason string `json:"reason,omitempty"`
	// Parameters is the tool's JSON Schema for its arguments.
	Parameters json.RawMessage `json:"parameters,omitempty"`
}

// HasArguments reports whether the vote carries edited arguments (absent and JSON null
// mean none).
func (v Vote) HasArguments() bool {
	a := bytes.TrimSpace(v.Arguments)
	return len(a) > 0 && !bytes.Equal(a, []byte("null"))
}

// checkArguments checks the form of a vote's edited arguments: only on an approval, at
// most MaxArgumentsLen bytes, one JSON object in which no object repeats a key.
func (v Vote) checkArguments(kind VoteKind) (code Code, reason string) {
	if !v.HasArguments() {
		return "", ""
	}
	switch {
	case kind != Approve:
		return CodeBadArguments, fmt.Sprintf("%s's %s vote carries edited arguments; only an approval may edit them", strings.TrimSpace(v.By), kind)
	case len(v.Arguments) > MaxArgumentsLen:
		return CodeBadArguments, fmt.Sprintf("%s's edited arguments are %d bytes long; the limit is %d", strings.TrimSpace(v.By), len(v.Arguments), MaxArgumentsLen)
	}
	if err := strictObject(v.Arguments); err != nil {
		return CodeBadArguments, fmt.Sprintf("%s's edited arguments: %v", strings.TrimSpace(v.By), err)
	}
	return "", ""
}

// strictObject checks that raw is exactly one JSON object in which no object, at any
// depth, has a key twice: readers that keep the first or the last of repeated keys would
// read different arguments.
func strictObject(raw json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errors.New("not a JSON object")
	}
	if err := strictRest(dec, '{', ""); err != nil {
		return err
	}
	if _, err := dec.Token(); err == nil {
		return errors.New("more than one JSON value")
	}
	return nil
}

// strictRest reads the rest of an object or array opened by delim, refusing repeated keys.
func strictRest(dec *json.Decoder, delim json.Delim, path string) error {
	seen := map[string]bool{}
	for dec.More() {
		at := path
		if delim == '{' {
			tok, err := dec.Token()
			if err != nil {
				return fmt.Errorf("not JSON: %w", err)
			}
			key, _ := tok.(string)
			if seen[key] {
				return fmt.Errorf("key %q is given twice in %s", key, orRoot(path))
			}
			seen[key] = true
			at = path + "/" + key
		}
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("not JSON: %w", err)
		}
		if d, ok := tok.(json.Delim); ok {
			if err := strictRest(dec, d, at); err != nil {
				return err
			}
		}
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return fmt.Errorf("not JSON: %w", err)
	}
	return nil
}

func orRoot(path string) string {
	if path == "" {
		return "the arguments"
	}
	return path
}

// EditedArguments are the arguments a tool approved at the gate runs with: those of the
// last counted approval that edited them (By says whose), or ok false when nobody did.
func (d Decision) EditedArguments() (args json.RawMessage, by string, ok bool) {
	if d.Outcome != Approved {
		return nil, "", false
	}
	for i := len(d.Votes) - 1; i >= 0; i-- {
		if v := d.Votes[i]; v.Kind == Approve && v.HasArguments() {
			return v.Arguments, v.By, true
		}
	}
	return nil, "", false
}
