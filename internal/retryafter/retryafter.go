// Package retryafter reads how long a server asks a client to wait before it tries again:
// the Retry-After header of RFC 9110 (delay seconds or an HTTP date) and the
// retry-after-ms header some LLM providers send. HTTP steps (package activities) and
// provider calls (package activities/llm) both read their headers with it.
package retryafter

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Parse reads a Retry-After value, relative to now: whole delay seconds ("120", as RFC
// 9110 has them) or an HTTP date. It is zero when v is empty, malformed, not positive or
// in the past; a delay too long for a time.Duration is the longest one. Callers cap it.
func Parse(v string, now time.Time) time.Duration {
	return parse(v, now, false)
}

// ParseFractional is Parse that also takes fractional delay seconds ("1.5"), which RFC
// 9110 does not allow but some APIs send.
func ParseFractional(v string, now time.Time) time.Duration {
	return parse(v, now, true)
}

// Millis reads a delay in milliseconds, as the retry-after-ms header holds it ("1250",
// "2.5"): zero when v is empty, malformed or not positive.
func Millis(v string) time.Duration {
	d, _ := number(strings.TrimSpace(v), time.Millisecond, true)
	return d
}

func parse(v string, now time.Time, fractions bool) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if d, ok := number(v, time.Second, fractions); ok {
		return d
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

// number reads a decimal number of units: digits with an optional sign and, with
// fractions, a decimal point; no exponents, hex, infinities or NaN. ok is false when v is
// not such a number; a number that is not positive is zero, one too large for a
// time.Duration the longest one.
func number(v string, unit time.Duration, fractions bool) (d time.Duration, ok bool) {
	if v == "" || strings.ContainsFunc(v, func(r rune) bool {
		return (r < '0' || r > '9') && r != '+' && r != '-' && (r != '.' || !fractions)
	}) {
		return 0, false
	}
	if !strings.Contains(v, ".") {
		n, err := strconv.ParseInt(v, 10, 64)
		switch {
		case errors.Is(err, strconv.ErrRange) && n > 0:
			return math.MaxInt64, true
		case err != nil:
			return 0, false
		case n <= 0:
			return 0, true
		case n > math.MaxInt64/int64(unit):
			return math.MaxInt64, true
		}
		return time.Duration(n) * unit, true
	}
	f, err := strconv.ParseFloat(v, 64)
	switch {
	case err != nil:
		return 0, false
	case f <= 0:
		return 0, true
	case f*float64(unit) >= math.MaxInt64:
		return math.MaxInt64, true
	}
	return time.Duration(f * float64(unit)), true
}
