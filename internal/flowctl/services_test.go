package flowctl

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/flow"
)

// A step waiting for its service's breaker is reported once as waiting, not as finished,
// and finishes when it completes.
func TestWatchShowsAStepWaitingForItsService(t *testing.T) {
	waiting := running("call", 0)
	waiting.Kind = flow.KindHTTP
	waiting.Status, waiting.Error = flow.StepWaitingService, "waiting for service flaky (circuit breaker open)"
	call := done("call", 0, 90, "ok")
	call.Kind = flow.KindHTTP
	runs := func() *fakeDescribe {
		return &fakeDescribe{runs: map[string][]*flow.RunDescription{"hello-1": {
			desc(flow.StatusRunning, running("call", 0)),
			desc(flow.StatusRunning, waiting),
			desc(flow.StatusRunning, waiting),
			ended(flow.StatusCompleted, `"ok"`, call),
		}}}
	}
	out, err := watchWith(t, false, runs(), "hello-1")
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(out, "waiting   call"), out)
	assert.Contains(t, out, "waiting   call             waiting for service flaky (circuit breaker open)")
	assert.Equal(t, 1, strings.Count(out, "finished  call"), out)
	assert.Regexp(t, `finished  call\s+http\s+completed`, out)

	out, err = watchWith(t, true, runs(), "hello-1")
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(out, `"event":"step_waiting"`), out)
	assert.Contains(t, out, `"status":"waiting_service"`)
}
