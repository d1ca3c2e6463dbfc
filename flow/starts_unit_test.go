package flow

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/startplan"
)

type startsOut struct {
	Value string `json:"value"`
}

var (
	startsSource = Define("unit/starts-source", func(_ *Context, in failIn) (startsOut, error) {
		if in.Fail {
			return startsOut{Value: "partial"}, Permanent(errors.New("asked to fail"))
		}
		return startsOut{Value: "all"}, nil
	})
	startsOnDone = Define("unit/starts-done", func(_ *Context, in startsOut) (string, error) { return in.Value, nil },
		OnRunOf("unit/starts-source", core.WhenCompleted))
	startsOnFail = Define("unit/starts-fail", func(_ *Context, in startsOut) (string, error) { return in.Value, nil },
		OnRunOf("unit/starts-source", core.WhenFailed))
	startsOnBoth = Define("unit/starts-both", func(_ *Context, in startsOut) (string, error) { return in.Value, nil },
		OnRunOf("unit/starts-source", core.WhenFailed, core.WhenCompleted, core.WhenFailed))
)

func TestStartOptionsAreValidatedAtDefine(t *testing.T) {
	noop := func(*Context, map[string]int) (string, error) { return "", nil }
	cases := []struct {
		name string
		opts []Option
		want string // "" for no error
	}{
		{"once", []Option{Once(map[string]int{"n": 1})}, ""},
		{"once twice", []Option{Once(nil), Once(nil)}, "once: given twice"},
		{"once input not JSON", []Option{Once(func() {})}, "once input"},
		{"once input of another type", []Option{Once("text")}, "once input: payload does not match the schema"},
		{"trigger", []Option{OnRunOf("other", core.WhenCompleted, core.WhenFailed)}, ""},
		{"trigger without outcome", []Option{OnRunOf("other")}, "give core.WhenCompleted, core.WhenFailed or both"},
		{"unknown outcome", []Option{OnRunOf("other", "cancelled")}, `outcome "cancelled"`},
		{"triggering itself", []Option{OnRunOf("unit/opts", core.WhenCompleted)}, "cannot trigger itself"},
		{"empty flow name", []Option{OnRunOf("", core.WhenCompleted)}, `flow name ""`},
		{"bad flow name", []Option{OnRunOf("no spaces", core.WhenCompleted)}, `flow name "no spaces"`},
		{"trigger twice", []Option{OnRunOf("other", core.WhenCompleted), OnRunOf("other", core.WhenFailed)}, "given twice"},
		{"signal", []Option{OnSignal("order-placed"), OnSignal("order-cancelled")}, ""},
		{"empty signal name", []Option{OnSignal("")}, `signal name ""`},
		{"signal twice", []Option{OnSignal("s"), OnSignal("s")}, "on signal s: given twice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Define("unit/opts", noop, tc.opts...).Err()
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	info := Define("unit/opts", noop, Once(map[string]int{"n": 1}), OnRunOf("other", core.WhenFailed, core.WhenCompleted), OnSignal("s")).Info()
	assert.JSONEq(t, `{"n":1}`, string(info.Once.Input))
	assert.Equal(t, []core.TriggerInfo{{Flow: "other", When: []core.RunEnd{core.WhenCompleted, core.WhenFailed}}}, info.Triggers)
	assert.Equal(t, []string{"s"}, info.SignalStarts)
}

func TestTriggersAreLookedUpByFlowAndCheckedByTheWorker(t *testing.T) {
	got := triggersOf([]Definition{startsSource, startsOnDone, startsOnFail, startsOnBoth})
	assert.Equal(t, map[string][]trigger{"unit/starts-source": {
		{flow: "unit/starts-done", when: []core.RunEnd{core.WhenCompleted}},
		{flow: "unit/starts-fail", when: []core.RunEnd{core.WhenFailed}},
		{flow: "unit/starts-both", when: []core.RunEnd{core.WhenCompleted, core.WhenFailed}},
	}}, got)

	err := NewWorker(nil, WorkerOptions{}, startsOnDone).Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "flow unit/starts-done is started by runs of unit/starts-source, which this worker does not serve")
	require.NoError(t, NewWorker(nil, WorkerOptions{}, startsSource, startsOnDone).Validate())

	for s, want := range map[runs.Status]core.RunEnd{runs.StatusCompleted: core.WhenCompleted, runs.StatusWarning: core.WhenCompleted,
		runs.StatusFailed: core.WhenFailed, runs.StatusBudgetExceeded: core.WhenFailed, runs.StatusRejected: core.WhenFailed} {
		got, ok := runEndOf(s)
		assert.True(t, ok, s)
		assert.Equal(t, want, got, s)
	}
	_, ok := runEndOf(runs.StatusCancelled)
	assert.False(t, ok, "a cancelled run triggers nothing")
}

func TestRunEndStartsTheTriggeredFlowsOnce(t *testing.T) {
	flows := []Definition{startsSource, startsOnDone, startsOnFail, startsOnBoth}
	cfg := runConfig{triggers: triggersOf(flows)}
	for _, tc := range []struct {
		name  string
		fail  bool
		want  []string
		input string
	}{
		{"completed", false, []string{"unit/starts-done", "unit/starts-both"}, `{"value":"all"}`},
		{"failed", true, []string{"unit/starts-fail", "unit/starts-both"}, `{"value":"partial"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newUnitEnv(t, cfg, flows...)
			starts := &callLog[protocol.TriggerStart]{}
			env.RegisterActivityWithOptions(func(_ context.Context, req protocol.TriggerStart) (*core.Run, error) {
				starts.add(req)
				if req.Flow == "unit/starts-both" {
					// A refused start is logged; the run keeps its outcome.
					return nil, temporal.NewNonRetryableApplicationError("refused", errorTriggerRefused, nil)
				}
				return &core.Run{ID: req.ID, RunID: "r", Workflow: req.Flow}, nil
			}, activity.RegisterOptions{Name: protocol.TriggerStartActivity})
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "src-1"})
			env.ExecuteWorkflow(startsSource.Name(), failIn{Fail: tc.fail})
			require.True(t, env.IsWorkflowCompleted())
			if tc.fail {
				require.Error(t, env.GetWorkflowError())
			} else {
				require.NoError(t, env.GetWorkflowError())
			}
			calls := starts.all()
			require.Len(t, calls, len(tc.want))
			// The triggered flows start together: their activities may run in any order.
			var got []string
			for _, req := range calls {
				got = append(got, req.Flow)
			}
			assert.ElementsMatch(t, tc.want, got)
			for _, req := range calls {
				assert.NotEmpty(t, req.ByRunID)
				assert.Equal(t, protocol.TriggeredID(req.Flow, "src-1", req.ByRunID), req.ID)
				assert.JSONEq(t, tc.input, string(req.Input))
				assert.Equal(t, "unit/starts-source", req.ByFlow)
				assert.Equal(t, "src-1", req.ByID)
			}
		})
	}
}

func TestPlanRunsTriggerNothing(t *testing.T) {
	flows := []Definition{startsSource, startsOnDone}
	env := newUnitEnv(t, runConfig{triggers: triggersOf(flows)}, flows...)
	startWith(t, env, protocol.RunOptions{Plan: true, QuotaChecked: true})
	env.ExecuteWorkflow(startsSource.Name(), failIn{})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
}

func TestStartIDsAreDeterministicAndSafe(t *testing.T) {
	assert.Equal(t, "once:a/b@q", protocol.OnceID("a/b", "q"))
	assert.Equal(t, "a-b/triggered-by/src-1/r1", protocol.TriggeredID("a/b", "src-1", "r1"))
	assert.Equal(t, "f/on-signal/order/o-1", protocol.SignalStartID("f", "order", "o-1"))
	spaced := protocol.SignalStartID("f", "order", "key with spaces")
	assert.Regexp(t, `^f/on-signal/h-[0-9a-f]{24}$`, spaced)
	assert.Equal(t, spaced, protocol.SignalStartID("f", "order", "key with spaces"))
	assert.NotEqual(t, spaced, protocol.SignalStartID("f", "order", "key with  spaces"))
	for _, id := range []string{protocol.OnceID("a", "q"), protocol.TriggeredID("a", "x", "y"), spaced} {
		require.NoError(t, startplan.ValidateStart(core.StartOptions{ID: id}, time.Now()), id)
	}
	raw, err := json.Marshal(protocol.TriggerStart{Flow: "f"})
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"flow":"f"`)
}
