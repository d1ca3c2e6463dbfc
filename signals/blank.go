package signals

import (
	"fmt"
	"unicode/utf8"
)

// NonBlankPattern is a JSON Schema "pattern" that a string matches when it holds
// something besides white space: exactly the strings s with strings.TrimSpace(s) != "".
// It lists the white space characters of unicode.IsSpace literally, so it reads the same
// in Go (RE2) and ECMA-262. A schema value that does not match it is reported as "want a
// non-blank string". typeschema.ForStart puts it on the string members a start requires.
const NonBlankPattern = "[^\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"

// blank describes a string NonBlankPattern refused: "" when empty, else how many white
// space characters it has (quoting them would not survive a message made one line).
func blank(s string) string {
	if s == "" {
		return `""`
	}
	n := utf8.RuneCountInString(s)
	if n == 1 {
		return "1 white-space character"
	}
	return fmt.Sprintf("%d white-space characters", n)
}
