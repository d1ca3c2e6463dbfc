package budget

import (
	"errors"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// usd is an exact decimal for tests.
func usd(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func TestParseUSD(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"2", "2"},
		{"2.00", "2"},
		{"$2.50", "2.5"},
		{" 0.25 ", "0.25"},
		{"$ 3", "3"},
		{"0", "0"},
		{"0.00", "0"},
		{"007.10", "7.1"},
		{"0.00000001", "0.00000001"},
		{"1.123456780", "1.12345678"}, // trailing zeros do not count as decimals
		{"123456789012345678901234567890", "123456789012345678901234567890"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseUSD(tt.in)
			require.NoError(t, err)
			assert.True(t, got.Equal(usd(tt.want)), "got %s, want %s", got, tt.want)
		})
	}
}

func TestParseUSDRefuses(t *testing.T) {
	tests := []struct {
		in  string
		msg string
	}{
		{"", `budget: USD amount "" is empty`},
		{"   ", `budget: USD amount "   " is empty`},
		{"-1", `budget: USD amount "-1" is negative`},
		{"-$2.50", `budget: USD amount "-$2.50" is negative`},
		{"$-2.50", `budget: USD amount "$-2.50" is negative`},
		{"-0.01", `budget: USD amount "-0.01" is negative`},
		{"0.123456789", `budget: USD amount "0.123456789" has 9 decimals (at most 8)`},
		{"NaN", `budget: USD amount "NaN" is not a number (want digits such as 2 or 2.50, optionally after $)`},
		{"Inf", `budget: USD amount "Inf" is not a number (want digits such as 2 or 2.50, optionally after $)`},
		{"+Inf", `budget: USD amount "+Inf" is not a number (want digits such as 2 or 2.50, optionally after $)`},
		{"-Inf", `budget: USD amount "-Inf" is not a number (want digits such as 2 or 2.50, optionally after $)`},
		{"1e3", `budget: USD amount "1e3" is not a number (want digits such as 2 or 2.50, optionally after $)`},
		{"1,000", `budget: USD amount "1,000" is not a number (want digits such as 2 or 2.50, optionally after $)`},
		{"+2", `budget: USD amount "+2" is not a number (want digits such as 2 or 2.50, optionally after $)`},
		{"2.", `budget: USD amount "2." is not a number (want digits such as 2 or 2.50, optionally after $)`},
		{".5", `budget: USD amount ".5" is not a number (want digits such as 2 or 2.50, optionally after $)`},
		{"$", `budget: USD amount "$" is not a number (want digits such as 2 or 2.50, optionally after $)`},
		{"2 USD", `budget: USD amount "2 USD" is not a number (want digits such as 2 or 2.50, optionally after $)`},
		{"1.2.3", `budget: USD amount "1.2.3" is not a number (want digits such as 2 or 2.50, optionally after $)`},
		{"$$2", `budget: USD amount "$$2" is not a number (want digits such as 2 or 2.50, optionally after $)`},
		{"٣", `budget: USD amount "٣" is not a number (want digits such as 2 or 2.50, optionally after $)`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseUSD(tt.in)
			require.Error(t, err)
			assert.EqualError(t, err, tt.msg)
			assert.True(t, got.IsZero())
			assert.ErrorIs(t, err, ErrInvalidAmount)
			var aerr *AmountError
			require.True(t, errors.As(err, &aerr))
			assert.Equal(t, tt.in, aerr.Value)
		})
	}
}

func TestMustParseUSD(t *testing.T) {
	assert.True(t, MustParseUSD("$1.50").Equal(usd("1.5")))
	assert.PanicsWithError(t, `budget: USD amount "x" is not a number (want digits such as 2 or 2.50, optionally after $)`,
		func() { MustParseUSD("x") })
}

func TestFormatUSD(t *testing.T) {
	tests := []struct {
		in   decimal.Decimal
		want string
	}{
		{usd("2.5"), "$2.50"},
		{usd("2.50"), "$2.50"},
		{usd("2"), "$2.00"},
		{usd("0.0154"), "$0.0154"},
		{usd("0.015400"), "$0.0154"},
		{usd("0"), "$0.00"},
		{decimal.Zero, "$0.00"},
		{usd("0.1"), "$0.10"},
		{usd("0.123"), "$0.123"},
		{usd("0.00000001"), "$0.00000001"},
		{usd("1200"), "$1200.00"},
		{decimal.New(12, 2), "$1200.00"}, // positive exponent
		{usd("-0.1"), "-$0.10"},
		{usd("-2.034"), "-$2.034"},
		{usd("0.1").Add(usd("0.2")), "$0.30"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, FormatUSD(tt.in))
		})
	}
}

func TestFormatUSDIgnoresDecimalGlobals(t *testing.T) {
	trim := decimal.TrimTrailingZeros
	t.Cleanup(func() { decimal.TrimTrailingZeros = trim })
	decimal.TrimTrailingZeros = false
	assert.Equal(t, "$2.50", FormatUSD(usd("2.5000")))
	assert.Equal(t, "$0.0154", FormatUSD(usd("0.015400")))
}

func TestParseFormatRoundTrip(t *testing.T) {
	for _, s := range []string{"$0.00", "$2.50", "$0.0154", "$1200.00", "$0.00000001"} {
		d, err := ParseUSD(s)
		require.NoError(t, err)
		assert.Equal(t, s, FormatUSD(d))
	}
}

func TestFloat64(t *testing.T) {
	assert.Equal(t, 2.5, Float64(usd("2.50")))
	assert.Equal(t, 0.0, Float64(decimal.Zero))
	assert.InDelta(t, 0.3, Float64(usd("0.1").Add(usd("0.2"))), 1e-15)
}

func TestChargeKey(t *testing.T) {
	assert.Equal(t, "0190a6c3-7d1e-7000-8000-000000000001/review#2",
		ChargeKey("0190a6c3-7d1e-7000-8000-000000000001", "review#2"))
}
