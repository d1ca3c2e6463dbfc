package activities

import (
	"context"
	"crypto/sha256"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOutputLimit(t *testing.T) {
	ctx := context.Background()
	assert.Equal(t, MaxOutputBytes, OutputLimit(ctx))
	assert.Equal(t, 5<<20, OutputLimit(WithOutputLimit(ctx, 5<<20)))
	assert.Equal(t, MaxOutputBytes, OutputLimit(WithOutputLimit(ctx, 0)))
	assert.Equal(t, MaxOutputBytes, OutputLimit(WithOutputLimit(ctx, -1)))
}

func TestRunShellKeepsOutputUpToTheContextsLimit(t *testing.T) {
	// 3 MiB on each stream: the default cuts both, a 4 MiB limit keeps them whole.
	const size = 3 << 20
	cmd := "head -c " + strconv.Itoa(size) + " /dev/zero | tr '\\0' o; head -c " + strconv.Itoa(size) + " /dev/zero | tr '\\0' e >&2"
	want := sha256.Sum256([]byte(strings.Repeat("o", size)))

	res, err := RunShell(context.Background(), Shell{Command: cmd})
	require.NoError(t, err)
	assert.True(t, res.Truncated)
	assert.Equal(t, MaxOutputBytes, res.OutputLimit)
	assert.Len(t, res.Stdout, MaxOutputBytes)
	assert.Len(t, res.Stderr, MaxOutputBytes)

	res, err = RunShell(WithOutputLimit(context.Background(), 4<<20), Shell{Command: cmd})
	require.NoError(t, err)
	assert.False(t, res.Truncated)
	assert.Zero(t, res.OutputLimit)
	assert.Len(t, res.Stdout, size)
	assert.Equal(t, want, sha256.Sum256([]byte(res.Stdout)))
	assert.Equal(t, strings.Repeat("e", size), res.Stderr)

	// Over a raised limit the head of stdout and the tail of stderr stay, as by default.
	res, err = RunShell(WithOutputLimit(context.Background(), 1<<20),
		Shell{Command: "echo START; " + cmd + "; echo END >&2"})
	require.NoError(t, err)
	assert.True(t, res.Truncated)
	assert.Equal(t, 1<<20, res.OutputLimit)
	require.Len(t, res.Stdout, 1<<20)
	assert.True(t, strings.HasPrefix(res.Stdout, "START\nooo"))
	require.Len(t, res.Stderr, 1<<20)
	assert.True(t, strings.HasSuffix(res.Stderr, "eeeEND\n"))
}

func TestCappedTailKeepsTheLastBytes(t *testing.T) {
	c := &capped{limit: 10, keepTail: true}
	var all strings.Builder
	for i := range 1000 {
		s := strconv.Itoa(i) + ","
		all.WriteString(s)
		n, err := c.Write([]byte(s))
		require.NoError(t, err)
		require.Equal(t, len(s), n)
		got := all.String()
		require.Equal(t, got[max(0, len(got)-10):], c.String())
	}
	assert.True(t, c.dropped)
}
