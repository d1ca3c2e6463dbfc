package flow

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/startplan"
	"github.com/gateflow/gateflow/runs"
)

func TestGuardsTighten(t *testing.T) {
	in := Guards{MaxChildDepth: 5, MaxFanOut: 50, MaxTokens: -1, MaxWallTime: -1, MaxSteps: 10_000}
	for _, tc := range []struct {
		name string
		t    protocol.GuardLimits
		want Guards
	}{
		{"nothing set keeps every limit", protocol.GuardLimits{}, in},
		{"stricter limits apply", protocol.GuardLimits{MaxChildDepth: 2, MaxFanOut: 3, MaxSteps: 7},
			Guards{MaxChildDepth: 2, MaxFanOut: 3, MaxTokens: -1, MaxWallTime: -1, MaxSteps: 7}},
		{"a limit where there was none applies", protocol.GuardLimits{MaxTokens: 900, MaxWallTime: time.Hour},
			Guards{MaxChildDepth: 5, MaxFanOut: 50, MaxTokens: 900, MaxWallTime: time.Hour, MaxSteps: 10_000}},
		{"looser limits do not loosen", protocol.GuardLimits{MaxChildDepth: 9, MaxFanOut: 500, MaxSteps: 20_000}, in},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, in.tighten(tc.t))
		})
	}
}

func TestPlanStartGuards(t *testing.T) {
	cat := &core.Catalog{TaskQueue: "q", Workflows: []core.WorkflowInfo{{Name: "plain"}}}
	now := time.Now()
	p, err := startplan.New(cat, startplan.Starter{TaskQueue: "q"}, "plain", nil, core.StartOptions{Guards: &runs.Guards{MaxSteps: 3, MaxWallTime: time.Minute}}, false, now)
	require.NoError(t, err)
	assert.Equal(t, &protocol.GuardLimits{MaxSteps: 3, MaxWallTime: time.Minute}, p.RunOpts.Guards)

	p, err = startplan.New(cat, startplan.Starter{TaskQueue: "q"}, "plain", nil, core.StartOptions{Guards: &runs.Guards{}}, false, now)
	require.NoError(t, err)
	assert.Nil(t, p.RunOpts.Guards, "no limit set: nothing to carry")

	_, err = startplan.New(cat, startplan.Starter{TaskQueue: "q"}, "plain", nil, core.StartOptions{Guards: &runs.Guards{MaxSteps: -1}}, false, now)
	var ierr *core.InputError
	require.ErrorAs(t, err, &ierr)
	assert.Contains(t, err.Error(), "guards: a start may only tighten them")
}

// A start's guards tighten the flow's: the same flow as maxStepsFlow without its own
// limit stops past the start's MaxSteps.
func TestStartGuardsTightenTheRun(t *testing.T) {
	f := Define("unit/start-guards", func(ctx *Context, _ none) (none, error) {
		if _, err := ctx.Shell("one", activities.Shell{Command: "one"}); err != nil {
			return none{}, err
		}
		_, err := ctx.Shell("two", activities.Shell{Command: "two"})
		return none{}, err
	}, WithGuards(Guards{MaxFanOut: 4}))
	env := newUnitEnv(t, runConfig{}, f)
	shells := mockShell(env, deployShell)
	startWith(t, env, protocol.RunOptions{Guards: &protocol.GuardLimits{MaxSteps: 1, MaxFanOut: 9}})
	env.ExecuteWorkflow(f.Name(), none{})
	require.True(t, env.IsWorkflowCompleted())
	err := env.GetWorkflowError()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "guard: steps 2 exceeds the limit of 1 at step two")
	assert.Equal(t, []string{"one"}, commands(shells.all()))
	st := queryState(t, env)
	assert.Equal(t, 1, st.Guards.MaxSteps, "the start's stricter limit")
	assert.Equal(t, 4, st.Guards.MaxFanOut, "the flow's stricter limit stays")
}
