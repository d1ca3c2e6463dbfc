package testsuite_test

import (
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/gates"
	"github.com/gateflow/gateflow/testsuite"
)

var ciGate = flow.Define("testsuite.gate", func(ctx *flow.Context, _ struct{}) (gates.Result, error) {
	return ctx.Gate("ci", gates.Request{Type: "http", PollInterval: time.Minute, AllowManual: true,
		Params: gates.HTTPParams{URL: "http://ci.invalid/status", Field: "state", Equals: "green"}})
})

// A polled gate's polls are mocked by the gate's name, and a person decides it in virtual
// time.
func TestPolledGateInVirtualTime(t *testing.T) {
	env := testsuite.NewEnv(t)
	env.MockStep("ci", gates.Pending("running"), nil)
	vote := env.Approve(150*time.Second, "ci", "alice")
	out, r := testsuite.Run(env, ciGate, struct{}{})
	require.NoError(t, r.Err)
	require.NoError(t, vote.Err)
	assert.Equal(t, gates.OutcomeApproved, out.Outcome)
	assert.Equal(t, "alice", out.By)
	assert.Equal(t, 3, out.Polls, "polls at 0, 1m and 2m")
	assert.Equal(t, 3, env.Calls("ci"))
	s, ok := r.Step("ci")
	require.True(t, ok)
	assert.Equal(t, runs.KindGate, s.Kind)
	assert.Equal(t, "approved by alice (manual) after 3 polls", s.Output)
}
