package display

import (
	"fmt"
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
