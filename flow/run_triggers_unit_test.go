package flow

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/protocol"
)

// startsMapped starts on a completed or failed run of unit/starts-source when its output
// says "all", with a mapped input.
var startsMapped = Define("unit/starts-mapped", func(_ *Context, in map[string]string) (string, error) { return in["got"], nil },
	OnRunOf("unit/starts-source", core.WhenCompleted, core.WhenFailed),
	TriggerInput("unit/starts-source", func(end core.RunEnd, output json.RawMessage) (any, bool, error) {
		var out startsOut
		if err := json.Unmarshal(output, &out); err != nil {
			return nil, false, err
		}
		if out.Value != "all" {
			return nil, false, nil
		}
		return map[string]string{"got": out.Value + "/" + string(end)}, true, nil
	}))

// TestTriggerInputDecidesAndMaps: a TriggerInput that says no starts nothing, one that
// says yes starts the flow with its input; the other triggers are unaffected.
func TestTriggerInputDecidesAndMaps(t *testing.T) {
	flows := []Definition{startsSource, startsOnBoth, startsMapped}
	for _, tc := range []struct {
		name string
		fail bool
		want map[string]string
	}{
		{"condition true", false, map[string]string{"unit/starts-both": `{"value":"all"}`, "unit/starts-mapped": `{"got":"all/completed"}`}},
		{"condition false", true, map[string]string{"unit/starts-both": `{"value":"partial"}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newUnitEnv(t, runConfig{triggers: triggersOf(flows)}, flows...)
			starts := &callLog[protocol.TriggerStart]{}
			env.RegisterActivityWithOptions(func(_ context.Context, req protocol.TriggerStart) (*core.Run, error) {
				starts.add(req)
				return &core.Run{ID: req.ID, RunID: "r", Workflow: req.Flow}, nil
			}, activity.RegisterOptions{Name: protocol.TriggerStartActivity})
			env.ExecuteWorkflow(startsSource.Name(), failIn{Fail: tc.fail})
			require.True(t, env.IsWorkflowCompleted())
			got := map[string]string{}
			for _, req := range starts.all() {
				got[req.Flow] = string(req.Input)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestCallTriggerMap: each answer of a TriggerInput function, as the ended run records it.
func TestCallTriggerMap(t *testing.T) {
	out := json.RawMessage(`{"n":1}`)
	for _, tc := range []struct {
		name string
		fn   core.TriggerMap
		want mappedTrigger
	}{
		{"start with a value", func(core.RunEnd, json.RawMessage) (any, bool, error) { return map[string]int{"m": 2}, true, nil },
			mappedTrigger{Start: true, Input: json.RawMessage(`{"m":2}`)}},
		{"start with the output", func(_ core.RunEnd, o json.RawMessage) (any, bool, error) { return o, true, nil },
			mappedTrigger{Start: true, Input: out}},
		{"start with nothing", func(core.RunEnd, json.RawMessage) (any, bool, error) { return nil, true, nil },
			mappedTrigger{Start: true, Input: json.RawMessage(`null`)}},
		{"skip", func(core.RunEnd, json.RawMessage) (any, bool, error) { return "ignored", false, nil }, mappedTrigger{}},
		{"error", func(core.RunEnd, json.RawMessage) (any, bool, error) { return nil, true, errors.New("no ticket") },
			mappedTrigger{Err: "no ticket"}},
		{"not JSON", func(core.RunEnd, json.RawMessage) (any, bool, error) { return func() {}, true, nil },
			mappedTrigger{Err: "trigger input: encode input: json: unsupported type: func()"}},
		{"panic", func(core.RunEnd, json.RawMessage) (any, bool, error) { panic("boom") },
			mappedTrigger{Err: "trigger input panicked: boom"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, callTriggerMap(tc.fn, core.WhenCompleted, out))
		})
	}
}

func TestTriggerInputIsValidatedAtDefine(t *testing.T) {
	noop := func(*Context, map[string]int) (string, error) { return "", nil }
	fn := func(core.RunEnd, json.RawMessage) (any, bool, error) { return nil, true, nil }
	for _, tc := range []struct {
		name string
		opts []Option
		want string
	}{
		{"without OnRunOf", []Option{TriggerInput("other", fn)}, `trigger input for other: give OnRunOf("other", ...) before it`},
		{"before OnRunOf", []Option{TriggerInput("other", fn), OnRunOf("other", core.WhenCompleted)}, "give OnRunOf"},
		{"twice", []Option{OnRunOf("other", core.WhenCompleted), TriggerInput("other", fn), TriggerInput("other", fn)}, "trigger input for other: given twice"},
		{"nil", []Option{OnRunOf("other", core.WhenCompleted), TriggerInput("other", nil)}, "the function is nil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Define("unit/opts", noop, tc.opts...).Err()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	info := Define("unit/opts", noop, OnRunOf("other", core.WhenCompleted), TriggerInput("other", fn)).Info()
	require.Len(t, info.Triggers, 1)
	assert.True(t, info.Triggers[0].Mapped)
	b, err := json.Marshal(info.Triggers[0])
	require.NoError(t, err)
	assert.JSONEq(t, `{"flow":"other","when":["completed"],"mapped":true}`, string(b))
}
