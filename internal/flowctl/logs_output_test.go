package flowctl

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/internal/blob"
	"github.com/gateflow/gateflow/runs"
)

func TestDecodeOutput(t *testing.T) {
	dc := converter.GetDefaultDataConverter()
	payload := func(v any) *commonpb.Payload {
		p, err := dc.ToPayload(v)
		require.NoError(t, err)
		return p
	}
	for _, tt := range []struct {
		kind runs.StepKind
		v    any
		want string
	}{
		{runs.KindShell, activities.ShellResult{Stdout: "a\nb", Stderr: "w1\nw2\n"}, "a\nb\nstderr| w1\nstderr| w2\n"},
		{runs.KindShell, activities.ShellResult{Stdout: "a\n", Truncated: true}, fmt.Sprintf("a\n(output cut at %d bytes per stream)\n", activities.MaxOutputBytes)},
		{runs.KindHTTP, activities.HTTPResult{Status: 200, Body: `{"ok":true}`}, `{"ok":true}`},
		{runs.KindAgent, activities.AgentResult{Text: "LGTM"}, "LGTM"},
	} {
		p := payload(tt.v)
		got, err := decodeOutput(context.Background(), tt.kind, p, payloadReader{})
		require.NoError(t, err)
		assert.Equal(t, tt.want, got)
	}
	p, err := dc.ToPayload("not a result")
	require.NoError(t, err)
	_, err = decodeOutput(context.Background(), runs.KindShell, p, payloadReader{})
	assert.ErrorContains(t, err, "decode the shell result")
}

func TestDecodeOutputOfAnOffloadedShellResult(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	u, err := blob.FileURL(filepath.Join(dir, "blobs"))
	require.NoError(t, err)
	store, err := blob.Open(ctx, u)
	require.NoError(t, err)
	defer store.Close()
	codec, err := blob.NewCodec(store, blob.CodecOptions{})
	require.NoError(t, err)

	stdout := strings.Repeat("0123456789abcdef", (1<<20)/16) // 1 MiB, over the threshold
	p, err := converter.GetDefaultDataConverter().ToPayload(activities.ShellResult{Stdout: stdout, Stderr: "warned\n"})
	require.NoError(t, err)
	enc, err := codec.Encode([]*commonpb.Payload{p})
	require.NoError(t, err)
	ref := enc[0]
	require.True(t, blob.IsRef(ref))

	// Read as the workers wrote it: the whole output.
	got, err := payloadReader{codec: codec, store: u}.resolve(ref, "the step's result")
	require.NoError(t, err)
	out, err := decodeOutput(ctx, runs.KindShell, got, payloadReader{})
	require.NoError(t, err)
	assert.Equal(t, len(stdout)+len("\nstderr| warned\n"), len(out))
	assert.True(t, out == stdout+"\nstderr| warned\n", "the decoded output differs")

	// A payload that is not a reference passes.
	same, err := payloadReader{}.resolve(p, "the step's result")
	require.NoError(t, err)
	assert.Same(t, p, same)

	// No store: the error says which flag names it, not a JSON error.
	_, err = payloadReader{}.resolve(ref, "the step's result")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the step's result (")
	assert.Contains(t, err.Error(), "is kept in the workers' blob store, which flowctl has not opened: name it with --blob-url or GATEFLOW_BLOB_URL")

	// Another store (the guessed dev one) lacks the blob: the error names that store.
	other, err := blob.FileURL(filepath.Join(dir, "other"))
	require.NoError(t, err)
	os2, err := blob.Open(ctx, other)
	require.NoError(t, err)
	defer os2.Close()
	c2, err := blob.NewCodec(os2, blob.CodecOptions{ReadOnly: true})
	require.NoError(t, err)
	_, err = payloadReader{codec: c2, store: other, guessed: true}.resolve(ref, "the step's result")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "from blob store "+other+" (flowctl guessed the dev server's store: name the workers' with --blob-url")
	assert.ErrorIs(t, err, blob.ErrNotFound)
}

func TestDecodeOutputSaysWhereTheWorkerCutIt(t *testing.T) {
	p, err := converter.GetDefaultDataConverter().ToPayload(activities.ShellResult{Stdout: "a\n", Truncated: true, OutputLimit: 1 << 20})
	require.NoError(t, err)
	out, err := decodeOutput(context.Background(), runs.KindShell, p, payloadReader{})
	require.NoError(t, err)
	assert.Equal(t, "a\n(output cut at 1048576 bytes per stream)\n", out)
}

func TestDecodeOutputReadsTheStreamsKeptInTheStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	u, err := blob.FileURL(filepath.Join(dir, "blobs"))
	require.NoError(t, err)
	store, err := blob.Open(ctx, u)
	require.NoError(t, err)
	defer store.Close()
	codec, err := blob.NewCodec(store, blob.CodecOptions{})
	require.NoError(t, err)
	pr := payloadReader{codec: codec, store: u}

	// A worker streamed a 3 MB stdout to the store; the result has its head.
	stdout := strings.Repeat("line of output\n", 200000)
	res, err := activities.RunShell(activities.WithOutputStore(activities.WithOutputLimit(ctx, activities.MaxStoredOutputBytes), store),
		activities.Shell{Command: "yes 'line of output' | head -n 200000; echo warned >&2"})
	require.NoError(t, err)
	require.NotNil(t, res.StdoutBlob)
	p, err := converter.GetDefaultDataConverter().ToPayload(res)
	require.NoError(t, err)
	out, err := decodeOutput(ctx, runs.KindShell, p, pr)
	require.NoError(t, err)
	assert.Equal(t, len(stdout)+len("stderr| warned\n"), len(out))
	assert.True(t, out == stdout+"stderr| warned\n", "the output is the whole stdout and the stderr")

	// Without the store: the flag that names it.
	_, err = decodeOutput(ctx, runs.KindShell, p, payloadReader{})
	assert.EqualError(t, err, fmt.Sprintf("the step's stdout (%d bytes) is kept in the workers' blob store, which flowctl has not opened: name it with --blob-url or GATEFLOW_BLOB_URL (the store of flow-worker's --blob-url)", len(stdout)))

	// A blob changed in the store is refused.
	require.NoError(t, store.Put(ctx, res.StdoutBlob.Key, []byte("forged")))
	_, err = decodeOutput(ctx, runs.KindShell, p, pr)
	assert.ErrorContains(t, err, "has 6 bytes and SHA-256")
	assert.ErrorContains(t, err, "(changed or corrupt)")

	// A stream the store cut, or one without a blob, says where it was cut.
	cut := activities.ShellResult{Stdout: "ab", StdoutBytes: 5, Truncated: true, OutputLimit: 2}
	p, err = converter.GetDefaultDataConverter().ToPayload(cut)
	require.NoError(t, err)
	out, err = decodeOutput(ctx, runs.KindShell, p, pr)
	require.NoError(t, err)
	assert.Equal(t, "ab\n(output cut at 2 bytes per stream)\n", out)
}
