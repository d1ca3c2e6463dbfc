package flow

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/internal/coroutines"
)

func TestAWaitingRunHoldsTwoCoroutines(t *testing.T) {
	env := newPeopleEnv(t, gateFlow)
	before := coroutines.Count()
	held := -1
	env.RegisterDelayedCallback(func() { held = coroutines.Count() - before }, time.Minute)
	voteAt(env, 2*time.Minute, approve("alice"))
	out := runGate(t, env, gateIn{Req: approval.Request{Approvers: []string{"alice"}}})
	require.Equal(t, "approved", string(out.Decision.Outcome), "the vote after the count still reaches the run")
	assert.Positive(t, held, "the coroutines were counted while the run waited")
	assert.LessOrEqual(t, held, 2, "a run waiting at a gate holds its main coroutine and one signal listener")
}
