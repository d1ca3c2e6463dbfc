package entity

import (
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/protocol"
)

// The monthly ledger workflow (ported from flow/budget_quota_unit_test.go).

// summaries records every QuotaSummary a ledger upserts.
func summaries(env *testsuite.TestWorkflowEnvironment) *callLog[QuotaSummary] {
	l := &callLog[QuotaSummary]{}
	env.OnUpsertMemo(mock.Anything).Run(func(args mock.Arguments) {
		if s, ok := args.Get(0).(map[string]any)[protocol.MemoQuota].(QuotaSummary); ok {
			l.add(s)
		}
	}).Return(nil)
	return l
}

func TestLedgerCountsEachChargeKeyOnce(t *testing.T) {
	env := newTestEnv(t, protocol.LedgerWorkflowType, ledgerWorkflow)
	sums := summaries(env)
	charge := func(key, amount string) protocol.QuotaCharge {
		return protocol.QuotaCharge{Key: key, Amount: decimal.RequireFromString(amount), Workflow: "release", Month: "2026-11"}
	}
	signalAt(env, time.Minute, protocol.LedgerCharge, charge("r1/review", "0.10"))
	signalAt(env, 2*time.Minute, protocol.LedgerCharge, charge("r1/review", "0.10")) // a retried charge
	signalAt(env, 3*time.Minute, protocol.LedgerCharge, charge("r2/review", "0.05"))
	// The next charge is followed by a continue-as-new, which carries the state.
	env.RegisterDelayedCallback(func() { env.SetContinueAsNewSuggested(true) }, 4*time.Minute)
	signalAt(env, 5*time.Minute, protocol.LedgerCharge, charge("r1/review", "0.10"))
	env.ExecuteWorkflow(protocol.LedgerWorkflowType, LedgerState{Scope: budget.AllScope, Month: "2026-11"})
	require.True(t, env.IsWorkflowCompleted())

	all := sums.all()
	require.Len(t, all, 2, "the memo is upserted for each new key, not for a repeated one")
	assert.Equal(t, "0.1", all[0].Spent.String())
	assert.Equal(t, 1, all[0].Charges)
	assert.Equal(t, QuotaSummary{Scope: budget.AllScope, Month: "2026-11", Spent: all[1].Spent, Charges: 2}, all[1])
	assert.Equal(t, "0.15", all[1].Spent.String(), "the repeated key counted once")

	next := continuedAs[LedgerState](t, env.GetWorkflowError(), protocol.LedgerWorkflowType)
	require.NotNil(t, next.Quota)
	assert.Equal(t, budget.AllScope, next.Scope)
	assert.Equal(t, "0.15", next.Quota.Spent.String())
	assert.Equal(t, []string{"r1/review", "r2/review"}, next.Quota.Keys())
	assert.True(t, next.Quota.Has("r1/review"), "the keys survive the continue-as-new")
}

func TestLedgerStartsFromTheCarriedQuota(t *testing.T) {
	env := newTestEnv(t, protocol.LedgerWorkflowType, ledgerWorkflow)
	sums := summaries(env)
	scope := budget.WorkflowScope("release")
	q := budget.NewQuota(scope, "2026-11")
	require.True(t, q.Charge("r1/review", decimal.RequireFromString("0.10")))
	charge := func(key, amount string) protocol.QuotaCharge {
		return protocol.QuotaCharge{Key: key, Amount: decimal.RequireFromString(amount), Workflow: "release", Month: "2026-11"}
	}
	signalAt(env, time.Minute, protocol.LedgerCharge, charge("r1/review", "0.10")) // charged before the continue-as-new
	signalAt(env, 2*time.Minute, protocol.LedgerCharge, charge("r3/review", "0.25"))
	env.RegisterDelayedCallback(func() { env.SetContinueAsNewSuggested(true) }, 3*time.Minute)
	signalAt(env, 4*time.Minute, protocol.LedgerCharge, charge("r3/review", "0.25"))
	env.ExecuteWorkflow(protocol.LedgerWorkflowType, LedgerState{Scope: scope, Month: "2026-11", Quota: q})
	require.True(t, env.IsWorkflowCompleted())

	assert.Equal(t, []QuotaSummary{{Scope: scope, Month: "2026-11", Spent: sums.all()[0].Spent, Charges: 2}}, sums.all())
	assert.Equal(t, "0.35", sums.all()[0].Spent.String())
	next := continuedAs[LedgerState](t, env.GetWorkflowError(), protocol.LedgerWorkflowType)
	assert.Equal(t, scope, next.Scope)
	assert.Equal(t, "2026-11", next.Month)
	require.NotNil(t, next.Quota)
	assert.Equal(t, []string{"r1/review", "r3/review"}, next.Quota.Keys())
}

func TestLedgerContinuesAsNewAfterMaxCharges(t *testing.T) {
	env := newTestEnv(t, protocol.LedgerWorkflowType, ledgerWorkflow)
	sums := summaries(env)
	env.RegisterDelayedCallback(func() {
		for i := range ledgerMaxCharges {
			env.SignalWorkflow(protocol.LedgerCharge, protocol.QuotaCharge{
				Key: budget.ChargeKey(fmt.Sprintf("run-%d", i), "review"), Amount: decimal.RequireFromString("0.01"),
				Workflow: "release", Month: "2026-11",
			})
		}
	}, time.Minute)
	env.ExecuteWorkflow(protocol.LedgerWorkflowType, LedgerState{Scope: budget.AllScope, Month: "2026-11"})
	require.True(t, env.IsWorkflowCompleted())
	assert.Len(t, sums.all(), ledgerMaxCharges)
	next := continuedAs[LedgerState](t, env.GetWorkflowError(), protocol.LedgerWorkflowType)
	require.NotNil(t, next.Quota)
	assert.Equal(t, "10", next.Quota.Spent.String(), "1000 charges of a cent")
	assert.Len(t, next.Quota.Keys(), ledgerMaxCharges)
}
