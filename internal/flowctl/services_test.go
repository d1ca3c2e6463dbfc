package flowctl

import (
	"strings"
	"testing"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A step waiting for its service's breaker is reported once as waiting, not as finished,
// and finishes when it completes.
func TestWatchShowsAStepWaitingForItsService(t *testing.T) {
	waiting := running("call", 0)
	waiting.Kind = runs.KindHTTP
	waiting.Status, waiting.Error = runs.StepWaitingService, "waiting for service flaky (circuit breaker open)"
	call := done("call", 0, 90, "ok")
	call.Kind = runs.KindHTTP
	found := func() *fakeDescribe {
		return &fakeDescribe{found: map[string][]*runs.Description{"hello-1": {
			desc(runs.StatusRunning, running("call", 0)),
			desc(runs.StatusRunning, waiting),
			desc(runs.StatusRunning, waiting),
			ended(runs.StatusCompleted, `"ok"`, call),
		}}}
	}
	out, err := watchWith(t, false, found(), "hello-1")
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(out, "waiting   call"), out)
	assert.Contains(t, out, "waiting   call             waiting for service flaky (circuit breaker open)")
	assert.Equal(t, 1, strings.Count(out, "finished  call"), out)
	assert.Regexp(t, `finished  call\s+http\s+completed`, out)

	out, err = watchWith(t, true, found(), "hello-1")
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(out, `"event":"step_waiting"`), out)
	assert.Contains(t, out, `"status":"waiting_service"`)
}
