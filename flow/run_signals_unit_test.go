package flow

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/approval"
)

// workflowCoroutines counts the goroutines of the process that are workflow coroutines:
// the SDK starts each one (the run's function and each workflow.Go) from its dispatcher.
func workflowCoroutines(t *testing.T) int {
	t.Helper()
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	return strings.Count(string(buf), "created by go.temporal.io/sdk/internal.(*dispatcherImpl).NewCoroutine")
}

func TestAWaitingRunHoldsTwoCoroutines(t *testing.T) {
	env := newPeopleEnv(t, gateFlow)
	before := workflowCoroutines(t)
	held := -1
	env.RegisterDelayedCallback(func() { held = workflowCoroutines(t) - before }, time.Minute)
	voteAt(env, 2*time.Minute, approve("alice"))
	out := runGate(t, env, gateIn{Req: approval.Request{Approvers: []string{"alice"}}})
	require.Equal(t, "approved", string(out.Decision.Outcome), "the vote after the count still reaches the run")
	assert.Positive(t, held, "the coroutines were counted while the run waited")
	assert.LessOrEqual(t, held, 2, "a run waiting at a gate holds its main coroutine and one signal listener")
}
