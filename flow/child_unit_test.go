package flow

import (
	"errors"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/searchattr"
)

// childView is what a child run saw of its start.
type childView struct {
	ID, Status, Version, Category string
}

// newChildFlow runs one shell step with the input as its command; views gets what each
// run saw.
func newChildFlow(views *callLog[childView]) *Flow[string, string] {
	return Define("unit/child", func(ctx *Context, cmd string) (string, error) {
		sa := workflow.GetTypedSearchAttributes(ctx.Workflow())
		v := childView{ID: ctx.RunID()}
		v.Status, _ = sa.GetKeyword(searchattr.StatusKey)
		v.Version, _ = sa.GetKeyword(searchattr.VersionKey)
		v.Category, _ = sa.GetKeyword(searchattr.CategoryKey)
		views.add(v)
		r, err := ctx.Shell("c1", activities.Shell{Command: cmd})
		return "child:" + r.Stdout, err
	}, Version("2"), Category("tests/child"))
}

// newParentFlow runs a child for each command, as steps named "smoke", with opts.
func newParentFlow(child *Flow[string, string], cmds []string, stepOpts []StepOption, opts ...Option) *Flow[none, []string] {
	return Define("unit/parent", func(ctx *Context, _ none) ([]string, error) {
		var outs []string
		for _, cmd := range cmds {
			out, err := Child(ctx, "smoke", child, cmd, stepOpts...)
			if err != nil {
				return outs, err
			}
			outs = append(outs, out)
		}
		return outs, nil
	}, opts...)
}

func TestChildRunsAsAChildWorkflow(t *testing.T) {
	var views callLog[childView]
	child := newChildFlow(&views)
	parent := newParentFlow(child, []string{"one", "two"}, []StepOption{StepTimeout(20 * time.Minute)})
	env := newUnitEnv(t, runConfig{}, parent, child)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "rel-1"})
	mockShell(env, deployShell)
	var runTimeouts callLog[time.Duration]
	env.SetOnChildWorkflowStartedListener(func(info *workflow.Info, _ workflow.Context, _ converter.EncodedValues) {
		runTimeouts.add(info.WorkflowRunTimeout)
	})
	env.ExecuteWorkflow(parent.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	var out []string
	require.NoError(t, env.GetWorkflowResult(&out))
	assert.Equal(t, []string{"child:one ok", "child:two ok"}, out)

	assert.Equal(t, []childView{
		{ID: "rel-1/smoke", Status: "running", Version: "2", Category: "tests/child"},
		{ID: "rel-1/smoke#2", Status: "running", Version: "2", Category: "tests/child"},
	}, views.all(), "child IDs come from the parent and step; the child's version passes its gate")
	assert.Equal(t, []time.Duration{20 * time.Minute, 20 * time.Minute}, runTimeouts.all(), "StepTimeout bounds the child run")

	st := queryState(t, env)
	assert.Equal(t, runs.StatusCompleted, st.Status)
	require.Len(t, st.Steps, 2)
	for i, id := range []string{"rel-1/smoke", "rel-1/smoke#2"} {
		s := st.Steps[i]
		assert.Equal(t, runs.KindChild, s.Kind)
		assert.Equal(t, runs.StepCompleted, s.Status)
		assert.Equal(t, id+" completed", s.Output)
		require.NotNil(t, s.Child)
		assert.Equal(t, id, s.Child.ID)
		assert.Equal(t, "unit/child", s.Child.Workflow)
		assert.NotEmpty(t, s.Child.RunID)
		assert.Equal(t, runs.StatusCompleted, s.Child.Status, "without a report the status comes from the result")
	}
}

func TestChildFailureWithoutReport(t *testing.T) {
	tests := []struct {
		name       string
		opts       []StepOption
		wantErr    string
		wantStatus runs.Status
	}{
		{"fails the parent", nil, "step smoke: step c1: exit code 3: boom", runs.StatusFailed},
		{"allowed", []StepOption{AllowFailure()}, "", runs.StatusWarning},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var views callLog[childView]
			child := newChildFlow(&views)
			parent := newParentFlow(child, []string{"deploy-fails"}, tt.opts)
			env := newUnitEnv(t, runConfig{}, parent, child)
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "rel-2"})
			mockShell(env, deployShell)
			env.ExecuteWorkflow(parent.Name(), none{})
			require.True(t, env.IsWorkflowCompleted())
			if tt.wantErr != "" {
				var app *temporal.ApplicationError
				require.True(t, errors.As(env.GetWorkflowError(), &app))
				assert.Equal(t, tt.wantErr, app.Message())
			} else {
				require.NoError(t, env.GetWorkflowError())
			}
			st := queryState(t, env)
			assert.Equal(t, tt.wantStatus, st.Status)
			s := stepByName(t, st, "smoke")
			assert.Equal(t, runs.StepFailed, s.Status)
			assert.Equal(t, "step c1: exit code 3: boom", s.Error)
			assert.Equal(t, tt.wantErr == "", s.AllowedFailure)
			require.NotNil(t, s.Child)
			assert.Equal(t, runs.StatusFailed, s.Child.Status, "status from the child's error")
			assert.Equal(t, "step c1: exit code 3: boom", s.Child.Error)
		})
	}
}

// TestChildReportRollsUp: the test environment only routes SignalExternalWorkflow to
// children (and gives a child no Memo, so it does not know its parent), so the child's
// report is delivered to the parent here as the server would: before the child ends.
func TestChildReportRollsUp(t *testing.T) {
	report := runs.Child{ID: "rel-3/smoke", RunID: "r1", Status: runs.StatusWarning, CostUSD: dec("0.25"),
		Tokens: runs.Tokens{Input: 30, Output: 12},
		Steps: []runs.Step{{Name: "think", Kind: runs.KindAgent, Status: runs.StepFailed, AllowedFailure: true, Attempt: 1,
			CostUSD: dec("0.25"), Error: "agent: no"}}}
	tests := []struct {
		name       string
		opts       []Option
		wantErr    string
		wantStatus runs.Status
	}{
		{"cost, tokens, steps and status", nil, "", runs.StatusWarning},
		{"tokens count for the parent's guard", []Option{WithGuards(Guards{MaxTokens: 40})},
			"step smoke: guard: tokens 42 exceeds the limit of 40 at step smoke", runs.StatusFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var views callLog[childView]
			child := newChildFlow(&views)
			parent := newParentFlow(child, []string{"slow"}, nil, tt.opts...)
			env := newUnitEnv(t, runConfig{}, parent, child)
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "rel-3"})
			slowShell(env, "slow", 10*time.Minute)
			env.RegisterDelayedCallback(func() {
				env.SignalWorkflow(protocol.SignalChildReport, runs.Child{ID: "rel-3/unrelated", Status: runs.StatusFailed, CostUSD: dec("9")})
				env.SignalWorkflow(protocol.SignalChildReport, report)
			}, 5*time.Minute)
			env.ExecuteWorkflow(parent.Name(), none{})
			require.True(t, env.IsWorkflowCompleted())
			if tt.wantErr != "" {
				var app *temporal.ApplicationError
				require.True(t, errors.As(env.GetWorkflowError(), &app))
				assert.Equal(t, tt.wantErr, app.Message())
			} else {
				require.NoError(t, env.GetWorkflowError())
			}

			st := queryState(t, env)
			assert.Equal(t, tt.wantStatus, st.Status)
			s := stepByName(t, st, "smoke")
			assert.Equal(t, runs.StepCompleted, s.Status)
			assert.Equal(t, "rel-3/smoke warning", s.Output)
			assert.Equal(t, "0.25", s.CostUSD.String())
			assert.Equal(t, &runs.Tokens{Input: 30, Output: 12}, s.Tokens)
			require.NotNil(t, s.Child)
			assert.Equal(t, runs.StatusWarning, s.Child.Status, "status from the report")
			assert.Equal(t, "0.25", s.Child.CostUSD.String())
			assert.Equal(t, runs.Tokens{Input: 30, Output: 12}, s.Child.Tokens)
			require.Len(t, s.Child.Steps, 1)
			assert.Equal(t, "think", s.Child.Steps[0].Name)
			assert.Equal(t, "0.25", st.CostUSD.String(), "the unrelated report is not charged")
			assert.Equal(t, runs.Tokens{Input: 30, Output: 12}, st.Tokens)
			assert.Equal(t, 1, st.AllowedFailures, "a child that ended with warning counts as an allowed failure")
			assert.Contains(t, currentDetails(t, env), "| ↳ think | agent | failed (allowed) | 1 |")
		})
	}
}

// TestChildReportsToItsParent starts a child run directly, with the Memo its parent would
// give it, and catches the report signal it sends.
func TestChildReportsToItsParent(t *testing.T) {
	tree := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	pi := parentInfo{ParentID: "p-1", ParentRunID: "p-run", Step: "smoke", Depth: 1,
		Guards: Guards{MaxChildDepth: 1, MaxFanOut: 4, MaxTokens: 500, MaxWallTime: -1}, StartedAt: tree}
	tests := []struct {
		name       string
		treeTokens int64
		wantStatus runs.Status
		wantErr    string
	}{
		{"completed, deeper child refused", 100, runs.StatusCompleted, ""},
		{"the parent's tree tokens count", 490, runs.StatusFailed, "step think: guard: tokens 505 exceeds the limit of 500 at step think"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var grandErr error
			grand := Define("unit/grand", func(*Context, none) (none, error) { return none{}, nil })
			child := Define("unit/reporting-child", func(ctx *Context, _ none) (none, error) {
				if _, err := ctx.Agent("think", activities.Agent{Prompt: "p", Model: "m"}); err != nil {
					return none{}, err
				}
				_, grandErr = Child(ctx, "grand", grand, none{})
				return none{}, nil
			}, WithGuards(Guards{MaxChildDepth: 5, MaxTokens: -1}))
			env := newUnitEnv(t, runConfig{}, child, grand)
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "p-1/smoke"})
			p := pi
			p.TreeTokens = tt.treeTokens
			require.NoError(t, env.SetMemoOnStart(map[string]any{protocol.MemoParent: p}))
			mockAgent(env, func(activities.Agent) (activities.AgentResult, error) {
				return activities.AgentResult{Text: "ok", CostUSD: dec("0.01"), Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}}, nil
			})
			var reports callLog[runs.Child]
			env.OnSignalExternalWorkflow(mock.Anything, "p-1", "p-run", protocol.SignalChildReport, mock.Anything).Run(func(args mock.Arguments) {
				reports.add(args.Get(4).(runs.Child))
			}).Return(nil).Once()
			env.ExecuteWorkflow(child.Name(), none{})
			require.True(t, env.IsWorkflowCompleted())

			st := queryState(t, env)
			assert.Equal(t, tt.wantStatus, st.Status)
			assert.Equal(t, 1, st.Depth)
			assert.Equal(t, "p-1", st.ParentID)
			want := runs.Guards(pi.Guards)
			want.MaxSteps = DefaultGuards.MaxSteps // a limit the parent's worker did not know: the child's own
			assert.Equal(t, want, st.Guards, "the parent's guards, not the child flow's own")
			assert.True(t, tree.Equal(st.StartedAt), "wall time counts from the top-level run's start")

			require.Len(t, reports.all(), 1, "one report when the run ends")
			rep := reports.all()[0]
			assert.Equal(t, "p-1/smoke", rep.ID)
			assert.NotEmpty(t, rep.RunID)
			assert.Equal(t, tt.wantStatus, rep.Status)
			assert.Equal(t, "0.01", rep.CostUSD.String())
			assert.Equal(t, runs.Tokens{Input: 10, Output: 5}, rep.Tokens)
			assert.Equal(t, tt.wantErr, rep.Error)
			if tt.wantErr != "" {
				assert.Len(t, rep.Steps, 1)
				return
			}
			require.NoError(t, env.GetWorkflowError())
			assert.EqualError(t, grandErr, "step grand: guard: child depth 2 exceeds the limit of 1 at step grand")
			require.Len(t, rep.Steps, 2)
			assert.Equal(t, runs.KindChild, rep.Steps[1].Kind)
			assert.Equal(t, runs.StepFailed, rep.Steps[1].Status)
		})
	}
}

func TestChildRefusedBeforeStart(t *testing.T) {
	var errs []error
	var views callLog[childView]
	child := newChildFlow(&views)
	broken := Define[string, string]("bad name!", nil)
	parent := Define("unit/refusing-parent", func(ctx *Context, _ none) (none, error) {
		_, e1 := Child(ctx, "first", child, "one")
		_, e2 := Child(ctx, "second", child, "two")
		_, e3 := Child[string, string](ctx, "nil", nil, "x")
		_, e4 := Child(ctx, "broken", broken, "x")
		_, e5 := Child(ctx, "", child, "x")
		errs = []error{e1, e2, e3, e4, e5}
		return none{}, nil
	}, WithGuards(Guards{MaxFanOut: 1}))
	env := newUnitEnv(t, runConfig{}, parent, child)
	mockShell(env, deployShell)
	env.ExecuteWorkflow(parent.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	assert.Len(t, views.all(), 1, "only the first child started")
	require.Len(t, errs, 5)
	assert.NoError(t, errs[0])
	assert.EqualError(t, errs[1], "step second: guard: fan-out 2 exceeds the limit of 1 at step second")
	assert.ErrorIs(t, errs[1], errGuard)
	assert.EqualError(t, errs[2], "step nil: child flow: flow is nil")
	assert.ErrorContains(t, errs[3], "step broken: child flow: define bad name!: ")
	assert.EqualError(t, errs[4], "step : step name is empty")
	st := queryState(t, env)
	require.Len(t, st.Steps, 5)
	for _, s := range st.Steps[1:] {
		assert.Equal(t, runs.KindChild, s.Kind, s.Name)
		assert.Equal(t, runs.StepFailed, s.Status, s.Name)
		assert.Nil(t, s.Child, "%s: no child record for a child never started", s.Name)
	}
}

func TestChildGetsTheParentsRemainingWallTime(t *testing.T) {
	var views callLog[childView]
	child := newChildFlow(&views)
	parent := Define("unit/wall-parent", func(ctx *Context, _ none) (string, error) {
		if err := ctx.Sleep("wait", 15*time.Minute); err != nil {
			return "", err
		}
		return Child(ctx, "smoke", child, "go")
	}, WithGuards(Guards{MaxWallTime: time.Hour}))
	env := newUnitEnv(t, runConfig{}, parent, child)
	mockShell(env, deployShell)
	var timeouts callLog[time.Duration]
	env.SetOnChildWorkflowStartedListener(func(info *workflow.Info, _ workflow.Context, _ converter.EncodedValues) {
		timeouts.add(info.WorkflowExecutionTimeout)
	})
	env.ExecuteWorkflow(parent.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, []time.Duration{45 * time.Minute}, timeouts.all())
}
