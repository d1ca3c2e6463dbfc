package entity

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/protocol"
)

// The ledger's reservations: admission under the quota, charges drawing on a run's
// reservation, releases, deadlines and continue-as-new.

// updateResult is what one Update to the ledger came back with.
type updateResult struct {
	rejected error
	result   any
	err      error
	done     bool
	// at is the virtual time the Update was sent.
	at time.Time
}

// reserveAt sends the Update LedgerReserve at the virtual time d and records its outcome.
func reserveAt(env *testsuite.TestWorkflowEnvironment, d time.Duration, r protocol.QuotaReserve) *updateResult {
	out := &updateResult{}
	env.RegisterDelayedCallback(func() {
		out.at = env.Now()
		env.UpdateWorkflow(protocol.LedgerReserve, r.Key, &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) { out.rejected, out.done = err, true },
			OnComplete: func(v any, err error) {
				out.result, out.err, out.done = v, err, true
			},
		}, r)
	}, d)
	return out
}

// quotaAt reads the ledger's state with its Query at the virtual time d.
func quotaAt(t *testing.T, env *testsuite.TestWorkflowEnvironment, d time.Duration) *budget.Quota {
	q := &budget.Quota{}
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(protocol.LedgerQuery)
		require.NoError(t, err)
		require.NoError(t, v.Get(q))
	}, d)
	return q
}

// endLedger makes the ledger continue as new at the virtual time d (so the test ends).
func endLedger(env *testsuite.TestWorkflowEnvironment, d time.Duration) {
	env.RegisterDelayedCallback(func() { env.SetContinueAsNewSuggested(true) }, d)
	signalAt(env, d+time.Second, protocol.LedgerRelease, protocol.QuotaRelease{Key: "nobody"})
}

func reservation(key, amount, limit string) protocol.QuotaReserve {
	return protocol.QuotaReserve{Key: key, Workflow: "release", Month: "2026-11",
		Amount: decimal.RequireFromString(amount), Limit: decimal.RequireFromString(limit)}
}

func TestLedgerReserveRefuseChargeRelease(t *testing.T) {
	env := newTestEnv(t, protocol.LedgerWorkflowType, ledgerWorkflow)
	sums := summaries(env)
	first := reserveAt(env, time.Minute, reservation("run-a#1", "0.50", "1.00"))
	second := reserveAt(env, 2*time.Minute, reservation("run-b#1", "0.50", "1.00"))
	refused := reserveAt(env, 3*time.Minute, reservation("run-c#1", "0.50", "1.00"))
	// run-a spends $0.20 of its $0.50: the month holds $0.20 spent + $0.80 reserved.
	signalAt(env, 4*time.Minute, protocol.LedgerCharge, protocol.QuotaCharge{Key: "ra/review", Amount: decimal.RequireFromString("0.20"),
		Workflow: "release", Month: "2026-11", Reservation: "run-a#1"})
	stillRefused := reserveAt(env, 5*time.Minute, reservation("run-c#2", "0.50", "1.00"))
	afterCharge := quotaAt(t, env, 6*time.Minute)
	// run-a ends: the $0.30 it did not spend comes back, and a run asking exactly the room
	// left ($1.00 - $0.20 spent - $0.50 reserved) fits.
	signalAt(env, 7*time.Minute, protocol.LedgerRelease, protocol.QuotaRelease{Key: "run-a#1", Workflow: "release", Month: "2026-11"})
	fits := reserveAt(env, 8*time.Minute, reservation("run-c#3", "0.30", "1.00"))
	final := quotaAt(t, env, 9*time.Minute)
	endLedger(env, 10*time.Minute)
	env.ExecuteWorkflow(protocol.LedgerWorkflowType, LedgerState{Scope: budget.WorkflowScope("release"), Month: "2026-11"})
	require.True(t, env.IsWorkflowCompleted())

	for _, u := range []*updateResult{first, second, fits} {
		require.True(t, u.done)
		require.NoError(t, u.rejected)
		require.NoError(t, u.err)
	}
	for _, u := range []*updateResult{refused, stillRefused} {
		require.True(t, u.done)
		require.Error(t, u.rejected, "refused by the validator, without a trace in history")
	}
	qe, ok := AsQuotaError(refused.rejected)
	require.True(t, ok, "%v", refused.rejected)
	assert.Equal(t, "monthly quota of workflow release: $0.00 spent + $1.00 reserved + $0.50 for this run > $1.00 in 2026-11", qe.Error())
	qe, ok = AsQuotaError(stillRefused.rejected)
	require.True(t, ok)
	assert.Equal(t, "monthly quota of workflow release: $0.20 spent + $0.80 reserved + $0.50 for this run > $1.00 in 2026-11", qe.Error())
	assert.Equal(t, "0.2", qe.Spent.String())
	assert.Equal(t, "0.8", qe.Reserved.String())

	assert.Equal(t, "0.2", afterCharge.Spent.String())
	assert.Equal(t, "0.8", afterCharge.Reserved.String())
	assert.Equal(t, "0.3", afterCharge.Reservations["run-a#1"].Amount.String())
	assert.Equal(t, []string{"run-b#1", "run-c#3"}, final.ReservationKeys())
	assert.Equal(t, "0.8", final.Reserved.String())
	assert.Equal(t, "0.2", final.Spent.String())

	last := sums.all()[len(sums.all())-1]
	assert.Equal(t, 2, last.Reservations)
	assert.Equal(t, "0.8", last.Reserved.String(), "the memo shows what is reserved")
	assert.Equal(t, "0.2", last.Spent.String())
}

func TestLedgerDropsReservationsPastTheirDeadline(t *testing.T) {
	env := newTestEnv(t, protocol.LedgerWorkflowType, ledgerWorkflow)
	sums := summaries(env)
	short := reservation("run-a#1", "0.50", "1.00")
	short.TTL = time.Hour
	reserveAt(env, time.Minute, short)
	reserveAt(env, 2*time.Minute, reservation("run-b#1", "0.25", "1.00")) // the default deadline: 24h
	before := quotaAt(t, env, 60*time.Minute)
	after := quotaAt(t, env, 62*time.Minute)
	nextDay := quotaAt(t, env, 25*time.Hour)
	endLedger(env, 26*time.Hour)
	env.ExecuteWorkflow(protocol.LedgerWorkflowType, LedgerState{Scope: budget.AllScope, Month: "2026-11"})
	require.True(t, env.IsWorkflowCompleted())

	assert.Equal(t, []string{"run-a#1", "run-b#1"}, before.ReservationKeys())
	assert.Equal(t, []string{"run-b#1"}, after.ReservationKeys(), "run-a's reservation expired an hour after it was made")
	assert.Equal(t, "0.25", after.Reserved.String())
	assert.Empty(t, nextDay.ReservationKeys(), "run-b's after the default 24 hours")
	assert.True(t, nextDay.Reserved.IsZero())
	last := sums.all()[len(sums.all())-1]
	assert.Equal(t, 0, last.Reservations)
	assert.True(t, last.Reserved.IsZero(), "the memo was updated by the expiry")
}

func TestLedgerCarriesReservationsAcrossContinueAsNew(t *testing.T) {
	env := newTestEnv(t, protocol.LedgerWorkflowType, ledgerWorkflow)
	made := reserveAt(env, time.Minute, reservation("run-a#1", "0.50", "1.00"))
	signalAt(env, 2*time.Minute, protocol.LedgerCharge, protocol.QuotaCharge{Key: "ra/x", Amount: decimal.RequireFromString("0.10"),
		Workflow: "release", Month: "2026-11", Reservation: "run-a#1"})
	endLedger(env, 3*time.Minute)
	env.ExecuteWorkflow(protocol.LedgerWorkflowType, LedgerState{Scope: budget.AllScope, Month: "2026-11"})
	require.True(t, env.IsWorkflowCompleted())
	next := continuedAs[LedgerState](t, env.GetWorkflowError(), protocol.LedgerWorkflowType)
	require.NotNil(t, next.Quota)
	assert.Equal(t, []string{"run-a#1"}, next.Quota.ReservationKeys())
	assert.Equal(t, "0.4", next.Quota.Reserved.String())
	assert.Equal(t, "0.1", next.Quota.Spent.String())
	assert.True(t, next.Quota.Reservations["run-a#1"].Expires.Equal(made.at.Add(budget.DefaultReservationTTL)),
		"the deadline is the default 24 hours after the reservation: %s", next.Quota.Reservations["run-a#1"].Expires)

	// The next run keeps admitting against the carried reservations, and their deadlines.
	env2 := newTestEnv(t, protocol.LedgerWorkflowType, ledgerWorkflow)
	refused := reserveAt(env2, time.Minute, reservation("run-b#1", "0.55", "1.00"))
	fits := reserveAt(env2, 2*time.Minute, reservation("run-b#2", "0.50", "1.00"))
	afterExpiry := quotaAt(t, env2, 25*time.Hour)
	endLedger(env2, 26*time.Hour)
	env2.ExecuteWorkflow(protocol.LedgerWorkflowType, next)
	require.True(t, env2.IsWorkflowCompleted())
	require.Error(t, refused.rejected)
	assert.Contains(t, refused.rejected.Error(), "$0.10 spent + $0.40 reserved + $0.55 for this run > $1.00")
	require.NoError(t, fits.rejected)
	require.NoError(t, fits.err)
	assert.Empty(t, afterExpiry.ReservationKeys(), "the carried deadline still applies")
	assert.Equal(t, "0.1", afterExpiry.Spent.String())
}

func TestLedgerReserveIsIdempotentAndAdmitsRunsWithoutCap(t *testing.T) {
	env := newTestEnv(t, protocol.LedgerWorkflowType, ledgerWorkflow)
	reserveAt(env, time.Minute, reservation("run-a#1", "0.60", "1.00"))
	again := reserveAt(env, 2*time.Minute, reservation("run-a#1", "0.60", "1.00"))
	noCap := reserveAt(env, 3*time.Minute, reservation("run-b#1", "0", "1.00"))
	signalAt(env, 4*time.Minute, protocol.LedgerCharge, protocol.QuotaCharge{Key: "rb/x", Amount: decimal.RequireFromString("0.40"),
		Workflow: "release", Month: "2026-11"})
	noRoom := reserveAt(env, 5*time.Minute, reservation("run-c#1", "0", "1.00"))
	bad := reserveAt(env, 6*time.Minute, reservation("", "0.10", "1.00"))
	state := quotaAt(t, env, 7*time.Minute)
	endLedger(env, 8*time.Minute)
	env.ExecuteWorkflow(protocol.LedgerWorkflowType, LedgerState{Scope: budget.AllScope, Month: "2026-11"})
	require.True(t, env.IsWorkflowCompleted())

	require.NoError(t, again.rejected, "a retried reservation is admitted")
	require.NoError(t, noCap.rejected, "a run without a cap is admitted while spent + reserved < quota")
	require.Error(t, noRoom.rejected)
	assert.Contains(t, noRoom.rejected.Error(), "monthly quota of all workflows is exhausted: $0.40 of $1.00 spent, $0.60 reserved in 2026-11")
	require.Error(t, bad.rejected)
	assert.Equal(t, []string{"run-a#1"}, state.ReservationKeys(), "no double reservation, nothing for the run without a cap")
	assert.Equal(t, "0.6", state.Reserved.String())
}
