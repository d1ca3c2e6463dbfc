package activities

import (
	"context"
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

func TestRunShellKeepsOutputUpToTheContextsLimitInTheStore(t *testing.T) {
	// 3 MiB on each stream: the result keeps MaxOutputBytes of each whatever the limit; the
	// store keeps them whole under a 4 MiB limit, and their first 1 MiB under a 1 MiB one.
	const size = 3 << 20
	cmd := "head -c " + strconv.Itoa(size) + " /dev/zero | tr '\\0' o; head -c " + strconv.Itoa(size) + " /dev/zero | tr '\\0' e >&2"
	store := &memOutputStore{}

	for _, ctx := range []context.Context{context.Background(), WithOutputLimit(context.Background(), 4<<20)} {
		res, err := RunShell(ctx, Shell{Command: cmd})
		require.NoError(t, err)
		assert.True(t, res.Truncated)
		assert.Equal(t, MaxOutputBytes, res.OutputLimit)
		assert.Len(t, res.Stdout, MaxOutputBytes)
		assert.Len(t, res.Stderr, MaxOutputBytes)
		assert.Equal(t, int64(size), res.StdoutBytes)
		assert.Equal(t, int64(size), res.StderrBytes)
		assert.Nil(t, res.StdoutBlob, "no store")
		assert.True(t, res.StdoutCut())
	}

	ctx := WithOutputStore(WithOutputLimit(context.Background(), 4<<20), store)
	res, err := RunShell(ctx, Shell{Command: cmd})
	require.NoError(t, err)
	assert.True(t, res.Truncated)
	assert.Equal(t, MaxOutputBytes, res.OutputLimit, "the result's bound cut it, the store has it all")
	assert.Len(t, res.Stdout, MaxOutputBytes)
	require.NotNil(t, res.StdoutBlob)
	require.NotNil(t, res.StderrBlob)
	assert.Equal(t, StoredOutput{Key: "outputs/local/local/shell/1/stdout", Size: size, SHA256: sha256Hex(strings.Repeat("o", size))}, *res.StdoutBlob)
	assert.Equal(t, StoredOutput{Key: "outputs/local/local/shell/1/stderr", Size: size, SHA256: sha256Hex(strings.Repeat("e", size))}, *res.StderrBlob)
	assert.Equal(t, strings.Repeat("o", size), store.get(t, res.StdoutBlob.Key))
	assert.Equal(t, strings.Repeat("e", size), store.get(t, res.StderrBlob.Key))

	// Over the limit the store keeps the head of each stream, and says it is cut.
	res, err = RunShell(WithOutputStore(WithOutputLimit(context.Background(), 1<<20), store),
		Shell{Command: "echo START; " + cmd + "; echo END >&2"})
	require.NoError(t, err)
	assert.True(t, res.Truncated)
	assert.Equal(t, 1<<20, res.OutputLimit)
	assert.True(t, strings.HasPrefix(res.Stdout, "START\nooo"))
	assert.True(t, strings.HasSuffix(res.Stderr, "eeeEND\n"))
	require.NotNil(t, res.StdoutBlob)
	assert.True(t, res.StdoutBlob.Cut)
	assert.Equal(t, int64(1<<20), res.StdoutBlob.Size)
	assert.Equal(t, "START\n"+strings.Repeat("o", 1<<20-6), store.get(t, res.StdoutBlob.Key))
	assert.Equal(t, int64(size+6), res.StdoutBytes)
	assert.Equal(t, int64(size+4), res.StderrBytes)

	// A short output needs no blob.
	res, err = RunShell(ctx, Shell{Command: "echo hi; echo there >&2"})
	require.NoError(t, err)
	assert.False(t, res.Truncated)
	assert.Nil(t, res.StdoutBlob)
	assert.Nil(t, res.StderrBlob)
	assert.Equal(t, int64(3), res.StdoutBytes)
	assert.False(t, res.StdoutCut())
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
