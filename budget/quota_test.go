package budget

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMonthOf(t *testing.T) {
	tokyo := time.FixedZone("JST", 9*3600)
	newYork := time.FixedZone("EST", -5*3600)
	tests := []struct {
		name string
		at   time.Time
		want string
	}{
		{"UTC mid-month", time.Date(2026, 11, 15, 12, 0, 0, 0, time.UTC), "2026-11"},
		{"first instant of a month", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), "2026-11"},
		{"last instant of a month", time.Date(2026, 10, 31, 23, 59, 59, 999999999, time.UTC), "2026-10"},
		{"Tokyo's 1 Dec morning is still November in UTC", time.Date(2026, 12, 1, 8, 59, 59, 0, tokyo), "2026-11"},
		{"Tokyo's 1 Dec 09:00 is December in UTC", time.Date(2026, 12, 1, 9, 0, 0, 0, tokyo), "2026-12"},
		{"New York's 31 Oct evening is November in UTC", time.Date(2026, 10, 31, 19, 0, 0, 0, newYork), "2026-11"},
		{"New York's 31 Oct 18:59 is October in UTC", time.Date(2026, 10, 31, 18, 59, 0, 0, newYork), "2026-10"},
		{"year boundary", time.Date(2026, 12, 31, 23, 0, 0, 0, newYork), "2027-01"},
		{"leap day", time.Date(2028, 2, 29, 23, 59, 0, 0, time.UTC), "2028-02"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, MonthOf(tt.at))
		})
	}
}

func TestParseMonth(t *testing.T) {
	got, err := ParseMonth("2026-11")
	require.NoError(t, err)
	assert.Equal(t, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), got)
	assert.Equal(t, "2026-11", MonthOf(got))
	for _, bad := range []string{"", "2026-13", "2026-1", "26-11", "2026/11", "2026-11-01", " 2026-11"} {
		_, err := ParseMonth(bad)
		assert.EqualError(t, err, `budget: invalid month "`+bad+`" (want YYYY-MM, e.g. 2026-11)`, bad)
	}
}

func TestScopes(t *testing.T) {
	assert.Equal(t, Scope("workflow:release"), WorkflowScope("release"))
	name, ok := WorkflowScope("release").Workflow()
	assert.True(t, ok)
	assert.Equal(t, "release", name)
	_, ok = AllScope.Workflow()
	assert.False(t, ok)
	assert.Equal(t, "all workflows", AllScope.Describe())
	assert.Equal(t, "workflow release", WorkflowScope("release").Describe())
	assert.Equal(t, "scope odd", Scope("odd").Describe())

	tests := []struct {
		in   string
		want Scope
		err  string
	}{
		{in: "all", want: AllScope},
		{in: " all ", want: AllScope},
		{in: "workflow:release", want: WorkflowScope("release")},
		{in: "release", want: WorkflowScope("release")},
		{in: "workflow:all", want: WorkflowScope("all")},
		{in: "", err: "budget: empty scope (want all or workflow:NAME)"},
		{in: "workflow:", err: `budget: scope "workflow:" has no workflow name`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseScope(tt.in)
			if tt.err != "" {
				assert.EqualError(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestLedgerID(t *testing.T) {
	tests := []struct {
		scope Scope
		month string
		want  string
	}{
		{AllScope, "2026-11", "gateflow-ledger/all/2026-11"},
		{WorkflowScope("release"), "2026-11", "gateflow-ledger/workflow:release/2026-11"},
		{WorkflowScope("team/release"), "2026-11", "gateflow-ledger/workflow:team%2Frelease/2026-11"},
		{WorkflowScope("a%2Fb"), "2026-11", "gateflow-ledger/workflow:a%252Fb/2026-11"},
		{WorkflowScope("100%"), "2026-11", "gateflow-ledger/workflow:100%25/2026-11"},
		{WorkflowScope("a/b/c"), "2027-01", "gateflow-ledger/workflow:a%2Fb%2Fc/2027-01"},
		{WorkflowScope("déploiement prod"), "2026-11", "gateflow-ledger/workflow:déploiement prod/2026-11"},
	}
	for _, tt := range tests {
		t.Run(string(tt.scope), func(t *testing.T) {
			id := LedgerID(tt.scope, tt.month)
			assert.Equal(t, tt.want, id)
			assert.Equal(t, 2, strings.Count(id, "/"), "exactly the two separators")
			scope, month, err := ParseLedgerID(id)
			require.NoError(t, err)
			assert.Equal(t, tt.scope, scope)
			assert.Equal(t, tt.month, month)
		})
	}
	// Names that differ only by escaping never collide.
	assert.NotEqual(t, LedgerID(WorkflowScope("a/b"), "2026-11"), LedgerID(WorkflowScope("a%2Fb"), "2026-11"))
	assert.NotEqual(t, LedgerID(WorkflowScope("a"), "b/2026-11"), LedgerID(WorkflowScope("a/b"), "2026-11"))
}

func TestParseLedgerIDRefuses(t *testing.T) {
	for _, id := range []string{
		"",
		"gateflow-ledger/",
		"gateflow-ledger/all",
		"other/all/2026-11",
		"gateflow-ledger/all/2026-13",
		"gateflow-ledger/all/2026-11/extra",
		"gateflow-ledger/workflow:a%2fb/2026-11", // lower-case escape is not ours
		"gateflow-ledger/workflow:a%/2026-11",
		"gateflow-ledger/team/2026-11", // neither all nor workflow:
	} {
		t.Run(id, func(t *testing.T) {
			_, _, err := ParseLedgerID(id)
			assert.EqualError(t, err, `budget: "`+id+`" is not a ledger workflow ID (want gateflow-ledger/SCOPE/YYYY-MM)`)
		})
	}
}

func TestQuotaChargeIdempotent(t *testing.T) {
	q := NewQuota(WorkflowScope("release"), "2026-11")
	tests := []struct {
		key    string
		amount string
		added  bool
		spent  string
	}{
		{"run-1/draft", "0.40", true, "0.4"},
		{"run-1/draft", "0.40", false, "0.4"}, // the retried activity
		{"run-1/review", "0.25", true, "0.65"},
		{"run-2/draft", "0", true, "0.65"},
		{"run-2/draft", "0.10", false, "0.65"},
		{"run-2/review", "-0.10", false, "0.65"},
		{"run-3/draft", "0.1", true, "0.75"},
		{"run-3/review", "0.2", true, "0.95"},
	}
	for _, tt := range tests {
		added := q.Charge(tt.key, usd(tt.amount))
		assert.Equal(t, tt.added, added, "%s %s", tt.key, tt.amount)
		assertDec(t, tt.spent, q.Spent, "spent after "+tt.key)
	}
	assert.True(t, q.Has("run-1/draft"))
	assert.False(t, q.Has("run-2/review"))
	assert.Equal(t, []string{"run-1/draft", "run-1/review", "run-2/draft", "run-3/draft", "run-3/review"}, q.Keys())
	assertDec(t, "0.4", q.Charges["run-1/draft"], "first amount kept")
}

func TestQuotaZeroValueCharges(t *testing.T) {
	var q Quota
	assert.True(t, q.Charge("k", usd("1")))
	assert.False(t, q.Charge("k", usd("1")))
	assertDec(t, "1", q.Spent, "spent")
}

func TestQuotaExhausted(t *testing.T) {
	tests := []struct {
		name, spent, limit string
		exhausted          bool
		remaining          string
	}{
		{"nothing spent", "0", "50", false, "50"},
		{"a cent under", "49.99", "50", false, "0.01"},
		{"equal is exhausted", "50", "50.00", true, "0"},
		{"over", "50.01", "50", true, "0"},
		{"zero limit refuses every run", "0", "0", true, "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := NewQuota(WorkflowScope("release"), "2026-11")
			q.Charge("run/step", usd(tt.spent))
			assert.Equal(t, tt.exhausted, q.Exhausted(usd(tt.limit)))
			assertDec(t, tt.remaining, q.Remaining(usd(tt.limit)), "remaining")
		})
	}
}

func TestQuotaCheck(t *testing.T) {
	q := NewQuota(WorkflowScope("release"), "2026-11")
	q.Charge("run-1/deploy", usd("50"))
	assert.NoError(t, q.Check(), "no limit set")

	q.Limit, q.Set = usd("50.00"), true
	err := q.Check()
	assert.EqualError(t, err, "monthly quota of workflow release is exhausted: $50.00 of $50.00 spent in 2026-11")
	assert.ErrorIs(t, err, ErrQuotaExhausted)
	var qerr *QuotaError
	require.True(t, errors.As(err, &qerr))
	assert.Equal(t, WorkflowScope("release"), qerr.Scope)
	assert.Equal(t, "2026-11", qerr.Month)

	q.Limit = usd("50.01")
	assert.NoError(t, q.Check())

	all := NewQuota(AllScope, "2026-12")
	all.Limit, all.Set = usd("0"), true
	assert.EqualError(t, all.Check(), "monthly quota of all workflows is exhausted: $0.00 of $0.00 spent in 2026-12")
}
