package flow

import (
	"context"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/protocol"
)

// Monthly quotas: the check before a run not started by a Client, the charges of its
// steps, and the ledger entity workflow.

// overallQuota is a worker's overall monthly quota of $50.
func overallQuota() budget.Quotas { return budget.Quotas{MonthlyUSD: decp("50")} }

// quotaMocks logs the quota activities a run calls; check answers the check.
type quotaMocks struct {
	checks  callLog[string]
	charges callLog[protocol.QuotaCharge]
}

func mockQuotas(env *testsuite.TestWorkflowEnvironment, check error) *quotaMocks {
	q := &quotaMocks{}
	env.RegisterActivityWithOptions(func(context.Context, string) error { return nil }, activity.RegisterOptions{Name: protocol.QuotaCheckActivity})
	env.RegisterActivityWithOptions(func(context.Context, protocol.QuotaCharge) error { return nil }, activity.RegisterOptions{Name: protocol.QuotaChargeActivity})
	env.OnActivity(protocol.QuotaCheckActivity, mock.Anything, mock.Anything).Return(
		func(_ context.Context, name string) error {
			q.checks.add(name)
			return check
		}).Maybe()
	env.OnActivity(protocol.QuotaChargeActivity, mock.Anything, mock.Anything).Return(
		func(_ context.Context, ch protocol.QuotaCharge) error {
			q.charges.add(ch)
			return nil
		}).Maybe()
	return q
}

func exhausted() error {
	qe := &budget.QuotaError{Scope: budget.AllScope, Month: "2026-11", Limit: dec("50"), Spent: dec("50")}
	return temporal.NewNonRetryableApplicationError(qe.Error(), string(ErrorQuotaExhausted), qe)
}

func TestBudgetQuotaCheckBeforeAnyStep(t *testing.T) {
	tests := []struct {
		name       string
		quotas     budget.Quotas
		opts       protocol.RunOptions
		check      error
		wantChecks int
		wantStatus Status
	}{
		{"exhausted: refused", overallQuota(), protocol.RunOptions{}, exhausted(), 1, StatusBudgetExceeded},
		{"not exhausted: runs", overallQuota(), protocol.RunOptions{}, nil, 1, StatusCompleted},
		{"checked by the client: not checked again", overallQuota(), protocol.RunOptions{QuotaChecked: true}, exhausted(), 0, StatusCompleted},
		{"the flow's own quota", budget.Quotas{PerWorkflow: map[string]decimal.Decimal{"unit/quota": dec("5")}}, protocol.RunOptions{}, exhausted(), 1, StatusBudgetExceeded},
		{"only another flow's quota: not checked", budget.Quotas{PerWorkflow: map[string]decimal.Decimal{"unit/other": dec("5")}}, protocol.RunOptions{}, exhausted(), 0, StatusCompleted},
		{"no quotas: not checked", budget.Quotas{}, protocol.RunOptions{}, exhausted(), 0, StatusCompleted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spends := []spend{{"review", "0.10", "0.10"}}
			var got spendRun
			f := spendsFlow("unit/quota", &got, false, spends)
			env := newUnitEnv(t, runConfig{quotas: tt.quotas}, f)
			startWith(t, env, tt.opts)
			q := mockQuotas(env, tt.check)
			agents := mockSpends(env, spends...)
			mockShell(env, deployShell)
			env.ExecuteWorkflow(f.Name(), none{})
			require.True(t, env.IsWorkflowCompleted())

			assert.Len(t, q.checks.all(), tt.wantChecks)
			for _, name := range q.checks.all() {
				assert.Equal(t, "unit/quota", name, "the check names the workflow")
			}
			st := queryState(t, env)
			assert.Equal(t, tt.wantStatus, st.Status)
			if tt.wantStatus != StatusBudgetExceeded {
				require.NoError(t, env.GetWorkflowError())
				assert.Len(t, agents.all(), 1)
				return
			}
			msg := budgetError(t, env)
			assert.Contains(t, msg, "refused before any step: ")
			assert.Contains(t, msg, "monthly quota of all workflows is exhausted: $50.00 of $50.00 spent in 2026-11")
			assert.Empty(t, agents.all(), "no step ran")
			assert.Empty(t, st.Steps, "no step was recorded")
			assert.Empty(t, q.charges.all())
		})
	}
}

func TestBudgetQuotaChargesEachCostBearingStep(t *testing.T) {
	spends := []spend{{"review", "0.20", "0.13"}, {"free", "0.10", "0"}, {"review", "0.20", "0.07"}}
	for _, on := range []bool{true, false} {
		name := "quotas on"
		cfg := runConfig{quotas: overallQuota()}
		if !on {
			name, cfg = "quotas off", runConfig{}
		}
		t.Run(name, func(t *testing.T) {
			f := Define("unit/quota-charge", func(ctx *Context, _ none) (none, error) {
				for _, s := range spends {
					// Each step's own cost, by the prompt the mock reads.
					a := s.agentSpec()
					a.Prompt = s.name + "=" + s.cost
					if _, err := ctx.Agent(s.name, a); err != nil {
						return none{}, err
					}
				}
				_, err := ctx.Shell("lint", activities.Shell{Command: "lint"})
				return none{}, err
			})
			env := newUnitEnv(t, cfg, f)
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "q-1"})
			startWith(t, env, protocol.RunOptions{QuotaChecked: true})
			q := mockQuotas(env, nil)
			mockSpends(env, spend{"review=0.13", "", "0.13"}, spend{"free=0", "", "0"}, spend{"review=0.07", "", "0.07"})
			mockShell(env, deployShell)
			env.ExecuteWorkflow(f.Name(), none{})
			require.NoError(t, env.GetWorkflowError())
			assert.Empty(t, q.checks.all(), "the client checked already")

			st := queryState(t, env)
			assertUSD(t, "0.20", st.Budget.Spent, "the run's own ledger charges either way")
			if !on {
				assert.Empty(t, q.charges.all(), "no monthly ledger without quotas")
				return
			}
			charges := q.charges.all()
			require.Len(t, charges, 2, "a step that cost nothing is not charged")
			month := budget.MonthOf(*stepByName(t, st, "review").EndedAt)
			// Charges are keyed by the Temporal run ID (the test environment's is fixed).
			for i, want := range []struct{ key, amount string }{
				{budget.ChargeKey("default-test-run-id", "review"), "0.13"},
				{budget.ChargeKey("default-test-run-id", "review#2"), "0.07"},
			} {
				assert.Equal(t, want.key, charges[i].Key, "keyed by run and step, so a retry counts once")
				assert.Equal(t, want.amount, charges[i].Amount.String(), "the exact amount")
				assert.Equal(t, "unit/quota-charge", charges[i].Workflow)
				assert.Equal(t, month, charges[i].Month)
			}
		})
	}
}

func TestBudgetQuotaChargeFailureDoesNotStopTheRun(t *testing.T) {
	spends := []spend{{"review", "0.20", "0.13"}, {"more", "0.20", "0.02"}}
	var got spendRun
	f := spendsFlow("unit/quota-down", &got, false, spends)
	env := newUnitEnv(t, runConfig{quotas: overallQuota()}, f)
	startWith(t, env, protocol.RunOptions{QuotaChecked: true})
	env.RegisterActivityWithOptions(func(context.Context, protocol.QuotaCharge) error { return nil }, activity.RegisterOptions{Name: protocol.QuotaChargeActivity})
	var tries callLog[protocol.QuotaCharge]
	env.OnActivity(protocol.QuotaChargeActivity, mock.Anything, mock.Anything).Return(
		func(_ context.Context, ch protocol.QuotaCharge) error {
			tries.add(ch)
			return temporal.NewNonRetryableApplicationError("ledger down", "test", nil)
		})
	agents := mockSpends(env, spends...)
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError(), "runs already going are never stopped by a quota")
	assert.Len(t, agents.all(), 2)
	assert.Len(t, tries.all(), 2)
	assert.Equal(t, StatusCompleted, queryState(t, env).Status)
}
