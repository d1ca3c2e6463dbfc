package cronspec

import (
	"testing"
	"time"
)

// FuzzParse: cron expressions come from Define options and definition files. Parse never
// panics; an accepted expression has a next time after any instant (or none, for a date
// that never comes, such as February 31), and parsing is deterministic.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"0 9 * * 1-5", "*/15 * * * *", "@every 10m", "@hourly", "@daily", "61 * * * *", "* * * *", "", "@every -1s", "TZ=Europe/Paris 0 9 * * *", "CRON_TZ=UTC * * * * *", "0 0 31 2 *", "1-0 * * * *", "*/0 * * * *", "TZ=", "CRON_TZ=Europe/Paris"} {
		f.Add(s)
	}
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, spec string) {
		s, err := Parse(spec)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("Parse(%q): empty error", spec)
			}
			if _, again := Parse(spec); again == nil {
				t.Fatalf("Parse(%q) refused it once, accepted it the second time", spec)
			}
			return
		}
		if s == nil {
			t.Fatalf("Parse(%q): no schedule and no error", spec)
		}
		if next := s.Next(at); !next.IsZero() && !next.After(at) {
			t.Fatalf("Parse(%q): next run %s is not after %s", spec, next, at)
		}
	})
}
