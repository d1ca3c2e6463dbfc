// Package toolname turns names (of flows, of MCP tools) into tool names a model accepts:
// letters, digits, '_' and '-', 1 to 64 of them. Package flow and the declarative format
// (flowdef) derive a tool's default name with it, so Go and YAML loops name a tool alike.
package toolname

import (
	"regexp"
	"strings"
)

// MaxLen is the longest tool name providers accept.
const MaxLen = 64

var valid = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Valid reports whether name is a tool name as it is.
func Valid(name string) bool { return valid.MatchString(name) }

// From is name made model-safe: every other character becomes '_', and the result is cut
// at MaxLen. An empty name stays empty.
func From(name string) string {
	var b strings.Builder
	for _, r := range name {
		if b.Len() == MaxLen {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}
