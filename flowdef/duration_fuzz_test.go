package flowdef

import (
	"math/big"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzParseDuration: durations of definitions (wall_time, timeouts, budget_pause). An
// accepted duration is positive and exactly what was written: the days part times 24h
// plus the rest, computed without overflow; its Go form (Duration.String) parses back to
// it. A refusal quotes the input.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"1d", "1d12h", "90m", " 2h ", "0s", "-1h", "1d-1h", "d", "1dd", "1.5d", "106751d", "106752d", "9223372036854775807d", "3843366080d", "1d9223372036h", "106751d24h", "106751d23h", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			if !strings.Contains(err.Error(), strconv.Quote(s)) {
				t.Fatalf("ParseDuration(%q): %v does not quote the value", s, err)
			}
			return
		}
		if d <= 0 {
			t.Fatalf("ParseDuration(%q) = %s, not positive", s, d)
		}
		want := new(big.Int)
		rest := strings.TrimSpace(s)
		if i := strings.Index(rest, "d"); i > 0 {
			n, ok := new(big.Int).SetString(strings.TrimPrefix(rest[:i], "+"), 10)
			if !ok {
				t.Fatalf("ParseDuration(%q) = %s, but %q is not a number of days", s, d, rest[:i])
			}
			want.Mul(n, big.NewInt(int64(24*time.Hour)))
			rest = rest[i+1:]
		}
		if rest != "" {
			r, err := time.ParseDuration(rest)
			if err != nil {
				t.Fatalf("ParseDuration(%q) = %s, but %q is not a duration: %v", s, d, rest, err)
			}
			want.Add(want, big.NewInt(int64(r)))
		}
		if want.Cmp(big.NewInt(int64(d))) != 0 {
			t.Fatalf("ParseDuration(%q) = %s (%d ns), but it says %s ns", s, d, int64(d), want)
		}
		if again, err := ParseDuration(d.String()); err != nil || again != d {
			t.Fatalf("ParseDuration(%q) = %s, whose String parses to %s, %v", s, d, again, err)
		}
	})
}
