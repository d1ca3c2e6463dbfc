package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/shopspring/decimal"
)

// Price is a model's price in USD per million tokens.
type Price struct {
	InputPerMTok  decimal.Decimal `json:"input_per_mtok"`
	OutputPerMTok decimal.Decimal `json:"output_per_mtok"`
}

// Cost is what usage costs at this price, exactly:
// input × InputPerMTok / 10⁶ + output × OutputPerMTok / 10⁶. No rounding.
func (p Price) Cost(u Usage) decimal.Decimal {
	in := decimal.NewFromInt(u.InputTokens).Mul(p.InputPerMTok)
	out := decimal.NewFromInt(u.OutputTokens).Mul(p.OutputPerMTok)
	return in.Add(out).Shift(-6)
}

// PriceTable maps model names to prices.
type PriceTable map[string]Price

// mtok parses a price literal of DefaultPrices.
func mtok(in, out string) Price {
	return Price{InputPerMTok: decimal.RequireFromString(in), OutputPerMTok: decimal.RequireFromString(out)}
}

// DefaultPrices returns a new table of common models' prices.
//
// These are the providers' public list prices (USD per million tokens, standard tier, no
// batch or cache discounts) as of mid-2025. They go out of date and ignore negotiated
// rates: override them per deployment with LoadPrices and Merge. The "scripted" entry
// prices the Scripted provider used by the examples at $1 / $2.
func DefaultPrices() PriceTable {
	return PriceTable{
		// OpenAI
		"gpt-4o":            mtok("2.50", "10.00"),
		"gpt-4o-2024-05-13": mtok("5.00", "15.00"), // the first gpt-4o snapshot kept its launch price
		"gpt-4o-mini":       mtok("0.15", "0.60"),
		"gpt-4.1":           mtok("2.00", "8.00"),
		"gpt-4.1-mini":      mtok("0.40", "1.60"),
		"gpt-4.1-nano":      mtok("0.10", "0.40"),
		"gpt-5":             mtok("1.25", "10.00"),
		"gpt-5-mini":        mtok("0.25", "2.00"),
		"gpt-5-nano":        mtok("0.05", "0.40"),
		"o1":                mtok("15.00", "60.00"),
		"o3":                mtok("2.00", "8.00"),
		"o3-mini":           mtok("1.10", "4.40"),
		"o4-mini":           mtok("1.10", "4.40"),
		// Anthropic (dated names such as claude-sonnet-4-20250514 resolve to these)
		"claude-opus-4":     mtok("15.00", "75.00"),
		"claude-opus-4-1":   mtok("15.00", "75.00"),
		"claude-opus-4-5":   mtok("5.00", "25.00"),
		"claude-sonnet-4":   mtok("3.00", "15.00"),
		"claude-sonnet-4-5": mtok("3.00", "15.00"),
		"claude-3-7-sonnet": mtok("3.00", "15.00"),
		"claude-3-5-sonnet": mtok("3.00", "15.00"),
		"claude-haiku-4-5":  mtok("1.00", "5.00"),
		"claude-3-5-haiku":  mtok("0.80", "4.00"),
		"claude-3-haiku":    mtok("0.25", "1.25"),
		// The examples' deterministic provider.
		"scripted": mtok("1", "2"),
	}
}

// Lookup finds model's price: an exact entry first, else the longest entry that is a
// prefix of model followed by '-' or '@', so dated or suffixed names resolve to their
// base ("gpt-4o-mini-2024-07-18" → "gpt-4o-mini", "claude-sonnet-4-20250514" →
// "claude-sonnet-4", "claude-3-5-haiku@20241022" → "claude-3-5-haiku").
func (t PriceTable) Lookup(model string) (Price, bool) {
	if p, ok := t[model]; ok {
		return p, true
	}
	best, found := "", false
	for k := range t {
		if k == "" || len(k) <= len(best) || len(k) >= len(model) || !strings.HasPrefix(model, k) {
			continue
		}
		if c := model[len(k)]; c == '-' || c == '@' {
			best, found = k, true
		}
	}
	if !found {
		return Price{}, false
	}
	return t[best], true
}

// TurnCost is what one model call (a turn) cost: the provider's reported cost when it
// gave one, else resp.Usage at the price of the model asked for, else at the price of the
// model that answered (often a dated name). ok is false when none of those is known.
func (t PriceTable) TurnCost(requested string, resp Response) (cost decimal.Decimal, ok bool) {
	if resp.CostUSD != nil {
		return *resp.CostUSD, true
	}
	p, ok := t.Lookup(requested)
	if !ok && resp.Model != "" {
		p, ok = t.Lookup(resp.Model)
	}
	if !ok {
		return decimal.Zero, false
	}
	return p.Cost(resp.Usage), true
}

// WorstCase is the most one call of req can cost, to reserve before making it:
// req.WorstCaseUsage(defaultMaxTokens) (all of the output tokens, the input estimated) at
// the price of req.Model. ok is false when the model has no price.
func (t PriceTable) WorstCase(req Request, defaultMaxTokens int) (cost decimal.Decimal, usage Usage, ok bool) {
	usage = req.WorstCaseUsage(defaultMaxTokens)
	p, ok := t.Lookup(req.Model)
	if !ok {
		return decimal.Zero, usage, false
	}
	return p.Cost(usage), usage, true
}

// Merge returns a new table with t's entries overridden and extended by other's.
func (t PriceTable) Merge(other PriceTable) PriceTable {
	out := make(PriceTable, len(t)+len(other))
	for k, v := range t {
		out[k] = v
	}
	for k, v := range other {
		out[k] = v
	}
	return out
}

// Models returns the table's model names, sorted.
func (t PriceTable) Models() []string {
	out := slices.AppendSeq(make([]string, 0, len(t)), maps.Keys(t))
	slices.Sort(out)
	return out
}

// LoadPrices reads a price table from a JSON file of the form
//
//	{"gpt-4o": {"input_per_mtok": "2.50", "output_per_mtok": "10.00"}}
//
// Prices may be strings or numbers; both are parsed exactly as decimals. Both fields are
// required and must not be negative; unknown fields are errors (they are usually typos).
func LoadPrices(path string) (PriceTable, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("prices: %w", err)
	}
	t, err := ParsePrices(data)
	if err != nil {
		return nil, fmt.Errorf("prices %s: %w", path, err)
	}
	return t, nil
}

// ParsePrices parses the JSON form LoadPrices reads.
func ParsePrices(data []byte) (PriceTable, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("not a JSON object of models: %w", err)
	}
	if raw == nil {
		return nil, fmt.Errorf("not a JSON object of models")
	}
	t := make(PriceTable, len(raw))
	for _, model := range slices.Sorted(maps.Keys(raw)) {
		if strings.TrimSpace(model) == "" {
			return nil, fmt.Errorf("empty model name")
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw[model], &fields); err != nil || fields == nil {
			return nil, fmt.Errorf("model %q: want an object with input_per_mtok and output_per_mtok", model)
		}
		for _, f := range slices.Sorted(maps.Keys(fields)) {
			if f != "input_per_mtok" && f != "output_per_mtok" {
				return nil, fmt.Errorf("model %q: unknown field %q (want input_per_mtok and output_per_mtok)", model, f)
			}
		}
		in, err := priceField(model, "input_per_mtok", fields)
		if err != nil {
			return nil, err
		}
		out, err := priceField(model, "output_per_mtok", fields)
		if err != nil {
			return nil, err
		}
		t[model] = Price{InputPerMTok: in, OutputPerMTok: out}
	}
	return t, nil
}

func priceField(model, name string, fields map[string]json.RawMessage) (decimal.Decimal, error) {
	raw, ok := fields[name]
	if !ok {
		return decimal.Decimal{}, fmt.Errorf("model %q: %s is missing", model, name)
	}
	text := string(bytes.TrimSpace(raw))
	if strings.HasPrefix(text, `"`) {
		if err := json.Unmarshal(raw, &text); err != nil {
			return decimal.Decimal{}, fmt.Errorf("model %q: %s: %w", model, name, err)
		}
		text = strings.TrimSpace(text)
	} else if text == "" || text == "null" || text == "true" || text == "false" || text[0] == '{' || text[0] == '[' {
		return decimal.Decimal{}, fmt.Errorf("model %q: %s is %s, want a number or a decimal string", model, name, text)
	}
	d, err := decimal.NewFromString(text)
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("model %q: %s %q is not a decimal number", model, name, text)
	}
	if d.IsNegative() {
		return decimal.Decimal{}, fmt.Errorf("model %q: %s %s is negative", model, name, d)
	}
	return d, nil
}
