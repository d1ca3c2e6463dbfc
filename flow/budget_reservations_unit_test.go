// Budget reservations and monthly charges where they are easy to get wrong: a parallel
// group called again, charges settled on a cancelled context, children's charge keys.

package flow

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/internal/protocol"
)

// A parallel group may be called again, in the same attempt or the next: its reservation
// keys are not those of the earlier call, whose keys are charged already (keys of the form
// "group/step#index" alone would make budget.Ledger.ReserveAll refuse the second call with
// a *KeyError, even without a cap: agent steps always reserve, their MaxBudgetUSD or zero).
func TestParallelGroupMayBeCalledAgain(t *testing.T) {
	t.Run("twice in one attempt", func(t *testing.T) {
		var errs callLog[error]
		f := Define("unit/bug-wave-twice", func(ctx *Context, _ none) (none, error) {
			for i := 0; i < 2; i++ {
				_, err := ctx.Parallel("wave", WaitAll, AgentStep("x", spend{"x", "0.10", "0.10"}.agentSpec()))
				errs.add(err)
			}
			return none{}, nil
		})
		env := newUnitEnv(t, runConfig{}, f)
		agents := mockSpends(env, spend{"x", "0.10", "0.10"})
		env.ExecuteWorkflow(f.Name(), none{})
		require.NoError(t, env.GetWorkflowError())
		require.Len(t, errs.all(), 2)
		assert.NoError(t, errs.all()[0])
		assert.NoError(t, errs.all()[1], "the second call reserves under keys of its own")
		assert.Len(t, agents.all(), 2)
	})
	t.Run("in the next run attempt", func(t *testing.T) {
		f := Define("unit/bug-wave-attempts", func(ctx *Context, _ none) (string, error) {
			if _, err := ctx.Parallel("wave", WaitAll, AgentStep("think", activities.Agent{Prompt: "p", Model: "m"})); err != nil {
				return "", err
			}
			res, err := ctx.Shell("flaky", activities.Shell{Command: "flaky"})
			return res.Stdout, err
		}, MaxAttempts(2))
		env := newFlakyEnv(t, runConfig{}, f, 1)
		env.ExecuteWorkflow(f.Name(), none{})
		require.NoError(t, env.GetWorkflowError(), "attempt 2 does not reuse the reservation keys of attempt 1")
		assert.Len(t, env.agent.all(), 2)
	})
}

// With FailFast, Parallel cancels its context at the first failure, and the steps settled
// after it (a sibling that failed, or finished, in the same moment) are recorded on that
// cancelled context: the charge of the monthly ledger must still be made (chargeQuota runs
// on a disconnected context), so the month always has what the run charged.
//
// The test environment sometimes replaces the result of an activity that finished as its
// context was cancelled with the cancellation (a real server records the result), so the
// run may have charged one or both steps; what it charged, the month must have too.
func TestFailFastChargesTheMonthEverythingTheRunCharged(t *testing.T) {
	f := Define("unit/failfast-quota", func(ctx *Context, _ none) (none, error) {
		_, err := ctx.Parallel("wave", FailFast,
			AgentStep("bad1", activities.Agent{Prompt: "bad1", Model: "m"}, Retry(temporal.RetryPolicy{MaximumAttempts: 1})),
			AgentStep("bad2", activities.Agent{Prompt: "bad2", Model: "m"}, Retry(temporal.RetryPolicy{MaximumAttempts: 1})))
		return none{}, err
	})
	env := newUnitEnv(t, runConfig{quotas: overallQuota()}, f)
	startWith(t, env, protocol.RunOptions{QuotaChecked: true})
	q := mockQuotas(env, nil)
	// Both calls fail at the same moment, each after spending $0.30: each waits for the
	// other to have started, so both failures reach the run together.
	var started sync.WaitGroup
	started.Add(2)
	env.OnActivity(activities.AgentActivity, mock.Anything, mock.Anything).After(time.Minute).Return(
		func(_ context.Context, a activities.Agent) (activities.AgentResult, error) {
			started.Done()
			started.Wait()
			return activities.AgentResult{}, temporal.NewNonRetryableApplicationError("boom "+a.Prompt, "test", nil,
				failureDetailsJSON{Attempt: 1, CostUSD: dec("0.30")})
		})
	env.ExecuteWorkflow(f.Name(), none{})
	require.Error(t, env.GetWorkflowError())
	st := queryState(t, env)
	require.True(t, st.CostUSD.Equal(dec("0.30")) || st.CostUSD.Equal(dec("0.60")), "the run charged one or both: %s", st.CostUSD)
	month := decimal.Zero
	charged := 0
	for _, ch := range q.charges.all() {
		month = month.Add(ch.Amount)
		charged++
	}
	assert.True(t, month.Equal(st.CostUSD), "the month has $%s, the run charged $%s", month, st.CostUSD)
	paid := 0
	for _, s := range st.Steps {
		if s.CostUSD.IsPositive() {
			paid++
		}
	}
	assert.Equal(t, paid, charged, "one monthly charge per step that cost money")
}

// budget.ChargeKey needs run IDs without "/" (keys of different runs never collide), and a
// child's workflow ID is always "PARENT/STEP": the child "rel-1/smoke"'s step "c1" and the
// parent "rel-1"'s step "smoke/c1" must get different keys, or the monthly ledger drops
// one of the two costs as a repeat. (Workflow IDs are also reused
// by later runs, whose charges collide the same way.)
func TestMonthlyChargeKeysAreDistinct(t *testing.T) {
	charge := func(id, step string, memo map[string]any) protocol.QuotaCharge {
		f := Define("unit/bug-keys", func(ctx *Context, _ none) (none, error) {
			_, err := ctx.Agent(step, activities.Agent{Prompt: "p", Model: "m"})
			return none{}, err
		})
		env := newUnitEnv(t, runConfig{quotas: overallQuota()}, f)
		env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: id})
		require.NoError(t, env.SetMemoOnStart(memo))
		q := mockQuotas(env, nil)
		mockSpends(env, spend{"p", "", "0.10"})
		env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, mock.Anything, mock.Anything, mock.Anything).Return(nil).Maybe()
		env.ExecuteWorkflow(f.Name(), none{})
		require.NoError(t, env.GetWorkflowError())
		require.Len(t, q.charges.all(), 1)
		return q.charges.all()[0]
	}
	parent := charge("rel-1", "smoke/c1", map[string]any{protocol.MemoOptions: protocol.RunOptions{QuotaChecked: true}})
	child := charge("rel-1/smoke", "c1", map[string]any{protocol.MemoParent: parentInfo{ParentID: "rel-1", ParentRunID: "r",
		Step: "smoke", Depth: 1, Guards: DefaultGuards}})
	assert.NotEqual(t, parent.Key, child.Key, "two runs' steps, one key: %s", parent.Key)
}
