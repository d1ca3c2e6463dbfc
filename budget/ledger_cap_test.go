package budget

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRemaining(t *testing.T) {
	tests := []struct {
		name, cap, spent, reserved, want string
	}{
		{"fresh", "1", "", "", "1"},
		{"spent and reserved", "1", "0.4", "0.3", "0.3"},
		{"exactly used", "1", "0.7", "0.3", "0"},
		{"over is floored at zero", "1", "1.3", "", "0"},
		{"exact decimals", "0.3", "0.1", "0.2", "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := spentLedger(t, tt.cap, tt.spent)
			if tt.reserved != "" {
				_, err := l.Reserve("r", usd(tt.reserved))
				require.NoError(t, err)
			}
			left, ok := l.Remaining()
			assert.True(t, ok)
			assertDec(t, tt.want, left, "remaining")
			assert.False(t, left.IsNegative())
		})
	}
}

func TestRaise(t *testing.T) {
	tests := []struct {
		name               string
		cap                Cap
		spent, reserved    string
		to                 string
		msg                string // empty: allowed
		overAfter, overNow bool
	}{
		{name: "above cap and spend", cap: capOf("2"), spent: "2.03", to: "3", overNow: true},
		{name: "equal to spent plus reserved", cap: capOf("2"), spent: "2.03", reserved: "0", to: "2.03", overNow: true},
		{name: "equal to the current cap", cap: capOf("2"), spent: "1", to: "2.00",
			msg: "budget: the new cap $2.00 must be above the current $2.00 cap"},
		{name: "below the current cap", cap: capOf("2"), spent: "1", to: "1.5",
			msg: "budget: the new cap $1.50 must be above the current $2.00 cap"},
		{name: "negative", cap: capOf("2"), to: "-1",
			msg: "budget: the new cap -$1.00 must be above the current $2.00 cap"},
		{name: "below what is spent", cap: capOf("2"), spent: "2.5", to: "2.4", overNow: true, overAfter: true,
			msg: "budget: the new cap $2.40 is below the $2.50 already spent and reserved"},
		{name: "below spent plus reserved", cap: capOf("2"), spent: "1.8", reserved: "0.5", to: "2.2",
			msg: "budget: the new cap $2.20 is below the $2.30 already spent and reserved"},
		{name: "at spent plus reserved", cap: capOf("2"), spent: "1.8", reserved: "0.5", to: "2.3"},
		{name: "no cap", cap: NoCap(), to: "5", msg: "budget: the run has no cap to raise"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLedger(tt.cap)
			if tt.reserved != "" {
				_, err := l.Reserve("r", usd(tt.reserved))
				require.NoError(t, err)
			}
			if tt.spent != "" {
				l.Charge("s", "s", usd(tt.spent), t0)
			}
			assert.Equal(t, tt.overNow, l.Over())
			before := l.Cap
			err := l.Raise(usd(tt.to))
			if tt.msg != "" {
				assert.EqualError(t, err, tt.msg)
				assert.ErrorIs(t, err, ErrInvalidRaise)
				assert.Equal(t, before, l.Cap, "unchanged")
				return
			}
			require.NoError(t, err)
			assertDec(t, tt.to, l.Cap.Amount, "cap")
			assert.Equal(t, SourceRaise, l.Cap.Source)
			assert.True(t, l.Cap.Set)
			assert.Equal(t, tt.overAfter, l.Over())
		})
	}
}

func TestRaiseAboveCapButBelowCommitted(t *testing.T) {
	l := NewLedger(capOf("2"))
	l.Charge("s", "s", usd("2.5"), t0)
	_, err := l.Reserve("r", usd("0"))
	assert.Error(t, err, "over the cap, even a zero limit is refused")
	err = l.Raise(usd("2.4"))
	var rerr *RaiseError
	require.True(t, errors.As(err, &rerr))
	assert.EqualError(t, err, "budget: the new cap $2.40 is below the $2.50 already spent and reserved")
	require.NoError(t, l.Raise(usd("2.5")))
	_, err = l.Reserve("r", usd("0"))
	assert.NoError(t, err, "at the raised cap a zero limit fits again")
}

func TestChildCap(t *testing.T) {
	l := spentLedger(t, "2", "0.5")
	_, err := l.Reserve("other", usd("0.25"))
	require.NoError(t, err)
	c := l.ChildCap()
	assert.True(t, c.Set)
	assert.Equal(t, SourceParent, c.Source)
	assertDec(t, "1.25", c.Amount, "child cap")

	// The parent reserves the child's cap and settles the child's spend.
	r, err := l.Reserve("child:report", c.Amount)
	require.NoError(t, err)
	_, exceeded := l.Settle(r, usd("1.1"), "report", t0)
	assert.Nil(t, exceeded)
	assertDec(t, "1.6", l.Spent, "spent")

	over := spentLedger(t, "1", "1.5")
	assertDec(t, "0", over.ChildCap().Amount, "over the cap leaves nothing")
}
