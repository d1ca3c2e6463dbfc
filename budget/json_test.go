package budget

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// busyLedger has something in every field: a raised cap, charges with and without
// overshoot, warnings, an open reservation and an ignored charge.
func busyLedger(t *testing.T) *Ledger {
	t.Helper()
	l := NewLedger(capOf("1"), usd("0.5"), usd("0.9"))
	l.Charge("a", "a", usd("0.1"), t0)
	l.Charge("b", "b", usd("0.2"), t0.Add(time.Minute))
	r, err := l.Reserve("review#1", usd("0.10"))
	require.NoError(t, err)
	l.Settle(r, usd("0.13"), "review", t0.Add(2*time.Minute))
	l.Charge("b", "b", usd("0.2"), t0.Add(3*time.Minute))
	l.Charge("child", "child", usd("0.6"), t0.Add(4*time.Minute))
	require.NoError(t, l.Raise(usd("1.50")))
	_, err = l.Reserve("open", usd("0.25"))
	require.NoError(t, err)
	return l
}

func TestLedgerJSONRoundTrip(t *testing.T) {
	l := busyLedger(t)
	data, err := json.Marshal(l)
	require.NoError(t, err)

	var back Ledger
	require.NoError(t, json.Unmarshal(data, &back))
	again, err := json.Marshal(&back)
	require.NoError(t, err)
	assert.JSONEq(t, string(data), string(again))
	assert.Equal(t, string(data), string(again), "byte for byte")

	// Amounts are decimal strings, never JSON numbers.
	s := string(data)
	assert.Contains(t, s, `"spent":"1.03"`)
	assert.Contains(t, s, `"reserved":"0.25"`)
	assert.Contains(t, s, `"cap":{"amount":"1.5","set":true,"source":"raise"}`)
	assert.Contains(t, s, `"overshoot":"0.03"`)
	assert.Contains(t, s, `"thresholds":["0.5","0.9"]`)
	assert.Contains(t, s, `"reason":"duplicate key"`)
	assert.NotContains(t, s, "e-")
	assert.NotContains(t, s, "0000000")

	// The decoded ledger is the same ledger: same totals, same answers.
	assert.True(t, l.Spent.Equal(back.Spent))
	assert.True(t, l.Reserved.Equal(back.Reserved))
	assert.Equal(t, l.Cap.Set, back.Cap.Set)
	assert.Equal(t, l.Cap.Source, back.Cap.Source)
	require.Len(t, back.Charges, len(l.Charges))
	for i := range l.Charges {
		assert.Equal(t, l.Charges[i].Key, back.Charges[i].Key)
		assert.True(t, l.Charges[i].Amount.Equal(back.Charges[i].Amount))
		assert.True(t, l.Charges[i].Overshoot.Equal(back.Charges[i].Overshoot))
		assert.True(t, l.Charges[i].At.Equal(back.Charges[i].At))
	}
	assert.Len(t, back.Warnings, 2)
	assert.Len(t, back.Ignored, 1)
	left, _ := l.Remaining()
	backLeft, _ := back.Remaining()
	assert.True(t, left.Equal(backLeft))
	assert.EqualError(t, back.CanReserve(usd("0.23")), l.CanReserve(usd("0.23")).Error())
	assert.NoError(t, l.CanReserve(usd("0.22")))
	assert.NoError(t, back.CanReserve(usd("0.22")))
	_, err = back.Reserve("open", usd("0.01"))
	assert.ErrorIs(t, err, ErrDuplicateKey, "open reservations survive")
	assert.True(t, back.HasCharge("review#1"), "charged keys survive")

	// Warnings continue where they were: 50% of the raised cap is crossed by the next charge
	// (once), 90% of the old cap is not warned again.
	for _, key := range []string{"late", "later"} {
		crossedA, exA := l.Charge(key, key, usd("0.01"), t0)
		crossedB, exB := back.Charge(key, key, usd("0.01"), t0)
		require.Equal(t, len(crossedA), len(crossedB))
		for i := range crossedA {
			assert.True(t, crossedA[i].Threshold.Equal(crossedB[i].Threshold))
			assert.True(t, crossedA[i].Cap.Equal(crossedB[i].Cap))
		}
		assert.Nil(t, exA, "within the raised cap")
		assert.Nil(t, exB, "within the raised cap")
		if key == "late" {
			require.Len(t, crossedB, 1)
			assert.Equal(t, "budget: 50% of the $1.50 cap reached (spent $1.04)", crossedB[0].String())
		} else {
			assert.Empty(t, crossedB)
		}
	}
}

func TestLedgerJSONNoFloatDrift(t *testing.T) {
	l := NewLedger(capOf("0.3"))
	l.Charge("a", "a", usd("0.1"), t0)
	l.Charge("b", "b", usd("0.2"), t0)
	data, err := json.Marshal(l)
	require.NoError(t, err)
	var back Ledger
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, "0.3", back.Spent.String())
	assert.True(t, back.Spent.Equal(back.Cap.Amount), "0.1 + 0.2 == 0.3 exactly, after JSON too")
	assert.False(t, back.Over())
	assert.NoError(t, back.CanReserve(decimal.Zero))
}

func TestZeroLedgerJSON(t *testing.T) {
	data, err := json.Marshal(&Ledger{})
	require.NoError(t, err)
	assert.Equal(t, `{"cap":{"amount":"0","set":false},"spent":"0","reserved":"0"}`, string(data))
	var back Ledger
	require.NoError(t, json.Unmarshal(data, &back))
	_, ok := back.Remaining()
	assert.False(t, ok)
}

func TestLedgerIsDeterministic(t *testing.T) {
	a, b := busyLedger(t), busyLedger(t)
	ja, err := json.Marshal(a)
	require.NoError(t, err)
	jb, err := json.Marshal(b)
	require.NoError(t, err)
	assert.Equal(t, string(ja), string(jb))
}

func TestQuotaJSONRoundTrip(t *testing.T) {
	q := NewQuota(WorkflowScope("team/release"), "2026-11")
	q.Limit, q.Set = usd("50.00"), true
	for _, k := range []string{"run-2/b", "run-1/a", "run-3/c"} {
		q.Charge(k, usd("0.1"))
	}
	q.Charge("run-1/a", usd("0.1")) // retry, not counted
	q.Charge("run-4/d", usd("0.00000001"))

	data, err := json.Marshal(q)
	require.NoError(t, err)
	assert.Equal(t,
		`{"scope":"workflow:team/release","month":"2026-11","limit":"50","set":true,"spent":"0.30000001",`+
			`"charges":{"run-1/a":"0.1","run-2/b":"0.1","run-3/c":"0.1","run-4/d":"0.00000001"}}`,
		string(data), "keys sorted, amounts as strings")

	var back Quota
	require.NoError(t, json.Unmarshal(data, &back))
	again, err := json.Marshal(&back)
	require.NoError(t, err)
	assert.Equal(t, string(data), string(again))
	assert.Equal(t, "0.30000001", back.Spent.String())
	assert.False(t, back.Charge("run-2/b", usd("0.1")), "idempotency survives JSON")
	assert.True(t, back.Charge("run-5/e", usd("0.1")))
	assert.Equal(t, "0.40000001", back.Spent.String())
	assert.NoError(t, back.Check())

	// About 100 bytes per charge, as documented.
	big := NewQuota(AllScope, "2026-11")
	for i := 0; i < 1000; i++ {
		big.Charge(ChargeKey(fmt.Sprintf("0190a6c3-7d1e-7000-8000-%012d", i), "review#1"), usd("0.0154"))
	}
	data, err = json.Marshal(big)
	require.NoError(t, err)
	perCharge := len(data) / len(big.Charges)
	assert.Less(t, perCharge, 100, "bytes per charge: %d", perCharge)
	assert.Greater(t, perCharge, 40)
}

func TestExceededErrorJSON(t *testing.T) {
	e := &ExceededError{Cap: usd("2"), Spent: usd("1.9"), Reserved: decimal.Zero, Requested: usd("0.25"), Step: "review"}
	data, err := json.Marshal(e)
	require.NoError(t, err)
	assert.Equal(t, `{"cap":"2","spent":"1.9","reserved":"0","requested":"0.25","step":"review"}`, string(data))
}
