package display

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func ExamplePreview() {
	fmt.Println(Preview("a long line of build output", 10))
	fmt.Println(Preview("short", 10))
	// Output:
	// a long li…
	// short
}

func TestOneLineAndMarkdownCell(t *testing.T) {
	assert.Equal(t, "a b c", OneLine("  a\n\tb   c \n"))
	assert.Equal(t, `x \| 'y' z`, MarkdownCell("x | `y`\nz"))
}

// The fast paths (no copy when nothing changes) give what the general path gives.
func TestTextFastPathsAgreeWithTheGeneralPath(t *testing.T) {
	for _, s := range []string{"", "a", "a b", " a", "a ", "a  b", "a\tb", "a\nb", "ok: 3 files", "héllo  wörld", "a\u00a0b", "x\u2028y", "|", "a`b"} {
		assert.Equal(t, strings.Join(strings.Fields(s), " "), OneLine(s), "OneLine(%q)", s)
		assert.Equal(t, strings.NewReplacer("|", `\|`, "`", "'", "\n", " ").Replace(s), MarkdownCell(s), "MarkdownCell(%q)", s)
	}
	assert.Equal(t, "héll…", Preview("héllo wörld", 5), "a cut counts runes, not bytes")
	assert.Equal(t, "héllo", Preview("héllo", 5), "5 runes in 6 bytes fit in 5")
	assert.Equal(t, "…", Preview("ab", 1))
	for _, s := range []string{"ok: 3 files", "step output line"} {
		assert.Zero(t, testing.AllocsPerRun(10, func() { _ = MarkdownCell(Preview(OneLine(s), 80)) }), "a plain cell is not copied: %q", s)
	}
}

func FuzzOneLine(f *testing.F) {
	for _, s := range []string{"a b", "  a\n\tb   c \n", "héllo  wörld", "a\u0085b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := OneLine(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Fatalf("OneLine(%q) = %q, want %q", s, got, want)
		}
	})
}
