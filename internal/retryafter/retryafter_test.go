package retryafter

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestParse(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	longest := time.Duration(math.MaxInt64)
	tests := []struct {
		name             string
		v                string
		want, fractional time.Duration
	}{
		{"absent", "", 0, 0},
		{"blank", "  ", 0, 0},
		{"seconds", "2", 2 * time.Second, 2 * time.Second},
		{"seconds with space", " 30 ", 30 * time.Second, 30 * time.Second},
		{"plus sign", "+5", 5 * time.Second, 5 * time.Second},
		{"zero", "0", 0, 0},
		{"negative", "-5", 0, 0},
		{"fraction", "1.5", 0, 1500 * time.Millisecond},
		{"negative fraction", "-1.5", 0, 0},
		{"large", "601", 601 * time.Second, 601 * time.Second},
		{"too long for a Duration", "99999999999999999", longest, longest},
		{"too long for an int64", "99999999999999999999999", longest, longest},
		{"exponent", "1e3", 0, 0},
		{"hex", "0x10", 0, 0},
		{"infinity", "Inf", 0, 0},
		{"not a number", "NaN", 0, 0},
		{"garbage", "soon", 0, 0},
		{"IMF date", now.Add(45 * time.Second).Format(http.TimeFormat), 45 * time.Second, 45 * time.Second},
		{"RFC 850 date", now.Add(time.Minute).Format(time.RFC850), time.Minute, time.Minute},
		{"date in the past", now.Add(-time.Minute).Format(http.TimeFormat), 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Parse(tt.v, now), "Parse")
			assert.Equal(t, tt.fractional, ParseFractional(tt.v, now), "ParseFractional")
		})
	}
}

func TestMillis(t *testing.T) {
	for v, want := range map[string]time.Duration{
		"":      0,
		"1250":  1250 * time.Millisecond,
		" 2.5 ": 2500 * time.Microsecond,
		"0":     0,
		"-3":    0,
		"1e3":   0,
		"soon":  0,
	} {
		assert.Equal(t, want, Millis(v), "%q", v)
	}
}

// FuzzParse: a provider's header is outside input. No value panics, and no delay is
// negative.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "0", "3", "1.5", "-1", "Wed, 21 Oct 2015 07:28:00 GMT", "1e3", "99999999999999999999", "120ms"} {
		f.Add(s)
	}
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		for _, d := range []time.Duration{Parse(v, now), ParseFractional(v, now), Millis(v)} {
			if d < 0 {
				t.Fatalf("%q gave a negative delay %s", v, d)
			}
		}
	})
}
