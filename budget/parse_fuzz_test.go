package budget

import (
	"strconv"
	"strings"
	"testing"
)

// FuzzParseUSD: amounts come from flowctl --max-cost, budget raise --to and definitions.
// ParseUSD never panics; a refusal is an *AmountError naming the value as given; an
// accepted amount is non-negative, has at most MaxDecimals decimals, and prints (FormatUSD)
// to a string that parses back to the same amount.
func FuzzParseUSD(f *testing.F) {
	for _, s := range []string{"2", "2.50", "$2.50", " 0.25 ", "-1", "$-1", "-$1", "1e3", "NaN", "1,000", "0.123456789", "0.30000000000000004", ".5", "5.", "$", "", "00012.3400", "99999999999999999999999.99"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseUSD(s)
		if err != nil {
			ae, ok := err.(*AmountError)
			if !ok || ae.Value != s || ae.Reason == "" {
				t.Fatalf("ParseUSD(%q): error %T %v does not name the value", s, err, err)
			}
			if !strings.Contains(err.Error(), quotedGo(s)) {
				t.Fatalf("ParseUSD(%q): %q does not quote the value", s, err)
			}
			return
		}
		if d.IsNegative() {
			t.Fatalf("ParseUSD(%q) = %s, negative", s, d)
		}
		if !d.Equal(d.Truncate(MaxDecimals)) {
			t.Fatalf("ParseUSD(%q) = %s: more than %d decimals", s, d, MaxDecimals)
		}
		printed := FormatUSD(d)
		again, err := ParseUSD(printed)
		if err != nil {
			t.Fatalf("ParseUSD(%q) = %s, printed %q, which does not parse: %v", s, d, printed, err)
		}
		if !again.Equal(d) {
			t.Fatalf("ParseUSD(%q) = %s, printed %q, parsed back to %s", s, d, printed, again)
		}
	})
}

// FuzzParsePolicy: the budget policy of flowctl --budget-policy and definitions. Accepted
// values are stop or pause; an error quotes the input.
func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{"", "stop", "pause", " PAUSE ", "halt", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePolicy(s)
		if err != nil {
			if p != "" || !strings.Contains(err.Error(), "policy") {
				t.Fatalf("ParsePolicy(%q): %q, %v", s, p, err)
			}
			return
		}
		if p != Stop && p != Pause {
			t.Fatalf("ParsePolicy(%q) = %q", s, p)
		}
		if again, err := ParsePolicy(string(p)); err != nil || again != p {
			t.Fatalf("ParsePolicy(%q) = %q, which parses to %q, %v", s, p, again, err)
		}
	})
}

// FuzzParseMonth: months of flowctl quota commands. What parses prints back to itself
// (MonthOf) and is the first instant of a UTC month.
func FuzzParseMonth(f *testing.F) {
	for _, s := range []string{"2026-11", "2026-1", "2026-13", "0000-01", "9999-12", "26-11", "2026-11-01", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMonth(s)
		if err != nil {
			if !strings.Contains(err.Error(), quotedGo(s)) {
				t.Fatalf("ParseMonth(%q): %v does not quote the value", s, err)
			}
			return
		}
		if MonthOf(m) != s || m.Day() != 1 || m.Hour() != 0 || m.Location().String() != "UTC" {
			t.Fatalf("ParseMonth(%q) = %s, MonthOf %q", s, m, MonthOf(m))
		}
	})
}

// FuzzParseScope and ledger IDs: a scope from flowctl parses to all or workflow:NAME, and
// the ledger ID of any accepted scope and month reads back to both (LedgerID is
// injective).
func FuzzParseScope(f *testing.F) {
	for _, s := range []string{"all", "workflow:all", "release", "workflow:", "", " a/b ", "workflow:a%2Fb", "%", "workflow:x/y%25"} {
		f.Add(s, "2026-11")
	}
	f.Fuzz(func(t *testing.T, s, month string) {
		scope, err := ParseScope(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("ParseScope(%q): empty error", s)
			}
			return
		}
		if _, ok := scope.Workflow(); !ok && scope != AllScope {
			t.Fatalf("ParseScope(%q) = %q: neither all nor workflow:NAME", s, scope)
		}
		if again, err := ParseScope(string(scope)); err != nil || again != scope {
			t.Fatalf("ParseScope(%q) = %q, which parses to %q, %v", s, scope, again, err)
		}
		if _, err := ParseMonth(month); err != nil {
			if _, _, err := ParseLedgerID(LedgerID(scope, month)); err == nil {
				t.Fatalf("ledger ID of month %q (invalid) parsed", month)
			}
			return
		}
		id := LedgerID(scope, month)
		gotScope, gotMonth, err := ParseLedgerID(id)
		if err != nil || gotScope != scope || gotMonth != month {
			t.Fatalf("LedgerID(%q, %q) = %q, read back as %q, %q, %v", scope, month, id, gotScope, gotMonth, err)
		}
	})
}

// FuzzParseLedgerID: whatever ParseLedgerID accepts is an ID LedgerID makes.
func FuzzParseLedgerID(f *testing.F) {
	for _, s := range []string{"gateflow-ledger/all/2026-11", "gateflow-ledger/workflow:a%2Fb/2026-11", "gateflow-ledger/workflow:a/b/2026-11", "gateflow-ledger/x/2026-11", "gateflow-ledger/all/2026-11%", "gateflow-ledger/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		scope, month, err := ParseLedgerID(id)
		if err != nil {
			if !strings.Contains(err.Error(), quotedGo(id)) {
				t.Fatalf("ParseLedgerID(%q): %v does not quote the ID", id, err)
			}
			return
		}
		if LedgerID(scope, month) != id {
			t.Fatalf("ParseLedgerID(%q) = %q, %q, whose ID is %q", id, scope, month, LedgerID(scope, month))
		}
	})
}

func quotedGo(s string) string { return strconv.Quote(s) }
