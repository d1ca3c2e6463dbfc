package budget

import (
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// MaxDecimals is how many decimals ParseUSD accepts (trailing zeros aside): enough for
// per-token prices, few enough to catch a pasted float such as 0.30000000000000004.
const MaxDecimals = 8

// ErrInvalidAmount is matched (errors.Is) by every *AmountError.
var ErrInvalidAmount = errors.New("budget: invalid USD amount")

// AmountError says why a USD amount was refused: by ParseUSD, or by the ledger for a
// negative reservation.
type AmountError struct {
	// Value is the amount as it was given.
	Value string
	// Reason says what is wrong with it ("is negative", "is empty", ...).
	Reason string
}

// Error reads `budget: USD amount "-1" is negative`.
func (e *AmountError) Error() string {
	return fmt.Sprintf("budget: USD amount %q %s", e.Value, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidAmount) true.
func (e *AmountError) Is(target error) bool { return target == ErrInvalidAmount }

// ParseUSD reads a non-negative USD amount: digits with an optional fractional part, an
// optional leading "$" and spaces around ("2", "2.00", "$2.50", " 0.25 "). It refuses, with
// an *AmountError naming the value, empty input, negative amounts, anything that is not a
// plain decimal number (NaN, Inf, exponents, thousands separators) and more than MaxDecimals
// decimals. The result keeps the digits as written: ParseUSD("2.50") equals 2.5.
func ParseUSD(s string) (decimal.Decimal, error) {
	body := strings.TrimSpace(s)
	if body == "" {
		return decimal.Zero, &AmountError{Value: s, Reason: "is empty"}
	}
	negative := false
	if strings.HasPrefix(body, "-") {
		negative, body = true, strings.TrimSpace(body[1:])
	}
	if strings.HasPrefix(body, "$") {
		body = strings.TrimSpace(body[1:])
	}
	if strings.HasPrefix(body, "-") {
		negative, body = true, strings.TrimSpace(body[1:])
	}
	whole, frac, hasPoint := strings.Cut(body, ".")
	if !allDigits(whole) || (hasPoint && !allDigits(frac)) {
		return decimal.Zero, &AmountError{Value: s, Reason: "is not a number (want digits such as 2 or 2.50, optionally after $)"}
	}
	if negative {
		return decimal.Zero, &AmountError{Value: s, Reason: "is negative"}
	}
	if n := len(strings.TrimRight(frac, "0")); n > MaxDecimals {
		return decimal.Zero, &AmountError{Value: s, Reason: fmt.Sprintf("has %d decimals (at most %d)", n, MaxDecimals)}
	}
	d, err := decimal.NewFromString(body)
	if err != nil { // unreachable after the checks above, kept for safety
		return decimal.Zero, &AmountError{Value: s, Reason: "is not a number"}
	}
	return d, nil
}

// MustParseUSD is ParseUSD for constants in code; it panics on an invalid amount.
func MustParseUSD(s string) decimal.Decimal {
	d, err := ParseUSD(s)
	if err != nil {
		panic(err)
	}
	return d
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// FormatUSD prints an amount for people: a "$", at least two decimals, and every further
// decimal that is not a trailing zero ("$2.50", "$0.0154", "$1200.00"). Negative amounts
// read "-$0.10". It is exact (no rounding) and does not depend on decimal's global settings.
func FormatUSD(d decimal.Decimal) string {
	sign := ""
	if d.IsNegative() {
		sign, d = "-", d.Neg()
	}
	places := int32(0)
	if exp := d.Exponent(); exp < 0 {
		places = -exp
	}
	whole, frac, _ := strings.Cut(d.StringFixed(places), ".")
	frac = strings.TrimRight(frac, "0")
	for len(frac) < 2 {
		frac += "0"
	}
	return sign + "$" + whole + "." + frac
}

// Float64 converts an amount to the nearest float64. It exists for Temporal search
// attributes (type Double), which are for filtering only; never compute money with it.
func Float64(d decimal.Decimal) float64 {
	return d.InexactFloat64()
}

// ChargeKey is the idempotency key of one step's cost in a monthly Quota: the run ID and the
// step key joined by "/". Run IDs carry no "/", so keys of different runs never collide.
func ChargeKey(runID, step string) string {
	return runID + "/" + step
}
