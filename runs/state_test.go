package runs

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseStatus(t *testing.T) {
	for _, s := range statuses {
		t.Run(string(s), func(t *testing.T) {
			got, err := ParseStatus(string(s))
			require.NoError(t, err)
			assert.Equal(t, s, got)
		})
	}
	for _, bad := range []string{"", "Running", "done", "canceled", " running"} {
		t.Run("bad "+bad, func(t *testing.T) {
			got, err := ParseStatus(bad)
			require.Error(t, err)
			assert.Equal(t, Status(""), got)
			assert.Equal(t, "want one of pending, running, awaiting_approval, awaiting_input, waiting_signal, "+
				"sleeping, budget_paused, awaiting_gate, waiting_capacity, paused, completed, warning, failed, rejected, cancelled, budget_exceeded", err.Error())
		})
	}
	assert.Len(t, statuses, 16, "every status of the design is listed")
}

func TestStatusTerminal(t *testing.T) {
	terminal := map[Status]bool{
		StatusCompleted: true, StatusWarning: true, StatusFailed: true, StatusRejected: true,
		StatusCancelled: true, StatusBudgetExceeded: true,
	}
	for _, s := range append(statuses, Status(""), Status("bogus")) {
		t.Run(string(s), func(t *testing.T) {
			assert.Equal(t, terminal[s], s.Terminal())
		})
	}
}

func TestCachedDetail(t *testing.T) {
	assert.Equal(t, "cached <1s ago", cachedDetail(200*time.Millisecond))
	assert.Equal(t, "cached 42s ago", cachedDetail(42*time.Second))
	assert.Equal(t, "cached 3m ago", cachedDetail(3*time.Minute+10*time.Second))
	assert.Equal(t, "cached 5h ago", cachedDetail(5*time.Hour))
	assert.Equal(t, "cached 3d ago", cachedDetail(72*time.Hour))
}
