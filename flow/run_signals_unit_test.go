package flow

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/internal/coroutines"
)

func TestAWaitingRunHoldsTwoCoroutines(t *testing.T) {
	env := newPeopleEnv(t, gateFlow)
	before := settledCoroutines()
	held := -1
	env.RegisterDelayedCallback(func() { held = coroutines.Count() - before }, time.Minute)
	voteAt(env, 2*time.Minute, approve("alice"))
	out := runGate(t, env, gateIn{Req: approval.Request{Approvers: []string{"alice"}}})
	require.Equal(t, "approved", string(out.Decision.Outcome), "the vote after the count still reaches the run")
	assert.Positive(t, held, "the coroutines were counted while the run waited")
	assert.LessOrEqual(t, held, 2, "a run waiting at a gate holds its main coroutine and one signal listener")
}

// settledCoroutines is the number of workflow coroutines once the ones earlier tests
// left behind have exited (the count stays the same for 50 ms, or 2 s have passed):
// their exits during a test would make its own count look smaller.
func settledCoroutines() int {
	n := coroutines.Count()
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(50 * time.Millisecond)
		m := coroutines.Count()
		if m == n {
			return n
		}
		n = m
	}
	return n
}
