// Package artifactname holds the one rule for artifact names and placement paths, shared
// by the shell activity (activities.Shell) and the definition checker (flowdef), which
// must not depend on Temporal.
package artifactname

import (
	"errors"
	"fmt"
	"strings"
)

// Check reports what is wrong with an artifact name or placement path: it must be a
// relative slash path without empty, "." or ".." parts, backslashes or control
// characters. The message completes a sentence naming the value ("output \"x\" ...").
func Check(name string) error {
	switch {
	case name == "":
		return errors.New("is empty")
	case strings.HasPrefix(name, "/"):
		return errors.New("is absolute; want a path relative to the work directory, like dist/app.txt")
	case strings.Contains(name, `\`):
		return errors.New(`has a backslash; use / between directories`)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return errors.New("has a control character")
		}
	}
	for _, part := range strings.Split(name, "/") {
		switch part {
		case "":
			return errors.New("has an empty part (// or a trailing /)")
		case ".", "..":
			return fmt.Errorf("has a %q part; want a path inside the work directory", part)
		}
	}
	return nil
}
