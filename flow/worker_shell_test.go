package flow

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/internal/blob"
)

// nopRegistry drops what is registered.
type nopRegistry struct{}

func (nopRegistry) RegisterActivity(any)                                         {}
func (nopRegistry) RegisterActivityWithOptions(any, activity.RegisterOptions)    {}
func (nopRegistry) RegisterDynamicActivity(any, activity.DynamicRegisterOptions) {}

func TestShellActivityKeepsTheWorkersOutputBound(t *testing.T) {
	const command, size = "head -c 2000000 /dev/zero | tr '\\0' x", 2000000
	u, err := blob.FileURL(t.TempDir())
	require.NoError(t, err)
	opts := WorkerOptions{BlobURL: u}
	for _, tt := range []struct {
		limit      int
		wantStored int64 // 0: no blob
	}{
		{0, 0},
		{activities.MaxOutputBytes, 0},
		{1 << 20, 1 << 20},
		{4 << 20, size},
	} {
		fn, err := shellActivity(tt.limit, true)
		require.NoError(t, err)
		res, err := withArtifacts(opts, fn)(context.Background(), activities.Shell{Command: command})
		require.NoError(t, err)
		assert.Len(t, res.Stdout, activities.MaxOutputBytes, "limit %d: the result keeps a preview", tt.limit)
		assert.True(t, res.Truncated, "limit %d", tt.limit)
		assert.Equal(t, int64(size), res.StdoutBytes, "limit %d", tt.limit)
		if tt.wantStored == 0 {
			assert.Nil(t, res.StdoutBlob, "limit %d", tt.limit)
			continue
		}
		require.NotNil(t, res.StdoutBlob, "limit %d", tt.limit)
		assert.Equal(t, tt.wantStored, res.StdoutBlob.Size, "limit %d", tt.limit)
		assert.Equal(t, tt.wantStored < size, res.StdoutBlob.Cut, "limit %d", tt.limit)
	}
	_, err = shellActivity(-1, true)
	assert.ErrorContains(t, err, "ShellOutputBytes -1 is negative")
	err = RegisterActivities(nopRegistry{}, WorkerOptions{ShellOutputBytes: -5, Providers: map[string]llm.Provider{}})
	assert.ErrorContains(t, err, "ShellOutputBytes -5 is negative")
	err = RegisterActivities(nopRegistry{}, WorkerOptions{ShellOutputBytes: 1 << 20, Providers: map[string]llm.Provider{}})
	assert.ErrorContains(t, err, "ShellOutputBytes 1048576: a shell step's result carries at most 262144 bytes per stream; more is kept in the blob store, and the worker has none (set BlobURL)")
	assert.NoError(t, RegisterActivities(nopRegistry{}, WorkerOptions{ShellOutputBytes: 1 << 20, BlobURL: u, Providers: map[string]llm.Provider{}}))
}
