package display

import "strings"

// Preview shortens s to at most n runes for step records and tables, marking the cut.
func Preview(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n <= 1 {
		return "…"
	}
	return string(r[:n-1]) + "…"
}

// OneLine folds s onto one line, collapsing runs of white space.
func OneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

var mdReplacer = strings.NewReplacer("|", `\|`, "`", "'", "\n", " ")

// MarkdownCell makes s safe inside a markdown table cell: no pipes, backticks or line
// breaks.
func MarkdownCell(s string) string { return mdReplacer.Replace(s) }
