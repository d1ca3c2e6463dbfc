package protocol

import (
	"fmt"
	"strings"
)

// MaxRunIDLen bounds a run ID, as Temporal's default limit on workflow IDs does.
const MaxRunIDLen = 1000

// NameError is a run ID, namespace or task queue name refused before it is sent: What
// says which ("run ID"), Reason why.
type NameError struct {
	What   string
	Name   string
	Reason string
}

// Error implements error.
func (e *NameError) Error() string {
	if e.Name == "" {
		return e.What + " is empty"
	}
	return fmt.Sprintf("%s %q %s", e.What, e.Name, e.Reason)
}

// CheckRunID checks the ID of an existing run: not empty, at most MaxRunIDLen bytes,
// printable ASCII only (letters, digits, punctuation, spaces) and not only spaces. The
// IDs gateflow makes are such; Temporal sends a workflow ID in a gRPC header
// (temporal-resource-id), which takes nothing else, so a run with another ID could not
// be reached anyway.
func CheckRunID(id string) error {
	return CheckName("run ID", id)
}

// CheckName checks a name sent to Temporal in a gRPC header (a run ID, a namespace, a task
// queue) the way CheckRunID does; what names it in the error ("namespace").
func CheckName(what, name string) error {
	if name == "" {
		return &NameError{What: what}
	}
	if len(name) > MaxRunIDLen {
		return &NameError{What: what, Name: name[:40] + "…", Reason: fmt.Sprintf("is %d bytes long; at most %d", len(name), MaxRunIDLen)}
	}
	for i, r := range name {
		if r < 0x20 || r > 0x7e {
			return &NameError{What: what, Name: name,
				Reason: fmt.Sprintf("has %U at byte %d: use printable ASCII only (letters, digits, punctuation, spaces)", r, i)}
		}
	}
	if strings.TrimSpace(name) == "" {
		return &NameError{What: what, Name: name, Reason: "is blank"}
	}
	return nil
}
