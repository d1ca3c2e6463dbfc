package flow

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/protocol"
)

// Monthly quotas: the check before a run not started by a Client, the charges of its
// steps, and the ledger entity workflow.

// overallQuota is a worker's overall monthly quota of $50.
func overallQuota() budget.Quotas { return budget.Quotas{MonthlyUSD: decp("50")} }

// noLedgers registers the monthly-ledger activities as doing nothing (newUnitEnv).
func noLedgers(env *testsuite.TestWorkflowEnvironment) {
	again := activity.RegisterOptions{DisableAlreadyRegisteredCheck: true}
	for name, fn := range map[string]any{
		protocol.QuotaCheckActivity:   func(context.Context, string) error { return nil },
		protocol.QuotaChargeActivity:  func(context.Context, protocol.QuotaCharge) error { return nil },
		protocol.QuotaReserveActivity: func(context.Context, protocol.QuotaReserve) (bool, error) { return false, nil },
		protocol.QuotaReleaseActivity: func(context.Context, protocol.QuotaRelease) error { return nil },
	} {
		o := again
		o.Name = name
		env.RegisterActivityWithOptions(fn, o)
	}
}

// quotaMocks logs the quota activities a run calls: checks (runs older than
// quotaReserveVersion), reservations, charges and releases; check answers the check and
// the reservation.
type quotaMocks struct {
	checks   callLog[string]
	reserves callLog[protocol.QuotaReserve]
	charges  callLog[protocol.QuotaCharge]
	releases callLog[protocol.QuotaRelease]
}

func mockQuotas(env *testsuite.TestWorkflowEnvironment, check error) *quotaMocks {
	q := &quotaMocks{}
	noLedgers(env)
	env.OnActivity(protocol.QuotaCheckActivity, mock.Anything, mock.Anything).Return(
		func(_ context.Context, name string) error {
			q.checks.add(name)
			return check
		}).Maybe()
	env.OnActivity(protocol.QuotaReserveActivity, mock.Anything, mock.Anything).Return(
		func(_ context.Context, r protocol.QuotaReserve) (bool, error) {
			q.reserves.add(r)
			return check == nil && r.Amount.IsPositive(), check
		}).Maybe()
	env.OnActivity(protocol.QuotaChargeActivity, mock.Anything, mock.Anything).Return(
		func(_ context.Context, ch protocol.QuotaCharge) error {
			q.charges.add(ch)
			return nil
		}).Maybe()
	env.OnActivity(protocol.QuotaReleaseActivity, mock.Anything, mock.Anything).Return(
		func(_ context.Context, r protocol.QuotaRelease) error {
			q.releases.add(r)
			return nil
		}).Maybe()
	return q
}

// countOf is how many of xs are x.
func countOf(xs []string, x string) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}

func exhausted() error {
	qe := &budget.QuotaError{Scope: budget.AllScope, Month: "2026-11", Limit: dec("50"), Spent: dec("50")}
	return temporal.NewNonRetryableApplicationError(qe.Error(), string(ErrorQuotaExhausted), qe)
}

func TestBudgetQuotaReserveBeforeAnyStep(t *testing.T) {
	tests := []struct {
		name         string
		quotas       budget.Quotas
		opts         protocol.RunOptions
		check        error
		wantReserves int
		wantStatus   runs.Status
	}{
		{"refused: no step runs", overallQuota(), protocol.RunOptions{MaxCostUSD: "1.00"}, exhausted(), 1, runs.StatusBudgetExceeded},
		{"admitted: runs", overallQuota(), protocol.RunOptions{MaxCostUSD: "1.00"}, nil, 1, runs.StatusCompleted},
		{"admitted without a cap", overallQuota(), protocol.RunOptions{}, nil, 1, runs.StatusCompleted},
		{"reserved by the client: not again", overallQuota(), protocol.RunOptions{QuotaChecked: true}, exhausted(), 0, runs.StatusCompleted},
		{"the flow's own quota", budget.Quotas{PerWorkflow: map[string]decimal.Decimal{"unit/quota": dec("5")}}, protocol.RunOptions{}, exhausted(), 1, runs.StatusBudgetExceeded},
		{"only another flow's quota: not reserved", budget.Quotas{PerWorkflow: map[string]decimal.Decimal{"unit/other": dec("5")}}, protocol.RunOptions{}, exhausted(), 0, runs.StatusCompleted},
		{"no quotas: not reserved", budget.Quotas{}, protocol.RunOptions{}, exhausted(), 0, runs.StatusCompleted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spends := []spend{{"review", "0.10", "0.10"}}
			var got spendRun
			f := spendsFlow("unit/quota", &got, false, spends)
			env := newUnitEnv(t, runConfig{quotas: tt.quotas}, f)
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "sched-1", WorkflowExecutionTimeout: 2 * time.Hour})
			startWith(t, env, tt.opts)
			q := mockQuotas(env, tt.check)
			agents := mockSpends(env, spends...)
			mockShell(env, deployShell)
			env.ExecuteWorkflow(f.Name(), none{})
			require.True(t, env.IsWorkflowCompleted())

			assert.Empty(t, q.checks.all(), "new runs reserve instead of checking")
			reserves := q.reserves.all()
			require.Len(t, reserves, tt.wantReserves)
			for _, r := range reserves {
				assert.Equal(t, "unit/quota", r.Workflow, "the reservation names the workflow")
				assert.Equal(t, "sched-1#default-test-run-id", r.Key, "keyed by the run")
				if tt.opts.MaxCostUSD == "" {
					assert.True(t, r.Amount.IsZero(), "a run without a cap reserves nothing")
				} else {
					assertUSD(t, tt.opts.MaxCostUSD, r.Amount, "the run's cap")
				}
				assert.Equal(t, 2*time.Hour, r.TTL, "the run's execution timeout is the reservation's deadline")
			}
			st := queryState(t, env)
			assert.Equal(t, tt.wantStatus, st.Status)
			if tt.wantStatus != runs.StatusBudgetExceeded {
				require.NoError(t, env.GetWorkflowError())
				assert.Len(t, agents.all(), 1)
				if tt.wantReserves == 1 && tt.opts.MaxCostUSD != "" {
					require.Len(t, q.charges.all(), 1)
					assert.Equal(t, "sched-1#default-test-run-id", q.charges.all()[0].Reservation, "the charge draws on the reservation")
					assert.Equal(t, []protocol.QuotaRelease{{Key: "sched-1#default-test-run-id", Workflow: "unit/quota",
						Month: reserves[0].Month}}, q.releases.all(), "what is left is released at the end")
				} else {
					assert.Empty(t, q.releases.all(), "nothing reserved, nothing to release")
				}
				return
			}
			msg := budgetError(t, env)
			assert.Contains(t, msg, "refused before any step: ")
			assert.Contains(t, msg, "monthly quota of all workflows is exhausted: $50.00 of $50.00 spent in 2026-11")
			assert.Empty(t, agents.all(), "no step ran")
			assert.Empty(t, st.Steps, "no step was recorded")
			assert.Empty(t, q.charges.all())
			assert.Empty(t, q.releases.all(), "a refused reservation holds nothing")
		})
	}
}

// Runs that started before quotaReserveVersion replay the spent-only check they ran.
func TestBudgetQuotaCheckBeforeReservationsExisted(t *testing.T) {
	for _, check := range []error{nil, exhausted()} {
		spends := []spend{{"review", "0.10", "0.10"}}
		var got spendRun
		f := spendsFlow("unit/quota-old", &got, false, spends)
		env := newUnitEnv(t, runConfig{quotas: overallQuota()}, f)
		env.OnGetVersion(quotaReserveVersion, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
		q := mockQuotas(env, check)
		agents := mockSpends(env, spends...)
		mockShell(env, deployShell)
		env.ExecuteWorkflow(f.Name(), none{})
		require.True(t, env.IsWorkflowCompleted())
		assert.Equal(t, []string{"unit/quota-old"}, q.checks.all())
		assert.Empty(t, q.reserves.all())
		if check == nil {
			require.NoError(t, env.GetWorkflowError())
			assert.Len(t, agents.all(), 1)
			continue
		}
		msg := budgetError(t, env)
		assert.Contains(t, msg, "refused before any step: ")
		assert.Contains(t, msg, "monthly quota of all workflows is exhausted: $50.00 of $50.00 spent in 2026-11")
		assert.Empty(t, agents.all())
	}
}

// A reservation made by flowclient.Client.Start reaches the run in its options: charges draw on it and
// the run releases the rest when it ends, however it ends.
func TestBudgetQuotaClientReservationIsReleasedAtTheEnd(t *testing.T) {
	res := &protocol.RunReservation{Key: "rel-1#abc", Month: "2026-11", Amount: dec("0.50")}
	for _, end := range []string{"completed", "failed", "cancelled"} {
		t.Run(end, func(t *testing.T) {
			f := Define("unit/quota-release", func(ctx *Context, _ none) (none, error) {
				if _, err := ctx.Agent("review", spend{"review", "0.20", "0.13"}.agentSpec()); err != nil {
					return none{}, err
				}
				switch end {
				case "failed":
					return none{}, Permanent(errors.New("boom"))
				case "cancelled":
					return none{}, ctx.Sleep("nap", time.Hour)
				}
				return none{}, nil
			})
			env := newUnitEnv(t, runConfig{quotas: overallQuota()}, f)
			startWith(t, env, protocol.RunOptions{QuotaChecked: true, MaxCostUSD: "0.50", Reservation: res})
			q := mockQuotas(env, nil)
			mockSpends(env, spend{"review", "", "0.13"})
			if end == "cancelled" {
				env.RegisterDelayedCallback(env.CancelWorkflow, 10*time.Minute)
			}
			env.ExecuteWorkflow(f.Name(), none{})
			require.True(t, env.IsWorkflowCompleted())
			assert.Equal(t, runs.Status(end), queryState(t, env).Status)
			assert.Empty(t, q.reserves.all(), "the client reserved already")
			require.Len(t, q.charges.all(), 1)
			assert.Equal(t, "rel-1#abc", q.charges.all()[0].Reservation)
			assert.Equal(t, []protocol.QuotaRelease{{Key: "rel-1#abc", Workflow: "unit/quota-release", Month: "2026-11"}}, q.releases.all())
		})
	}
}

func TestBudgetQuotaChargesEachCostBearingStep(t *testing.T) {
	spends := []spend{{"review", "0.20", "0.13"}, {"free", "0.10", "0"}, {"review", "0.20", "0.07"}}
	tests := []struct {
		name    string
		quotas  bool
		version workflow.Version
		charged bool
	}{
		{"quotas on", true, 1, true},
		{"no quota: spend is recorded anyway", false, 1, true},
		{"quotas on, a run from before spend-always", true, workflow.DefaultVersion, true},
		{"no quota, a run from before spend-always: not charged", false, workflow.DefaultVersion, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := runConfig{}
			if tt.quotas {
				cfg.quotas = overallQuota()
			}
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
			var asked callLog[string]
			env.OnGetVersion(spendAlwaysVersion, workflow.DefaultVersion, 1).Return(func(id string, _, _ workflow.Version) workflow.Version {
				asked.add(id)
				return tt.version
			})
			q := mockQuotas(env, nil)
			mockSpends(env, spend{"review=0.13", "", "0.13"}, spend{"free=0", "", "0"}, spend{"review=0.07", "", "0.07"})
			mockShell(env, deployShell)
			env.ExecuteWorkflow(f.Name(), none{})
			require.NoError(t, env.GetWorkflowError())
			assert.Empty(t, q.checks.all(), "the client checked already")
			assert.Equal(t, 1, countOf(asked.all(), spendAlwaysVersion), "the version is read once, at the first positive cost")

			st := queryState(t, env)
			assertUSD(t, "0.20", st.Budget.Spent, "the run's own ledger charges either way")
			if !tt.charged {
				assert.Empty(t, q.charges.all(), "runs from before spend-always replay without charges")
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
				assert.Empty(t, charges[i].Reservation, "the run holds no reservation")
			}
		})
	}
}

// A run that never spends reads no version (and records no marker).
func TestBudgetQuotaNoCostNoVersionMarker(t *testing.T) {
	f := Define("unit/quota-free", func(ctx *Context, _ none) (none, error) {
		_, err := ctx.Shell("lint", activities.Shell{Command: "lint"})
		return none{}, err
	})
	env := newUnitEnv(t, runConfig{}, f)
	var asked callLog[string]
	env.OnGetVersion(spendAlwaysVersion, workflow.DefaultVersion, 1).Return(func(id string, _, max workflow.Version) workflow.Version {
		asked.add(id)
		return max
	})
	q := mockQuotas(env, nil)
	mockShell(env, deployShell)
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	assert.Zero(t, countOf(asked.all(), spendAlwaysVersion))
	assert.Empty(t, q.charges.all())
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
	assert.Equal(t, runs.StatusCompleted, queryState(t, env).Status)
}
