package flow

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/protocol"
)

// Budgets of parallel waves, custom activity steps with CostLimit, and child runs.

// wavesFlow runs the agent steps of pre one by one, then the agent steps of wave as the
// parallel group "wave" (WaitAll); the run fails with the first error.
func wavesFlow(got *parallelRun, pre, wave []spend) *Flow[none, none] {
	return Define("unit/budget-wave", func(ctx *Context, _ none) (none, error) {
		for _, s := range pre {
			if _, err := ctx.Agent(s.name, s.agentSpec()); err != nil {
				return none{}, err
			}
		}
		steps := make([]ParallelStep, 0, len(wave))
		for _, s := range wave {
			steps = append(steps, AgentStep(s.name, s.agentSpec()))
		}
		got.results, got.err = ctx.Parallel("wave", WaitAll, steps...)
		return none{}, got.err
	})
}

func TestBudgetParallelWaveReservesTogether(t *testing.T) {
	third := func(limit string) []spend {
		return []spend{{"x", limit, limit}, {"y", limit, limit}, {"z", limit, limit}}
	}
	tests := []struct {
		name       string
		pre        []spend
		wave       []spend
		wantCalls  int // agent calls, the pre steps included
		wantStatus runs.Status
		wantErr    string
	}{
		{"limits over the cap together: nothing dispatched", nil, third("0.40"), 0, runs.StatusBudgetExceeded,
			"step wave: budget: parallel steps wave/x#0, wave/y#1, wave/z#2 need $1.20 together but only $1.00 of the $1.00 cap is left (spent $0.00)"},
		{"each fits alone, not together after a spend", []spend{{"pre", "0.26", "0.26"}}, third("0.25"), 1, runs.StatusBudgetExceeded,
			"step wave: budget: parallel steps wave/x#0, wave/y#1, wave/z#2 need $0.75 together but only $0.74 of the $1.00 cap is left (spent $0.26)"},
		{"exactly the cap: all dispatched", []spend{{"pre", "0.25", "0.25"}}, third("0.25"), 4, runs.StatusCompleted, ""},
		{"under the cap: all dispatched", nil, third("0.30"), 3, runs.StatusCompleted, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got parallelRun
			f := wavesFlow(&got, tt.pre, tt.wave)
			env := newUnitEnv(t, runConfig{}, f)
			startWith(t, env, protocol.RunOptions{MaxCostUSD: "1.00"})
			agents := mockSpends(env, append(append([]spend(nil), tt.pre...), tt.wave...)...)
			env.ExecuteWorkflow(f.Name(), none{})
			require.True(t, env.IsWorkflowCompleted())
			assert.Len(t, agents.all(), tt.wantCalls)
			st := queryState(t, env)
			assert.Equal(t, tt.wantStatus, st.Status)
			assert.Empty(t, st.Budget.Reservations, "no reservation outlives the wave")
			assert.True(t, st.Budget.Reserved.IsZero())
			if tt.wantErr != "" {
				assert.Equal(t, tt.wantErr, budgetError(t, env))
				assert.ErrorIs(t, got.err, budget.ErrExceeded)
				assert.Nil(t, got.results, "no results: no step of the wave was dispatched")
				require.Len(t, st.Steps, len(tt.pre)+3, "each step of the wave is recorded as refused")
				for _, s := range st.Steps[len(tt.pre):] {
					assert.Equal(t, runs.StepRefused, s.Status, s.Name)
					assert.Equal(t, "wave", s.Group)
					assert.Equal(t, strings.TrimPrefix(tt.wantErr, "step wave: "), s.Error, s.Name)
					assert.True(t, s.CostUSD.IsZero(), "a refused step cost nothing")
				}
				return
			}
			require.NoError(t, env.GetWorkflowError())
			require.Len(t, got.results, 3)
			for _, r := range got.results {
				require.NoError(t, r.Err, r.Name)
				require.NotNil(t, r.Agent, r.Name)
			}
			var waveCharges []budget.Charge
			for _, c := range st.Budget.Charges {
				if c.Step != "pre" {
					waveCharges = append(waveCharges, c)
				}
			}
			require.Len(t, waveCharges, 3)
			for _, c := range waveCharges {
				assertUSD(t, tt.wave[0].limit, c.Limit, "%s settles its own reservation", c.Key)
				assertUSD(t, tt.wave[0].cost, c.Amount, c.Key)
			}
		})
	}
}

// pricedResult is a custom activity's result that reports its cost.
type pricedResult struct {
	Cost decimal.Decimal `json:"cost"`
}

func (p pricedResult) StepCostUSD() decimal.Decimal { return p.Cost }

// pricer is a custom activity whose calls are logged; its argument is what it costs.
type pricer struct{ calls callLog[string] }

func (p *pricer) Price(_ context.Context, cost string) (pricedResult, error) {
	p.calls.add(cost)
	return pricedResult{Cost: decimal.RequireFromString(cost)}, nil
}

func TestBudgetCustomStepWithCostLimitReserves(t *testing.T) {
	tests := []struct {
		name      string
		limit     string
		wantCalls int
		wantErr   string
	}{
		{"over what is left: not dispatched", "0.51", 0,
			"step price: budget: step price needs $0.51 but only $0.50 of the $1.00 cap is left (spent $0.50)"},
		{"exactly what is left: runs and settles", "0.50", 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &pricer{}
			var stepErr error
			f := Define("unit/budget-custom", func(ctx *Context, _ none) (none, error) {
				if _, err := ctx.Agent("pre", spend{"pre", "0.50", "0.50"}.agentSpec()); err != nil {
					return none{}, err
				}
				_, stepErr = Step[pricedResult](ctx.With(CostLimit(dec(tt.limit))), "price", p.Price, "0.45")
				return none{}, stepErr
			})
			env := newUnitEnv(t, runConfig{}, f)
			env.RegisterActivityWithOptions(p.Price, activity.RegisterOptions{Name: "Price"})
			startWith(t, env, protocol.RunOptions{MaxCostUSD: "1.00"})
			mockSpends(env, spend{"pre", "0.50", "0.50"})
			env.ExecuteWorkflow(f.Name(), none{})
			require.True(t, env.IsWorkflowCompleted())
			assert.Len(t, p.calls.all(), tt.wantCalls)
			st := queryState(t, env)
			if tt.wantErr != "" {
				assert.Equal(t, tt.wantErr, budgetError(t, env))
				assert.ErrorIs(t, stepErr, budget.ErrExceeded)
				assert.Equal(t, runs.StepRefused, stepByName(t, st, "price").Status)
				assert.Equal(t, runs.StatusBudgetExceeded, st.Status)
				return
			}
			require.NoError(t, env.GetWorkflowError())
			assert.Equal(t, runs.StatusCompleted, st.Status)
			assertUSD(t, "0.45", stepByName(t, st, "price").CostUSD, "the result's StepCostUSD is charged")
			require.Len(t, st.Budget.Charges, 2)
			c := st.Budget.Charges[1]
			assert.Equal(t, "price", c.Key)
			assertUSD(t, "0.50", c.Limit, "the CostLimit was the reservation")
			assertUSD(t, "0.45", c.Amount)
			assertUSD(t, "0.95", st.Budget.Spent)
		})
	}
}

func TestBudgetParallelCustomStepsReserveTheirCostLimit(t *testing.T) {
	tests := []struct {
		name      string
		cap       string
		wantCalls int
	}{
		{"three limits of $0.40 over a $1.00 cap", "1.00", 0},
		{"three limits of $0.40 within a $1.20 cap", "1.20", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &pricer{}
			var got parallelRun
			f := Define("unit/budget-custom-wave", func(ctx *Context, _ none) (none, error) {
				got.results, got.err = ctx.With(CostLimit(dec("0.40"))).Parallel("prices", WaitAll,
					ActivityStep("p1", p.Price, "0.10"), ActivityStep("p2", p.Price, "0.20"), ActivityStep("p3", p.Price, "0.30"))
				return none{}, got.err
			})
			env := newUnitEnv(t, runConfig{}, f)
			env.RegisterActivityWithOptions(p.Price, activity.RegisterOptions{Name: "Price"})
			startWith(t, env, protocol.RunOptions{MaxCostUSD: tt.cap})
			env.ExecuteWorkflow(f.Name(), none{})
			require.True(t, env.IsWorkflowCompleted())
			assert.Len(t, p.calls.all(), tt.wantCalls)
			st := queryState(t, env)
			if tt.wantCalls == 0 {
				assert.Contains(t, budgetError(t, env), "parallel steps prices/p1#0, prices/p2#1, prices/p3#2 need $1.20 together")
				assert.Equal(t, runs.StatusBudgetExceeded, st.Status)
				return
			}
			require.NoError(t, env.GetWorkflowError())
			assertUSD(t, "0.60", st.Budget.Spent, "each step is charged the cost its result reports")
			require.Len(t, st.Budget.Charges, 3)
			for _, c := range st.Budget.Charges {
				assertUSD(t, "0.40", c.Limit, c.Key)
			}
		})
	}
}

// childMemos is a worker interceptor that logs the Memo of every child run started.
type childMemos struct {
	interceptor.WorkerInterceptorBase
	memos callLog[map[string]any]
}

func (c *childMemos) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &childMemosInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, log: &c.memos}
}

type childMemosInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	log *callLog[map[string]any]
}

func (i *childMemosInbound) Init(out interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&childMemosOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: out}, log: i.log})
}

type childMemosOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	log *callLog[map[string]any]
}

func (o *childMemosOutbound) ExecuteChildWorkflow(ctx workflow.Context, childType string, args ...any) workflow.ChildWorkflowFuture {
	o.log.add(workflow.GetChildWorkflowOptions(ctx).Memo)
	return o.Next.ExecuteChildWorkflow(ctx, childType, args...)
}

func TestBudgetChildGetsTheParentsRemainingCap(t *testing.T) {
	tests := []struct {
		name     string
		opts     []StepOption
		wantCap  string
		wantLeft string // what the parent has left while the child runs
	}{
		{"what is left", nil, "0.35", "0"},
		{"a smaller CostLimit", []StepOption{CostLimit(dec("0.10"))}, "0.10", "0.25"},
		{"a larger CostLimit does not raise it", []StepOption{CostLimit(dec("0.50"))}, "0.35", "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var views callLog[childView]
			child := newChildFlow(&views)
			parent := Define("unit/budget-parent", func(ctx *Context, _ none) (string, error) {
				if _, err := ctx.Agent("plan", spend{"plan", "0.25", "0.25"}.agentSpec()); err != nil {
					return "", err
				}
				return Child(ctx, "sub", child, "slow", tt.opts...)
			})
			env := newUnitEnv(t, runConfig{}, parent, child)
			memos := &childMemos{}
			env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{memos}})
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "p-cap"})
			startWith(t, env, protocol.RunOptions{MaxCostUSD: "0.60"})
			mockSpends(env, spend{"plan", "0.25", "0.25"})
			env.OnActivity(activities.ShellActivity, mock.Anything, mock.Anything).After(10*time.Minute).
				Return(activities.ShellResult{Stdout: "ok"}, nil)
			during := stateAt(t, env, 5*time.Minute)
			env.ExecuteWorkflow(parent.Name(), none{})
			require.NoError(t, env.GetWorkflowError())
			require.Len(t, views.all(), 1, "the child ran")

			require.Len(t, memos.memos.all(), 1)
			pi, ok := memos.memos.all()[0][protocol.MemoParent].(parentInfo)
			require.True(t, ok, "the child's Memo holds its parentInfo")
			assertUSD(t, tt.wantCap, dec(pi.CapUSD), "the child's cap")

			require.NotNil(t, during.Budget)
			require.Len(t, during.Budget.Reservations, 1, "the child's cap is reserved while it runs")
			assert.Equal(t, "sub", during.Budget.Reservations[0].Key)
			assertUSD(t, tt.wantCap, during.Budget.Reservations[0].Amount)
			left, capped := during.Budget.Remaining()
			assert.True(t, capped)
			assertUSD(t, tt.wantLeft, left)

			st := queryState(t, env)
			assert.Empty(t, st.Budget.Reservations, "settled when the child ended")
		})
	}
}

func TestBudgetChildCapFromItsParent(t *testing.T) {
	pi := parentInfo{ParentID: "p-1", ParentRunID: "p-run", Step: "sub", Depth: 1, Guards: DefaultGuards, CapUSD: "0.35"}
	tests := []struct {
		name       string
		flowCap    string
		limit      string // the child's agent step's MaxBudgetUSD
		wantAmount string
		wantSource budget.Source
		wantStatus runs.Status
	}{
		{"the parent's cap", "", "0.35", "0.35", budget.SourceParent, runs.StatusCompleted},
		{"a lower flow default stays", "0.20", "0.20", "0.20", budget.SourceFlow, runs.StatusCompleted},
		{"a higher flow default gives way", "0.50", "0.35", "0.35", budget.SourceParent, runs.StatusCompleted},
		{"a step over the parent's cap is refused", "", "0.36", "0.35", budget.SourceParent, runs.StatusBudgetExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []Option
			if tt.flowCap != "" {
				opts = append(opts, MaxCostUSD(dec(tt.flowCap)))
			}
			var got spendRun
			child := spendsFlow("unit/budget-child", &got, false, []spend{{"think", tt.limit, "0.05"}}, opts...)
			// The worker's default is higher still: the parent's cap beats it.
			env := newUnitEnv(t, runConfig{maxCost: decp("5.00")}, child)
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "p-1/sub"})
			require.NoError(t, env.SetMemoOnStart(map[string]any{protocol.MemoParent: pi}))
			agents := mockSpends(env, spend{"think", tt.limit, "0.05"})
			mockShell(env, deployShell)
			var reports callLog[runs.Child]
			env.OnSignalExternalWorkflow(mock.Anything, "p-1", "p-run", protocol.SignalChildReport, mock.Anything).Run(func(args mock.Arguments) {
				reports.add(args.Get(4).(runs.Child))
			}).Return(nil).Once()
			env.ExecuteWorkflow(child.Name(), none{})
			require.True(t, env.IsWorkflowCompleted())

			st := queryState(t, env)
			require.NotNil(t, st.Budget)
			assert.True(t, st.Budget.Cap.Set)
			assertUSD(t, tt.wantAmount, st.Budget.Cap.Amount)
			assert.Equal(t, tt.wantSource, st.Budget.Cap.Source)
			assert.Equal(t, tt.wantStatus, st.Status)
			require.Len(t, reports.all(), 1)
			assert.Equal(t, tt.wantStatus, reports.all()[0].Status, "the parent hears how the child's budget went")
			if tt.wantStatus == runs.StatusBudgetExceeded {
				assert.Empty(t, agents.all(), "the step was never dispatched")
				assert.Equal(t, "step think: budget: step think needs $0.36 but only $0.35 of the $0.35 cap is left (spent $0.00)",
					budgetError(t, env), "the parent tells a budget stop by the error type")
				return
			}
			require.NoError(t, env.GetWorkflowError())
			assert.Len(t, agents.all(), 1)
			assertUSD(t, "0.05", reports.all()[0].CostUSD, "the child's spend rolls up through its report")
		})
	}
}
