package testsuite_test

import (
	"testing"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/testsuite"
)

var (
	tsSource = flow.Define("ts.source", func(*flow.Context, struct{}) (string, error) { return "out", nil })
	tsTarget = flow.Define("ts.target", func(_ *flow.Context, in string) (string, error) { return in, nil },
		flow.OnRunOf("ts.source", core.WhenCompleted))
)

// A flow whose end triggers another runs in the test environment: the trigger's start
// (the activity gateflow.trigger.start, step "trigger:<flow>") does nothing, there being
// no server to start on, and is counted; a mock of it is used instead.
func TestTriggeredStartsInTheTestEnvironment(t *testing.T) {
	env := testsuite.NewEnv(t)
	env.Register(tsSource, tsTarget)
	r := env.Run("ts.source", struct{}{})
	require.NoError(t, r.Err)
	assert.Equal(t, runs.StatusCompleted, r.Status())
	assert.Equal(t, 1, env.Calls("trigger:ts.target"))

	env = testsuite.NewEnv(t)
	env.Register(tsSource, tsTarget)
	env.MockActivity("gateflow.trigger.start", core.Run{ID: "ts.target/triggered-by/x/y", Workflow: "ts.target"}, nil)
	r = env.Run("ts.source", struct{}{})
	require.NoError(t, r.Err)
	assert.Equal(t, 1, env.Calls("trigger:ts.target"))
}
