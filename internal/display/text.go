package display

import (
	"strings"
	"unicode/utf8"
)

// Preview shortens s to at most n runes for step records and tables, marking the cut.
func Preview(s string, n int) string {
	if len(s) <= n || utf8.RuneCountInString(s) <= n {
		return s // no copy: tables call this for every cell they render
	}
	if n <= 1 {
		return "…"
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// OneLine folds s onto one line, collapsing runs of white space.
func OneLine(s string) string {
	if isOneLine(s) {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// isOneLine reports whether OneLine would return s unchanged: ASCII with single spaces
// between words and none at either end (anything else takes the general path).
func isOneLine(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf, c == '\t', c == '\n', c == '\v', c == '\f', c == '\r':
			return false
		case c == ' ' && (i == 0 || i == len(s)-1 || s[i+1] == ' '):
			return false
		}
	}
	return true
}

var mdReplacer = strings.NewReplacer("|", `\|`, "`", "'", "\n", " ")

// MarkdownCell makes s safe inside a markdown table cell: no pipes, backticks or line
// breaks.
func MarkdownCell(s string) string {
	if !strings.ContainsAny(s, "|`\n") {
		return s
	}
	return mdReplacer.Replace(s)
}
