package budget

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// Source says where a run's cap came from.
type Source string

const (
	// SourceNone means the run has no cap.
	SourceNone Source = ""
	// SourceStart is a cap given when the run was started (the start option).
	SourceStart Source = "start"
	// SourceFlow is the flow's (handler's) default cap.
	SourceFlow Source = "flow"
	// SourceWorker is the worker's default cap.
	SourceWorker Source = "worker"
	// SourceParent is a child run's cap: what was left of its parent's (Ledger.ChildCap).
	SourceParent Source = "parent"
	// SourceRaise is a cap someone raised while the run went (Ledger.Raise).
	SourceRaise Source = "raise"
)

// Cap is a run's money cap. Without Set the run has no cap and Amount is zero.
type Cap struct {
	// Amount is the cap in USD (never negative).
	Amount decimal.Decimal `json:"amount"`
	// Set is false when the run has no cap.
	Set bool `json:"set"`
	// Source says where the cap came from.
	Source Source `json:"source,omitempty"`
}

// NoCap is the cap of a run without one.
func NoCap() Cap { return Cap{} }

// ResolveCap picks a run's cap: the start option, else the flow's default, else the
// worker's default, else none. A nil pointer means "not given". A negative amount (callers
// validate with ParseUSD) counts as zero, so nothing may be spent.
func ResolveCap(start, flow, worker *decimal.Decimal) Cap {
	for _, c := range []struct {
		amount *decimal.Decimal
		source Source
	}{{start, SourceStart}, {flow, SourceFlow}, {worker, SourceWorker}} {
		if c.amount != nil {
			return Cap{Amount: nonNegative(*c.amount), Set: true, Source: c.source}
		}
	}
	return NoCap()
}

// String reads "$2.00 (start)", "$2.00" without a source, or "none".
func (c Cap) String() string {
	if !c.Set {
		return "none"
	}
	if c.Source == SourceNone {
		return FormatUSD(c.Amount)
	}
	return fmt.Sprintf("%s (%s)", FormatUSD(c.Amount), c.Source)
}

func nonNegative(d decimal.Decimal) decimal.Decimal {
	if d.IsNegative() {
		return decimal.Zero
	}
	return d
}

// Policy says what a run does when its spend goes over its cap.
type Policy string

const (
	// Stop ends the run as budget_exceeded: children cancelled, on-error steps run. It is
	// the default.
	Stop Policy = "stop"
	// Pause makes the run wait in budget_paused until someone raises the cap.
	Pause Policy = "pause"
)

// ParsePolicy reads a policy name, ignoring case and spaces around it; empty means Stop.
// Anything else is an error naming the value.
func ParsePolicy(s string) (Policy, error) {
	switch p := Policy(strings.ToLower(strings.TrimSpace(s))); p {
	case "":
		return Stop, nil
	case Stop, Pause:
		return p, nil
	default:
		return "", fmt.Errorf("budget: unknown policy %q (want stop or pause)", s)
	}
}
