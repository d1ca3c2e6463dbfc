package flow

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
)

// nopRegistry drops what is registered.
type nopRegistry struct{}

func (nopRegistry) RegisterActivity(any)                                         {}
func (nopRegistry) RegisterActivityWithOptions(any, activity.RegisterOptions)    {}
func (nopRegistry) RegisterDynamicActivity(any, activity.DynamicRegisterOptions) {}

func TestShellActivityKeepsTheWorkersOutputBound(t *testing.T) {
	const command = "head -c 2000000 /dev/zero | tr '\\0' x"
	for _, tt := range []struct {
		limit, want int
	}{
		{0, activities.MaxOutputBytes},
		{1 << 20, 1 << 20},
		{4 << 20, 2000000},
	} {
		fn, err := shellActivity(tt.limit)
		require.NoError(t, err)
		res, err := fn(context.Background(), activities.Shell{Command: command})
		require.NoError(t, err)
		assert.Len(t, res.Stdout, tt.want, "limit %d", tt.limit)
		assert.Equal(t, tt.want < 2000000, res.Truncated, "limit %d", tt.limit)
	}
	_, err := shellActivity(-1)
	assert.ErrorContains(t, err, "ShellOutputBytes -1 is negative")
	err = RegisterActivities(nopRegistry{}, WorkerOptions{ShellOutputBytes: -5, Providers: map[string]llm.Provider{}})
	assert.ErrorContains(t, err, "ShellOutputBytes -5 is negative")
}
