package budget

import (
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)

func capOf(s string) Cap { return Cap{Amount: usd(s), Set: true, Source: SourceStart} }

// spent returns a ledger with the cap and one charge of spent (no warnings).
func spentLedger(t *testing.T, capUSD, spentUSD string) *Ledger {
	t.Helper()
	l := NewLedger(capOf(capUSD))
	l.Thresholds = nil
	if spentUSD != "" {
		l.Charge("before", "before", usd(spentUSD), t0)
	}
	return l
}

func assertDec(t *testing.T, want string, got decimal.Decimal, what string) {
	t.Helper()
	assert.True(t, usd(want).Equal(got), "%s is %s, want %s", what, got, want)
}

func TestReserveBoundaryToTheCent(t *testing.T) {
	tests := []struct {
		name, cap, spent, amount string
		msg                      string // empty: allowed
	}{
		{name: "equal to the cap is allowed", cap: "1.00", spent: "0.75", amount: "0.25"},
		{name: "a cent over is refused", cap: "1.00", spent: "0.75", amount: "0.26",
			msg: "budget: step review needs $0.26 but only $0.25 of the $1.00 cap is left (spent $0.75)"},
		{name: "a fraction of a cent over is refused", cap: "1.00", spent: "0.75", amount: "0.25000001",
			msg: "budget: step review needs $0.25000001 but only $0.25 of the $1.00 cap is left (spent $0.75)"},
		{name: "brief's example", cap: "2.00", spent: "1.90", amount: "0.25",
			msg: "budget: step review needs $0.25 but only $0.10 of the $2.00 cap is left (spent $1.90)"},
		{name: "reference boundary allowed", cap: "2.00", spent: "1.75", amount: "0.25"},
		{name: "reference boundary refused", cap: "2.00", spent: "1.75", amount: "0.26",
			msg: "budget: step review needs $0.26 but only $0.25 of the $2.00 cap is left (spent $1.75)"},
		{name: "zero limit with nothing spent under a zero cap", cap: "0", amount: "0"},
		{name: "zero limit once the spend is over a zero cap", cap: "0", spent: "0.01", amount: "0",
			msg: "budget: step review needs $0.00 but only $0.00 of the $0.00 cap is left (spent $0.01)"},
		{name: "zero limit at the cap", cap: "1", spent: "1", amount: "0"},
		{name: "zero limit over the cap", cap: "1", spent: "1.01", amount: "0",
			msg: "budget: step review needs $0.00 but only $0.00 of the $1.00 cap is left (spent $1.01)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := spentLedger(t, tt.cap, tt.spent)
			canErr := l.CanReserve(usd(tt.amount))
			r, err := l.Reserve("review", usd(tt.amount))
			if tt.msg == "" {
				require.NoError(t, canErr)
				require.NoError(t, err)
				assert.Equal(t, "review", r.Key)
				assertDec(t, tt.amount, l.Reserved, "reserved")
				require.Len(t, l.Reservations, 1)
				return
			}
			assert.Nil(t, r)
			assert.EqualError(t, err, tt.msg)
			assert.ErrorIs(t, err, ErrExceeded)
			assert.ErrorIs(t, canErr, ErrExceeded)
			var e *ExceededError
			require.True(t, errors.As(err, &e))
			assert.Equal(t, "review", e.Step)
			assertDec(t, tt.amount, e.Requested, "requested")
			assertDec(t, tt.cap, e.Cap, "cap")
			assert.False(t, e.AfterCharge)
			assert.True(t, l.Reserved.IsZero(), "nothing reserved after a refusal")
			assert.Empty(t, l.Reservations)
		})
	}
}

func TestCanReserveRecordsNothing(t *testing.T) {
	l := spentLedger(t, "1", "0.5")
	require.NoError(t, l.CanReserve(usd("0.5")))
	assert.True(t, l.Reserved.IsZero())
	assert.Empty(t, l.Reservations)
	assert.EqualError(t, l.CanReserve(usd("0.6")),
		"budget: $0.60 is needed but only $0.50 of the $1.00 cap is left (spent $0.50)")
	var aerr *AmountError
	require.True(t, errors.As(l.CanReserve(usd("-0.01")), &aerr))
	assert.EqualError(t, aerr, `budget: USD amount "-0.01" is negative`)
}

func TestReserveCountsOtherReservations(t *testing.T) {
	l := spentLedger(t, "1", "0.5")
	_, err := l.Reserve("a", usd("0.3"))
	require.NoError(t, err)
	_, err = l.Reserve("b", usd("0.25"))
	assert.EqualError(t, err, "budget: step b needs $0.25 but only $0.20 of the $1.00 cap is left (spent $0.50, reserved $0.30)")
	_, err = l.Reserve("b", usd("0.2"))
	require.NoError(t, err)
	assertDec(t, "0.5", l.Reserved, "reserved")
	left, ok := l.Remaining()
	assert.True(t, ok)
	assert.True(t, left.IsZero())
}

func TestNoCapNeverRefuses(t *testing.T) {
	l := NewLedger(NoCap())
	l.Charge("big", "big", usd("1000000"), t0)
	require.NoError(t, l.CanReserve(usd("99999999")))
	_, err := l.Reserve("next", usd("99999999"))
	require.NoError(t, err)
	require.NoError(t, l.ReserveAll([]Item{{"a", usd("5")}, {"b", usd("5")}}))
	crossed, exceeded := l.Charge("more", "more", usd("5"), t0)
	assert.Nil(t, crossed)
	assert.Nil(t, exceeded)
	assert.False(t, l.Over())
	_, ok := l.Remaining()
	assert.False(t, ok)
	assert.Equal(t, NoCap(), l.ChildCap())
}

func TestReserveRefusesBadInput(t *testing.T) {
	l := spentLedger(t, "1", "")
	_, err := l.Reserve("neg", usd("-0.01"))
	assert.ErrorIs(t, err, ErrInvalidAmount)
	assert.Empty(t, l.Reservations)

	r, err := l.Reserve("review", usd("0.1"))
	require.NoError(t, err)
	_, err = l.Reserve("review", usd("0.1"))
	assert.EqualError(t, err, `budget: key "review" is already reserved`)
	assert.ErrorIs(t, err, ErrDuplicateKey)
	assertDec(t, "0.1", l.Reserved, "reserved")

	l.Settle(r, usd("0.05"), "review", t0)
	_, err = l.Reserve("review", usd("0.1"))
	assert.EqualError(t, err, `budget: key "review" was already charged`)
	var kerr *KeyError
	require.True(t, errors.As(err, &kerr))
	assert.Equal(t, "review", kerr.Key)
	assert.True(t, l.Reserved.IsZero())
}

func TestReserveAllIsAllOrNothing(t *testing.T) {
	tests := []struct {
		name  string
		setup func(l *Ledger)
		items []Item
		msg   string // empty: allowed
	}{
		{name: "together they exceed", items: []Item{{"a", usd("0.2")}, {"b", usd("0.2")}, {"c", usd("0.2")}},
			msg: "budget: parallel steps a, b, c need $0.60 together but only $0.50 of the $1.00 cap is left (spent $0.50)"},
		{name: "together exactly at the cap", items: []Item{{"a", usd("0.2")}, {"b", usd("0.2")}, {"c", usd("0.1")}}},
		{name: "one item refused names the step", items: []Item{{"a", usd("0.6")}},
			msg: "budget: step a needs $0.60 but only $0.50 of the $1.00 cap is left (spent $0.50)"},
		{name: "same key twice", items: []Item{{"a", usd("0.1")}, {"a", usd("0.1")}},
			msg: `budget: key "a" appears twice in the wave`},
		{name: "negative item", items: []Item{{"a", usd("0.1")}, {"b", usd("-0.1")}},
			msg: `budget: USD amount "-0.1" is negative`},
		{name: "key already reserved", setup: func(l *Ledger) { _, _ = l.Reserve("b", usd("0.1")) },
			items: []Item{{"a", usd("0.1")}, {"b", usd("0.1")}}, msg: `budget: key "b" is already reserved`},
		{name: "counts what is already reserved", setup: func(l *Ledger) { _, _ = l.Reserve("x", usd("0.3")) },
			items: []Item{{"a", usd("0.1")}, {"b", usd("0.15")}},
			msg:   "budget: parallel steps a, b need $0.25 together but only $0.20 of the $1.00 cap is left (spent $0.50, reserved $0.30)"},
		{name: "empty wave", items: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := spentLedger(t, "1", "0.5")
			if tt.setup != nil {
				tt.setup(l)
			}
			before := append([]Reservation(nil), l.Reservations...)
			beforeReserved := l.Reserved
			err := l.ReserveAll(tt.items)
			if tt.msg != "" {
				assert.EqualError(t, err, tt.msg)
				assert.Equal(t, before, l.Reservations, "nothing of the wave stays reserved")
				assert.True(t, beforeReserved.Equal(l.Reserved))
				return
			}
			require.NoError(t, err)
			total := decimal.Zero
			for _, it := range tt.items {
				r, ok := l.Reservation(it.Key)
				require.True(t, ok, it.Key)
				assert.True(t, it.Amount.Equal(r.Amount))
				total = total.Add(it.Amount)
			}
			assert.True(t, beforeReserved.Add(total).Equal(l.Reserved))
		})
	}
}

func TestReserveAllThenSettleEach(t *testing.T) {
	l := spentLedger(t, "1", "0.5")
	require.NoError(t, l.ReserveAll([]Item{{"a", usd("0.2")}, {"b", usd("0.3")}}))
	var e *ExceededError
	require.True(t, errors.As(l.ReserveAll([]Item{{"c", usd("0.01")}}), &e))
	assert.Equal(t, "c", e.Step)

	rb, _ := l.Reservation("b")
	_, exceeded := l.Settle(rb, usd("0.1"), "b", t0)
	assert.Nil(t, exceeded)
	assertDec(t, "0.2", l.Reserved, "reserved")
	ra, _ := l.Reservation("a")
	_, exceeded = l.Settle(ra, usd("0.2"), "a", t0)
	assert.Nil(t, exceeded)
	assert.True(t, l.Reserved.IsZero())
	assert.Nil(t, l.Reservations)
	assertDec(t, "0.8", l.Spent, "spent")
	assert.Equal(t, []string{"before", "b", "a"}, chargeKeys(l), "charges in settle order")
}

func chargeKeys(l *Ledger) []string {
	var keys []string
	for _, c := range l.Charges {
		keys = append(keys, c.Key)
	}
	return keys
}

func TestSettleOvershoot(t *testing.T) {
	tests := []struct {
		name, limit, actual string
		overshoot           string
		spent               string
		exceeded            string // empty: not over the cap
	}{
		{name: "cost more than the limit and over the cap", limit: "0.10", actual: "0.13", overshoot: "0.03", spent: "1.03",
			exceeded: "budget: spent $1.03 of the $1.00 cap after step review"},
		{name: "exactly at the cap is not over", limit: "0.10", actual: "0.10", overshoot: "0", spent: "1.00"},
		{name: "cost less than the limit", limit: "0.10", actual: "0.04", overshoot: "0", spent: "0.94"},
		{name: "a fraction over the cap", limit: "0.10", actual: "0.10000001", overshoot: "0.00000001", spent: "1.00000001",
			exceeded: "budget: spent $1.00000001 of the $1.00 cap after step review"},
		{name: "no limit declared has no overshoot", limit: "0", actual: "0.05", overshoot: "0", spent: "0.95"},
		{name: "free step", limit: "0.10", actual: "0", overshoot: "0", spent: "0.90"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := spentLedger(t, "1.00", "0.90")
			r, err := l.Reserve("review#1", usd(tt.limit))
			require.NoError(t, err)
			_, exceeded := l.Settle(r, usd(tt.actual), "review", t0.Add(time.Minute))
			assert.True(t, l.Reserved.IsZero(), "reservation released")
			assert.Empty(t, l.Reservations)
			assertDec(t, tt.spent, l.Spent, "spent")
			c := l.Charges[len(l.Charges)-1]
			assert.Equal(t, "review#1", c.Key)
			assert.Equal(t, "review", c.Step)
			assertDec(t, tt.actual, c.Amount, "amount")
			assertDec(t, tt.limit, c.Limit, "limit")
			assertDec(t, tt.overshoot, c.Overshoot, "overshoot")
			assert.Equal(t, t0.Add(time.Minute), c.At)
			if tt.exceeded == "" {
				assert.Nil(t, exceeded)
				assert.False(t, l.Over())
				return
			}
			require.NotNil(t, exceeded)
			assert.EqualError(t, exceeded, tt.exceeded)
			assert.True(t, exceeded.AfterCharge)
			assertDec(t, tt.actual, exceeded.Requested, "requested")
			assert.ErrorIs(t, exceeded, ErrExceeded)
			assert.True(t, l.Over())
		})
	}
}

// Step 1 spends more than declared; step 2 is refused with spent = actual.
func TestBudgetExceededMidRun(t *testing.T) {
	l := NewLedger(capOf("2.00"))
	r, err := l.Reserve("draft", usd("1.50"))
	require.NoError(t, err)
	_, exceeded := l.Settle(r, usd("1.95"), "draft", t0)
	assert.Nil(t, exceeded, "1.95 is within 2.00")
	_, err = l.Reserve("review", usd("0.25"))
	assert.EqualError(t, err, "budget: step review needs $0.25 but only $0.05 of the $2.00 cap is left (spent $1.95)")
	var e *ExceededError
	require.True(t, errors.As(err, &e))
	assertDec(t, "1.95", e.Spent, "spent")
}

func TestSettleAndReleaseEdgeCases(t *testing.T) {
	t.Run("settling twice charges once", func(t *testing.T) {
		l := spentLedger(t, "1", "")
		r, _ := l.Reserve("a", usd("0.1"))
		l.Settle(r, usd("0.1"), "a", t0)
		crossed, exceeded := l.Settle(r, usd("0.1"), "a", t0)
		assert.Nil(t, crossed)
		assert.Nil(t, exceeded)
		assertDec(t, "0.1", l.Spent, "spent")
		require.Len(t, l.Ignored, 1)
		assert.Equal(t, IgnoredDuplicate, l.Ignored[0].Reason)
		assert.Equal(t, "a", l.Ignored[0].Key)
	})
	t.Run("negative cost releases and charges nothing", func(t *testing.T) {
		l := spentLedger(t, "1", "")
		r, _ := l.Reserve("a", usd("0.1"))
		l.Settle(r, usd("-0.1"), "a", t0)
		assert.True(t, l.Reserved.IsZero())
		assert.True(t, l.Spent.IsZero())
		assert.Empty(t, l.Charges)
		require.Len(t, l.Ignored, 1)
		assert.Equal(t, IgnoredNegative, l.Ignored[0].Reason)
	})
	t.Run("nil reservation is reported", func(t *testing.T) {
		l := spentLedger(t, "1", "")
		l.Settle(nil, usd("0.1"), "a", t0)
		assert.True(t, l.Spent.IsZero())
		require.Len(t, l.Ignored, 1)
		assert.Equal(t, IgnoredNoReservation, l.Ignored[0].Reason)
	})
	t.Run("a released reservation is still charged when settled", func(t *testing.T) {
		l := spentLedger(t, "1", "")
		r, _ := l.Reserve("a", usd("0.1"))
		l.Release(r)
		l.Settle(r, usd("0.12"), "a", t0)
		assertDec(t, "0.12", l.Spent, "spent")
		assertDec(t, "0.02", l.Charges[0].Overshoot, "overshoot")
	})
	t.Run("release gives the money back once", func(t *testing.T) {
		l := spentLedger(t, "1", "")
		a, _ := l.Reserve("a", usd("0.3"))
		_, _ = l.Reserve("b", usd("0.2"))
		l.Release(a)
		l.Release(a)
		l.Release(nil)
		l.Release(&Reservation{Key: "unknown", Amount: usd("5")})
		assertDec(t, "0.2", l.Reserved, "reserved")
		assert.Equal(t, []Reservation{{Key: "b", Amount: usd("0.2")}}, l.Reservations)
		assert.Empty(t, l.Charges)
		_, err := l.Reserve("a", usd("0.8"))
		assert.NoError(t, err, "a released key may be reserved again")
	})
	t.Run("the reservation's own amount is released", func(t *testing.T) {
		l := spentLedger(t, "1", "")
		r, _ := l.Reserve("a", usd("0.3"))
		r.Amount = usd("0.9") // the caller's copy cannot change the ledger
		l.Release(r)
		assert.True(t, l.Reserved.IsZero())
	})
}

func TestChargeIsIdempotentByKey(t *testing.T) {
	l := spentLedger(t, "1", "")
	l.Charge("child:42", "summarise", usd("0.4"), t0)
	crossed, exceeded := l.Charge("child:42", "summarise", usd("0.4"), t0.Add(time.Second))
	assert.Nil(t, crossed)
	assert.Nil(t, exceeded)
	assertDec(t, "0.4", l.Spent, "spent")
	assert.Len(t, l.Charges, 1)
	assert.True(t, l.HasCharge("child:42"))
	assert.False(t, l.HasCharge("child:43"))
	require.Len(t, l.Ignored, 1)
	assert.Equal(t, Ignored{Key: "child:42", Step: "summarise", Amount: usd("0.4"), Reason: IgnoredDuplicate, At: t0.Add(time.Second)}, l.Ignored[0])

	// A different amount under the same key is still the same charge.
	l.Charge("child:42", "summarise", usd("0.9"), t0)
	assertDec(t, "0.4", l.Spent, "spent")

	// Zero-cost charges count as charged too.
	l.Charge("free", "free", decimal.Zero, t0)
	l.Charge("free", "free", usd("0.1"), t0)
	assertDec(t, "0.4", l.Spent, "spent")

	l.Charge("neg", "neg", usd("-1"), t0)
	assertDec(t, "0.4", l.Spent, "spent")
	assert.False(t, l.HasCharge("neg"))
}

func TestChargeSettlesAnOpenReservation(t *testing.T) {
	l := spentLedger(t, "1", "")
	_, err := l.Reserve("call#1", usd("0.1"))
	require.NoError(t, err)
	l.Charge("call#1", "call", usd("0.15"), t0) // a failed call's partial cost
	assert.True(t, l.Reserved.IsZero())
	assert.Empty(t, l.Reservations)
	require.Len(t, l.Charges, 1)
	assertDec(t, "0.1", l.Charges[0].Limit, "limit")
	assertDec(t, "0.05", l.Charges[0].Overshoot, "overshoot")
}

func TestChargeOverTheCap(t *testing.T) {
	l := spentLedger(t, "1", "0.9")
	_, exceeded := l.Charge("child", "child", usd("0.2"), t0)
	require.NotNil(t, exceeded)
	assert.EqualError(t, exceeded, "budget: spent $1.10 of the $1.00 cap after step child")
	_, exceeded = l.Charge("more", "", usd("0.01"), t0)
	require.NotNil(t, exceeded, "reported on every charge while over")
	assert.EqualError(t, exceeded, "budget: spent $1.11 of the $1.00 cap")
}

func TestWarnings(t *testing.T) {
	type step struct {
		amount string
		want   []string // thresholds crossed by this charge
	}
	tests := []struct {
		name       string
		thresholds []decimal.Decimal
		cap        Cap
		steps      []step
	}{
		{name: "default 80% once", cap: capOf("1"), steps: []step{
			{"0.5", nil}, {"0.3", []string{"0.8"}}, {"0.1", nil}, {"0.2", nil},
		}},
		{name: "default 80% just under", cap: capOf("1"), steps: []step{
			{"0.79999999", nil}, {"0.00000001", []string{"0.8"}},
		}},
		{name: "custom 50% and 90%", thresholds: []decimal.Decimal{usd("0.5"), usd("0.9")}, cap: capOf("2"), steps: []step{
			{"0.9", nil}, {"0.1", []string{"0.5"}}, {"0.7", nil}, {"0.1", []string{"0.9"}}, {"1", nil},
		}},
		{name: "one charge crosses both, lowest first", thresholds: []decimal.Decimal{usd("0.9"), usd("0.5")}, cap: capOf("2"), steps: []step{
			{"1.9", []string{"0.5", "0.9"}}, {"0.1", nil},
		}},
		{name: "invalid and duplicate thresholds dropped", thresholds: []decimal.Decimal{usd("0.5"), usd("0.50"), usd("0"), usd("-0.2"), usd("1.5"), usd("1")}, cap: capOf("1"), steps: []step{
			{"0.6", []string{"0.5"}}, {"0.4", []string{"1"}},
		}},
		{name: "zero cap warns on the first spend", cap: capOf("0"), steps: []step{
			{"0", nil}, {"0.01", []string{"0.8"}},
		}},
		{name: "no cap no warnings", cap: NoCap(), steps: []step{{"100", nil}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLedger(tt.cap, tt.thresholds...)
			var all []string
			for i, s := range tt.steps {
				crossed, _ := l.Charge(string(rune('a'+i)), "s", usd(s.amount), t0.Add(time.Duration(i)*time.Minute))
				var got []string
				for _, w := range crossed {
					got = append(got, w.Threshold.String())
					assertDec(t, l.Spent.String(), w.Spent, "warning spent")
					assert.Equal(t, t0.Add(time.Duration(i)*time.Minute), w.At)
				}
				assert.Equal(t, s.want, got, "step %d", i)
				all = append(all, s.want...)
			}
			var recorded []string
			for _, w := range l.Warnings {
				recorded = append(recorded, w.Threshold.String())
			}
			assert.Equal(t, all, recorded, "each threshold recorded once")
		})
	}
}

func TestWarningsOffAndString(t *testing.T) {
	l := NewLedger(capOf("1"))
	l.Thresholds = nil
	crossed, _ := l.Charge("a", "a", usd("1"), t0)
	assert.Empty(t, crossed)

	l = NewLedger(capOf("2"))
	crossed, _ = l.Charge("a", "a", usd("1.62"), t0)
	require.Len(t, crossed, 1)
	assert.Equal(t, "budget: 80% of the $2.00 cap reached (spent $1.62)", crossed[0].String())
	l = NewLedger(capOf("2"), usd("0.125"))
	crossed, _ = l.Charge("a", "a", usd("0.25"), t0)
	require.Len(t, crossed, 1)
	assert.Equal(t, "budget: 12.5% of the $2.00 cap reached (spent $0.25)", crossed[0].String())
}

func TestWarningsReArmAfterRaise(t *testing.T) {
	l := NewLedger(capOf("1"))
	crossed, _ := l.Charge("a", "a", usd("0.9"), t0)
	require.Len(t, crossed, 1)
	require.NoError(t, l.Raise(usd("2")))
	crossed, _ = l.Charge("b", "b", usd("0.5"), t0)
	assert.Empty(t, crossed, "1.4 is under 80% of 2")
	crossed, _ = l.Charge("c", "c", usd("0.2"), t0)
	require.Len(t, crossed, 1)
	assertDec(t, "2", crossed[0].Cap, "warning cap")
	assert.Len(t, l.Warnings, 2)
}

func TestExactDecimalArithmetic(t *testing.T) {
	l := NewLedger(capOf("0.3"))
	l.Thresholds = nil
	_, exceeded := l.Charge("a", "a", usd("0.1"), t0)
	assert.Nil(t, exceeded)
	_, exceeded = l.Charge("b", "b", usd("0.2"), t0)
	assert.Nil(t, exceeded, "0.1 + 0.2 is exactly the 0.3 cap, not above")
	assert.Equal(t, "0.3", l.Spent.String())
	assert.NoError(t, l.CanReserve(decimal.Zero))
	assert.Error(t, l.CanReserve(usd("0.00000001")))
}

func TestNewLedgerNormalisesCap(t *testing.T) {
	l := NewLedger(Cap{Amount: usd("-3"), Set: true, Source: SourceWorker})
	assert.True(t, l.Cap.Amount.IsZero())
	assert.Equal(t, SourceWorker, l.Cap.Source)
	l = NewLedger(Cap{Amount: usd("3"), Source: SourceWorker}) // not Set
	assert.Equal(t, NoCap(), l.Cap)
	assert.Equal(t, DefaultThresholds(), l.Thresholds)
}

func TestExceededErrorMatching(t *testing.T) {
	l := spentLedger(t, "1", "1")
	_, err := l.Reserve("x", usd("0.01"))
	wrapped := errors.Join(errors.New("step x"), err)
	assert.ErrorIs(t, wrapped, ErrExceeded)
	assert.NotErrorIs(t, wrapped, ErrQuotaExhausted)
	var e *ExceededError
	require.True(t, errors.As(wrapped, &e))
	assert.True(t, e.Left().IsZero())
}
