package budget

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestQuotaAdmit(t *testing.T) {
	tests := []struct {
		name                    string
		spent, reserved, amount string
		limit                   string
		err                     string
	}{
		{name: "fits", spent: "0.20", reserved: "0.20", amount: "0.50", limit: "1.00"},
		{name: "fits exactly", spent: "0.25", reserved: "0.25", amount: "0.50", limit: "1.00"},
		{name: "a cent over", spent: "0.25", reserved: "0.26", amount: "0.50", limit: "1.00",
			err: "monthly quota of workflow release: $0.25 spent + $0.26 reserved + $0.50 for this run > $1.00 in 2026-11"},
		{name: "the brief's example", spent: "0.45", reserved: "0.50", amount: "0.50", limit: "1.00",
			err: "monthly quota of workflow release: $0.45 spent + $0.50 reserved + $0.50 for this run > $1.00 in 2026-11"},
		{name: "no cap, room left", spent: "0.45", reserved: "0.50", amount: "0", limit: "1.00"},
		{name: "no cap, used up by reservations", spent: "0.50", reserved: "0.50", amount: "0", limit: "1.00",
			err: "monthly quota of workflow release is exhausted: $0.50 of $1.00 spent, $0.50 reserved in 2026-11"},
		{name: "no cap, spent", spent: "1.00", reserved: "0.00", amount: "0", limit: "1.00",
			err: "monthly quota of workflow release is exhausted: $1.00 of $1.00 spent in 2026-11"},
		{name: "zero limit refuses every run", spent: "0.00", reserved: "0.00", amount: "0", limit: "0",
			err: "monthly quota of workflow release is exhausted: $0.00 of $0.00 spent in 2026-11"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := NewQuota(WorkflowScope("release"), "2026-11")
			q.Spent, q.Reserved = usd(tt.spent), usd(tt.reserved)
			err := q.Admit(usd(tt.limit), usd(tt.amount))
			if tt.err == "" {
				assert.NoError(t, err)
				return
			}
			assert.EqualError(t, err, tt.err)
			var qe *QuotaError
			require.True(t, errors.As(err, &qe))
			assert.True(t, errors.Is(err, ErrQuotaExhausted))
			assert.Equal(t, tt.spent, qe.Spent.StringFixed(2))
			assert.Equal(t, tt.reserved, qe.Reserved.StringFixed(2))
		})
	}
}

func TestQuotaReserveChargeRelease(t *testing.T) {
	q := NewQuota(AllScope, "2026-11")
	limit := usd("1.00")
	exp := t0.Add(DefaultReservationTTL)

	require.NoError(t, q.Reserve("run-a#1", usd("0.50"), limit, exp))
	require.NoError(t, q.Reserve("run-b#1", usd("0.50"), limit, exp))
	assert.Equal(t, "1", q.Reserved.String())
	assert.True(t, q.Set)
	assert.Equal(t, "1", q.Limit.String())
	err := q.Reserve("run-c#1", usd("0.01"), limit, exp)
	assert.EqualError(t, err, "monthly quota of all workflows: $0.00 spent + $1.00 reserved + $0.01 for this run > $1.00 in 2026-11")
	assert.NotContains(t, q.ReservationKeys(), "run-c#1", "a refused reservation holds nothing")
	require.NoError(t, q.Reserve("run-a#1", usd("0.50"), limit, exp), "a retried reservation is admitted")
	assert.Equal(t, "1", q.Reserved.String(), "and not counted twice")

	// A charge moves money from the run's reservation to spent.
	assert.True(t, q.ChargeReserved("r1/review", "run-a#1", usd("0.20")))
	assert.Equal(t, "0.2", q.Spent.String())
	assert.Equal(t, "0.8", q.Reserved.String())
	assert.Equal(t, "0.3", q.Reservations["run-a#1"].Amount.String())
	assert.False(t, q.ChargeReserved("r1/review", "run-a#1", usd("0.20")), "a repeated charge key counts once")
	assert.Equal(t, "0.8", q.Reserved.String())
	// Spending beyond the reservation never takes it below zero.
	assert.True(t, q.ChargeReserved("r1/more", "run-a#1", usd("0.40")))
	assert.Equal(t, "0", q.Reservations["run-a#1"].Amount.String())
	assert.Equal(t, "0.5", q.Reserved.String())
	assert.Equal(t, "0.6", q.Spent.String())
	// A charge under no (or an unknown) reservation is plain spend.
	assert.True(t, q.ChargeReserved("r9/x", "", usd("0.05")))
	assert.True(t, q.ChargeReserved("r9/y", "gone#1", usd("0.05")))
	assert.Equal(t, "0.7", q.Spent.String())
	assert.Equal(t, "0.5", q.Reserved.String())

	// Release gives back what is left, once.
	left, ok := q.Release("run-b#1")
	assert.True(t, ok)
	assert.Equal(t, "0.5", left.String())
	_, ok = q.Release("run-b#1")
	assert.False(t, ok)
	assert.True(t, q.Reserved.IsZero())
	left, ok = q.Release("run-a#1")
	assert.True(t, ok)
	assert.True(t, left.IsZero())
	assert.Empty(t, q.ReservationKeys())
	require.NoError(t, q.Reserve("run-c#1", usd("0.30"), limit, exp), "room again after the releases")
	assert.EqualError(t, q.Reserve("run-d#1", usd("0.01"), limit, exp),
		"monthly quota of all workflows: $0.70 spent + $0.30 reserved + $0.01 for this run > $1.00 in 2026-11")
}

func TestQuotaReserveWithoutCapReservesNothing(t *testing.T) {
	q := NewQuota(AllScope, "2026-11")
	require.NoError(t, q.Reserve("run-a#1", decimal.Zero, usd("1"), t0))
	assert.Empty(t, q.ReservationKeys())
	assert.True(t, q.Reserved.IsZero())
	q.Charge("r/a", usd("1"))
	assert.Error(t, q.Reserve("run-b#1", decimal.Zero, usd("1"), t0))
}

func TestQuotaReserveRefusesBadInput(t *testing.T) {
	q := NewQuota(AllScope, "2026-11")
	assert.EqualError(t, q.Reserve("", usd("1"), usd("2"), t0), "budget: a quota reservation needs a key")
	assert.EqualError(t, q.Reserve("k", usd("-1"), usd("2"), t0), "budget: quota reservation k of -1 is negative")
	assert.Empty(t, q.ReservationKeys())
	assert.False(t, q.Set)
}

func TestQuotaExpire(t *testing.T) {
	q := NewQuota(AllScope, "2026-11")
	limit := usd("10")
	require.NoError(t, q.Reserve("late", usd("1"), limit, t0.Add(3*time.Hour)))
	require.NoError(t, q.Reserve("early", usd("2"), limit, t0.Add(time.Hour)))
	require.NoError(t, q.Reserve("same", usd("3"), limit, t0.Add(time.Hour)))
	next, ok := q.NextExpiry()
	require.True(t, ok)
	assert.Equal(t, t0.Add(time.Hour), next)

	assert.Empty(t, q.Expire(t0.Add(59*time.Minute)))
	assert.Equal(t, []string{"early", "same"}, q.Expire(t0.Add(time.Hour)), "a deadline equal to now has passed")
	assert.Equal(t, "1", q.Reserved.String())
	next, ok = q.NextExpiry()
	require.True(t, ok)
	assert.Equal(t, t0.Add(3*time.Hour), next)
	assert.Equal(t, []string{"late"}, q.Expire(t0.Add(24*time.Hour)))
	assert.True(t, q.Reserved.IsZero())
	_, ok = q.NextExpiry()
	assert.False(t, ok)
	// A charge after the expiry is still spend.
	assert.True(t, q.ChargeReserved("r/late", "late", usd("0.5")))
	assert.Equal(t, "0.5", q.Spent.String())
	assert.True(t, q.Reserved.IsZero())
}

// The ledger carries its quota across continue-as-new as JSON: reservations survive.
func TestQuotaReservationsJSONRoundTrip(t *testing.T) {
	q := NewQuota(WorkflowScope("release"), "2026-11")
	require.NoError(t, q.Reserve("run-a#1", usd("0.50"), usd("1"), t0.Add(time.Hour)))
	require.NoError(t, q.Reserve("run-b#1", usd("0.25"), usd("1"), t0.Add(2*time.Hour)))
	require.True(t, q.ChargeReserved("ra/review", "run-a#1", usd("0.10")))
	b, err := json.Marshal(q)
	require.NoError(t, err)
	var back Quota
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, []string{"run-a#1", "run-b#1"}, back.ReservationKeys())
	assert.Equal(t, "0.65", back.Reserved.String())
	assert.Equal(t, "0.1", back.Spent.String())
	assert.Equal(t, "0.4", back.Reservations["run-a#1"].Amount.String())
	assert.True(t, back.Reservations["run-b#1"].Expires.Equal(t0.Add(2*time.Hour)))
	assert.True(t, back.Has("ra/review"))
	assert.True(t, back.Set)
	assert.Equal(t, "1", back.Limit.String())
	// A state written before reservations existed reads with none.
	var old Quota
	require.NoError(t, json.Unmarshal([]byte(`{"scope":"all","month":"2026-11","limit":"0","set":false,"spent":"0.5","charges":{"r/a":"0.5"}}`), &old))
	assert.True(t, old.Reserved.IsZero())
	assert.Empty(t, old.ReservationKeys())
	require.NoError(t, old.Reserve("k", usd("0.5"), usd("1"), t0))
}
