package budget

import (
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ptr(s string) *decimal.Decimal {
	d := usd(s)
	return &d
}

func TestResolveCap(t *testing.T) {
	start, flow, worker := ptr("1"), ptr("2"), ptr("3")
	tests := []struct {
		name                string
		start, flow, worker *decimal.Decimal
		want                Cap
	}{
		{"none", nil, nil, nil, Cap{}},
		{"worker only", nil, nil, worker, Cap{Amount: usd("3"), Set: true, Source: SourceWorker}},
		{"flow only", nil, flow, nil, Cap{Amount: usd("2"), Set: true, Source: SourceFlow}},
		{"flow over worker", nil, flow, worker, Cap{Amount: usd("2"), Set: true, Source: SourceFlow}},
		{"start only", start, nil, nil, Cap{Amount: usd("1"), Set: true, Source: SourceStart}},
		{"start over worker", start, nil, worker, Cap{Amount: usd("1"), Set: true, Source: SourceStart}},
		{"start over flow", start, flow, nil, Cap{Amount: usd("1"), Set: true, Source: SourceStart}},
		{"start over all", start, flow, worker, Cap{Amount: usd("1"), Set: true, Source: SourceStart}},
		{"zero start still wins", ptr("0"), flow, worker, Cap{Amount: usd("0"), Set: true, Source: SourceStart}},
		{"negative counts as zero", ptr("-1"), flow, worker, Cap{Amount: decimal.Zero, Set: true, Source: SourceStart}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ResolveCap(tt.start, tt.flow, tt.worker)
			assert.Equal(t, tt.want.Set, got.Set)
			assert.Equal(t, tt.want.Source, got.Source)
			assert.True(t, tt.want.Amount.Equal(got.Amount), "amount %s, want %s", got.Amount, tt.want.Amount)
		})
	}
}

func TestCapString(t *testing.T) {
	assert.Equal(t, "none", NoCap().String())
	assert.Equal(t, "$2.00 (start)", Cap{Amount: usd("2"), Set: true, Source: SourceStart}.String())
	assert.Equal(t, "$0.25", Cap{Amount: usd("0.25"), Set: true}.String())
}

func TestParsePolicy(t *testing.T) {
	tests := []struct {
		in   string
		want Policy
	}{
		{"", Stop},
		{"stop", Stop},
		{" STOP ", Stop},
		{"pause", Pause},
		{"Pause", Pause},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParsePolicy(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	_, err := ParsePolicy("halt")
	assert.EqualError(t, err, `budget: unknown policy "halt" (want stop or pause)`)
}
