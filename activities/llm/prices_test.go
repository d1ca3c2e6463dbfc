package llm

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func TestPriceCostIsExact(t *testing.T) {
	tests := []struct {
		name      string
		price     Price
		usage     Usage
		want      string
		wantCents string
	}{
		{"gpt-4o-mini 1,234 in / 567 out", Price{dec("0.15"), dec("0.60")}, Usage{1234, 567}, "0.0005253", "0.00"},
		{"gpt-4o one million in, a quarter million out", Price{dec("2.50"), dec("10.00")}, Usage{1_000_000, 250_000}, "5", "5.00"},
		{"claude-opus-4 long call", Price{dec("15"), dec("75")}, Usage{123_456, 7_890}, "2.44359", "2.44"},
		{"one token at a tiny price", Price{dec("0.000001"), dec("0")}, Usage{1, 0}, "0.000000000001", "0.00"},
		{"zero usage", Price{dec("3"), dec("15")}, Usage{}, "0", "0.00"},
		// 0.1 + 0.2 style sums that a float would get wrong.
		{"no float drift", Price{dec("0.1"), dec("0.2")}, Usage{1_000_000, 1_000_000}, "0.3", "0.30"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.price.Cost(tt.usage)
			assert.Equal(t, tt.want, got.String())
			assert.Equal(t, tt.wantCents, got.StringFixed(2))
		})
	}
}

func TestPriceTableLookup(t *testing.T) {
	table := DefaultPrices()
	tests := []struct {
		model, wantKey string // wantKey "" means no price
	}{
		{"gpt-4o-mini", "gpt-4o-mini"},
		{"gpt-4o-mini-2024-07-18", "gpt-4o-mini"},
		{"gpt-4o-2024-08-06", "gpt-4o"},
		{"gpt-4o-2024-05-13", "gpt-4o-2024-05-13"},
		{"gpt-4.1-nano-2025-04-14", "gpt-4.1-nano"},
		{"gpt-4.1-2025-04-14", "gpt-4.1"},
		{"o3-mini-2025-01-31", "o3-mini"},
		{"o3-2025-04-16", "o3"},
		{"o4-mini", "o4-mini"},
		{"claude-sonnet-4-20250514", "claude-sonnet-4"},
		{"claude-opus-4-20250514", "claude-opus-4"},
		{"claude-opus-4-1-20250805", "claude-opus-4-1"},
		{"claude-opus-4-5-20251101", "claude-opus-4-5"},
		{"claude-3-5-haiku-20241022", "claude-3-5-haiku"},
		{"claude-3-5-haiku@20241022", "claude-3-5-haiku"},
		{"claude-haiku-4-5", "claude-haiku-4-5"},
		{"scripted", "scripted"},
		{"scripted-review", "scripted"},
		{"gpt-4omni", ""},     // a prefix must be followed by '-'
		{"gpt-4", ""},         // shorter than every key
		{"llama-3.1-70b", ""}, // not in the table
		{"openai/gpt-4o", ""}, // provider-qualified names are not guessed
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			got, ok := table.Lookup(tt.model)
			if tt.wantKey == "" {
				assert.False(t, ok)
				assert.Equal(t, Price{}, got)
				return
			}
			require.True(t, ok)
			assert.Equal(t, table[tt.wantKey], got)
		})
	}
	var empty PriceTable
	_, ok := empty.Lookup("gpt-4o")
	assert.False(t, ok, "a nil table prices nothing")
}

func TestDefaultPrices(t *testing.T) {
	a := DefaultPrices()
	for _, m := range []string{"gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "o3", "o4-mini",
		"claude-opus-4", "claude-sonnet-4", "claude-3-5-haiku", "claude-haiku-4-5", "scripted"} {
		p, ok := a[m]
		require.True(t, ok, m)
		assert.True(t, p.InputPerMTok.IsPositive() && p.OutputPerMTok.IsPositive(), m)
	}
	assert.Equal(t, "0.15", a["gpt-4o-mini"].InputPerMTok.String())
	assert.Equal(t, "0.6", a["gpt-4o-mini"].OutputPerMTok.String())
	assert.Equal(t, Price{dec("1"), dec("2")}, a["scripted"])
	delete(a, "gpt-4o")
	_, ok := DefaultPrices()["gpt-4o"]
	assert.True(t, ok, "each call returns a new table")
}

func TestPriceTableMerge(t *testing.T) {
	base := PriceTable{"a": {dec("1"), dec("2")}, "b": {dec("3"), dec("4")}}
	over := PriceTable{"b": {dec("30"), dec("40")}, "c": {dec("5"), dec("6")}}
	got := base.Merge(over)
	assert.Equal(t, PriceTable{"a": {dec("1"), dec("2")}, "b": {dec("30"), dec("40")}, "c": {dec("5"), dec("6")}}, got)
	assert.Equal(t, dec("3"), base["b"].InputPerMTok, "the receiver is not changed")
	assert.Equal(t, []string{"a", "b", "c"}, got.Models())
	assert.Equal(t, over, PriceTable(nil).Merge(over))
}

func TestLoadPrices(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prices.json")
	require.NoError(t, os.WriteFile(path, []byte(`{
		"gpt-4o": {"input_per_mtok": "2.50", "output_per_mtok": "10.00"},
		"local-llama": {"input_per_mtok": 0, "output_per_mtok": 0.000000000000000000123},
		"big": {"input_per_mtok": 1e2, "output_per_mtok": " 7 "}
	}`), 0o600))
	got, err := LoadPrices(path)
	require.NoError(t, err)
	require.Len(t, got, 3)
	assert.Equal(t, "2.5", got["gpt-4o"].InputPerMTok.String())
	assert.Equal(t, "10", got["gpt-4o"].OutputPerMTok.String())
	assert.Equal(t, "0.000000000000000000123", got["local-llama"].OutputPerMTok.String(), "numbers are parsed exactly, not through a float")
	assert.Equal(t, "100", got["big"].InputPerMTok.String())
	assert.Equal(t, "7", got["big"].OutputPerMTok.String())

	merged := DefaultPrices().Merge(got)
	p, ok := merged.Lookup("gpt-4o-2024-11-20")
	require.True(t, ok)
	assert.Equal(t, "0.0125", p.Cost(Usage{InputTokens: 1000, OutputTokens: 1000}).String())
}

func TestLoadPricesErrors(t *testing.T) {
	tests := []struct {
		name, content, want string
	}{
		{"not JSON", `{`, "not a JSON object of models"},
		{"not an object", `[1]`, "not a JSON object of models"},
		{"null", `null`, "not a JSON object of models"},
		{"model not an object", `{"gpt-4o": "2.50"}`, `model "gpt-4o": want an object with input_per_mtok and output_per_mtok`},
		{"missing output", `{"gpt-4o": {"input_per_mtok": "2.50"}}`, `model "gpt-4o": output_per_mtok is missing`},
		{"missing input", `{"m": {"output_per_mtok": 1}}`, `model "m": input_per_mtok is missing`},
		{"typo", `{"gpt-4o": {"input_per_mtok": 1, "output_per_mtoks": 2}}`, `model "gpt-4o": unknown field "output_per_mtoks"`},
		{"not a number", `{"gpt-4o": {"input_per_mtok": "two", "output_per_mtok": 2}}`, `model "gpt-4o": input_per_mtok "two" is not a decimal number`},
		{"empty string", `{"gpt-4o": {"input_per_mtok": "", "output_per_mtok": 2}}`, `model "gpt-4o": input_per_mtok "" is not a decimal number`},
		{"null price", `{"gpt-4o": {"input_per_mtok": null, "output_per_mtok": 2}}`, `model "gpt-4o": input_per_mtok is null, want a number or a decimal string`},
		{"bool price", `{"gpt-4o": {"input_per_mtok": 1, "output_per_mtok": true}}`, `model "gpt-4o": output_per_mtok is true`},
		{"negative", `{"gpt-4o": {"input_per_mtok": "-1", "output_per_mtok": 2}}`, `model "gpt-4o": input_per_mtok -1 is negative`},
		{"empty model", `{"": {"input_per_mtok": 1, "output_per_mtok": 2}}`, `empty model name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "prices.json")
			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o600))
			_, err := LoadPrices(path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), path, "the error names the file")
		})
	}
	_, err := LoadPrices(filepath.Join(t.TempDir(), "missing.json"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "missing.json")
}

func TestTurnCostAndWorstCase(t *testing.T) {
	prices := DefaultPrices()
	reported := decimal.RequireFromString("0.000615")
	tests := []struct {
		name, requested string
		resp            Response
		want            string // "" means unknown
	}{
		{"reported cost wins", "gpt-4o", Response{Usage: Usage{InputTokens: 1000}, CostUSD: &reported}, "0.000615"},
		{"requested model's price", "gpt-4o", Response{Model: "gpt-4o-2024-05-13", Usage: Usage{InputTokens: 1000, OutputTokens: 100}},
			"0.0035"}, // 1000×2.50/1e6 + 100×10/1e6, not the dated snapshot's price
		{"answering model's price", "my-alias", Response{Model: "claude-sonnet-4-20250514", Usage: Usage{InputTokens: 472, OutputTokens: 91}},
			"0.002781"},
		{"unpriced", "my-alias", Response{Model: "other", Usage: Usage{InputTokens: 1}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cost, ok := prices.TurnCost(tt.requested, tt.resp)
			if tt.want == "" {
				assert.False(t, ok)
				assert.True(t, cost.IsZero())
				return
			}
			require.True(t, ok)
			assert.Equal(t, tt.want, cost.String())
		})
	}

	req := Request{Model: "claude-sonnet-4", System: "12345678", Prompt: "1234", Tools: []Tool{{Name: "f"}}}
	cost, usage, ok := prices.WorstCase(req, 1000)
	require.True(t, ok)
	assert.Equal(t, Usage{InputTokens: 4, OutputTokens: 1000}, usage, "ceil(13/4) input, the default max tokens")
	assert.Equal(t, "0.015012", cost.String(), "4×3/1e6 + 1000×15/1e6")
	_, usage, ok = prices.WorstCase(Request{Model: "unknown", MaxTokens: 5}, 1000)
	assert.False(t, ok)
	assert.Equal(t, int64(5), usage.OutputTokens)
}
