package budget

import (
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// ErrExceeded is matched (errors.Is) by every *ExceededError.
var ErrExceeded = errors.New("budget: cap exceeded")

// ErrDuplicateKey is matched (errors.Is) by every *KeyError.
var ErrDuplicateKey = errors.New("budget: duplicate key")

// ErrInvalidRaise is matched (errors.Is) by every *RaiseError.
var ErrInvalidRaise = errors.New("budget: invalid cap raise")

// ErrQuotaExhausted is matched (errors.Is) by every *QuotaError.
var ErrQuotaExhausted = errors.New("budget: monthly quota exhausted")

// ExceededError says a run's cap is in the way. Before a step (AfterCharge false) it is a
// refusal: Requested would take Spent + Reserved above Cap, so the step is not dispatched.
// After a charge (AfterCharge true) it says the spend is now strictly above Cap; Requested
// is then the amount just charged.
type ExceededError struct {
	// Cap is the run's cap.
	Cap decimal.Decimal `json:"cap"`
	// Spent is what the run has been charged, including the charge just made when
	// AfterCharge is set.
	Spent decimal.Decimal `json:"spent"`
	// Reserved is what is set aside for steps still running.
	Reserved decimal.Decimal `json:"reserved"`
	// Requested is the reservation refused, or the amount just charged.
	Requested decimal.Decimal `json:"requested"`
	// Step names the step (the reservation key or the charged step); empty when unknown.
	Step string `json:"step,omitempty"`
	// Steps names the steps of a parallel wave refused together by ReserveAll.
	Steps []string `json:"steps,omitempty"`
	// AfterCharge is set when the spend went over the cap, rather than a step being refused.
	AfterCharge bool `json:"after_charge,omitempty"`
}

// Left is what the cap still allows: Cap - Spent - Reserved, never below zero.
func (e *ExceededError) Left() decimal.Decimal {
	return nonNegative(e.Cap.Sub(e.Spent).Sub(e.Reserved))
}

// Error reads, for a refusal, "budget: step review needs $0.25 but only $0.10 of the $2.00
// cap is left (spent $1.90)" ("parallel steps a, b need $0.60 together" for a wave, ", reserved
// $0.10" when something is reserved) and, after a charge, "budget: spent $2.03 of the $2.00
// cap after step review".
func (e *ExceededError) Error() string {
	if e.AfterCharge {
		msg := fmt.Sprintf("budget: spent %s of the %s cap", FormatUSD(e.Spent), FormatUSD(e.Cap))
		if e.Step != "" {
			msg += " after step " + e.Step
		}
		return msg
	}
	var who string
	switch {
	case len(e.Steps) > 0:
		who = fmt.Sprintf("parallel steps %s need %s together", strings.Join(e.Steps, ", "), FormatUSD(e.Requested))
	case e.Step != "":
		who = fmt.Sprintf("step %s needs %s", e.Step, FormatUSD(e.Requested))
	default:
		who = fmt.Sprintf("%s is needed", FormatUSD(e.Requested))
	}
	used := "spent " + FormatUSD(e.Spent)
	if !e.Reserved.IsZero() {
		used += ", reserved " + FormatUSD(e.Reserved)
	}
	return fmt.Sprintf("budget: %s but only %s of the %s cap is left (%s)", who, FormatUSD(e.Left()), FormatUSD(e.Cap), used)
}

// Is makes errors.Is(err, ErrExceeded) true.
func (e *ExceededError) Is(target error) bool { return target == ErrExceeded }

// KeyError refuses a reservation whose key is already in use: reserved and not settled, or
// already charged, or given twice in one wave. Keys name one try of one step.
type KeyError struct {
	// Key is the key refused.
	Key string
	// Reason is "is already reserved", "was already charged" or "appears twice in the wave".
	Reason string
}

// Error reads `budget: key "review" was already charged`.
func (e *KeyError) Error() string {
	return fmt.Sprintf("budget: key %q %s", e.Key, e.Reason)
}

// Is makes errors.Is(err, ErrDuplicateKey) true.
func (e *KeyError) Is(target error) bool { return target == ErrDuplicateKey }

// RaiseError refuses a new cap: the run has none to raise, or the new one is not above the
// current cap, or it is below what is already spent and reserved.
type RaiseError struct {
	// Cap is the current cap.
	Cap Cap
	// To is the cap asked for.
	To decimal.Decimal
	// Spent and Reserved are the ledger's at the time.
	Spent, Reserved decimal.Decimal
}

// Error says which rule the new cap breaks, with the amounts.
func (e *RaiseError) Error() string {
	committed := e.Spent.Add(e.Reserved)
	switch {
	case !e.Cap.Set:
		return "budget: the run has no cap to raise"
	case e.To.LessThanOrEqual(e.Cap.Amount):
		return fmt.Sprintf("budget: the new cap %s must be above the current %s cap", FormatUSD(e.To), FormatUSD(e.Cap.Amount))
	default:
		return fmt.Sprintf("budget: the new cap %s is below the %s already spent and reserved", FormatUSD(e.To), FormatUSD(committed))
	}
}

// Is makes errors.Is(err, ErrInvalidRaise) true.
func (e *RaiseError) Is(target error) bool { return target == ErrInvalidRaise }

// QuotaError refuses a new run because of a monthly quota. Without Requested (a run with
// no cap, or the spent-only check) it says the quota is used up: Spent + Reserved >= Limit.
// With Requested (the run's cap, reserved at admission) it says the run's possible cost does
// not fit: Spent + Reserved + Requested > Limit. Callers branch with errors.As, or
// errors.Is(err, ErrQuotaExhausted).
type QuotaError struct {
	// Scope is the quota's scope.
	Scope Scope `json:"scope"`
	// Month is the quota's UTC month, "2026-11".
	Month string `json:"month"`
	// Limit and Spent are the quota's at the time.
	Limit decimal.Decimal `json:"limit"`
	Spent decimal.Decimal `json:"spent"`
	// Reserved is what admitted runs that have not ended still hold (see Quota.Reserve).
	Reserved decimal.Decimal `json:"reserved"`
	// Requested is what the refused run asked to reserve; zero for a run without a cap.
	Requested decimal.Decimal `json:"requested"`
}

// Error reads, for a run whose cap does not fit, "monthly quota of workflow release: $0.45
// spent + $0.50 reserved + $0.50 for this run > $1.00 in 2026-11"; for a quota used up,
// "monthly quota of workflow release is exhausted: $50.00 of $50.00 spent in 2026-11"
// (", $0.20 reserved" after "spent" when runs hold reservations). "of all workflows" names
// AllScope.
func (e *QuotaError) Error() string {
	if e.Requested.IsPositive() {
		return fmt.Sprintf("monthly quota of %s: %s spent + %s reserved + %s for this run > %s in %s",
			e.Scope.Describe(), FormatUSD(e.Spent), FormatUSD(e.Reserved), FormatUSD(e.Requested), FormatUSD(e.Limit), e.Month)
	}
	reserved := ""
	if e.Reserved.IsPositive() {
		reserved = ", " + FormatUSD(e.Reserved) + " reserved"
	}
	return fmt.Sprintf("monthly quota of %s is exhausted: %s of %s spent%s in %s",
		e.Scope.Describe(), FormatUSD(e.Spent), FormatUSD(e.Limit), reserved, e.Month)
}

// Is makes errors.Is(err, ErrQuotaExhausted) true.
func (e *QuotaError) Is(target error) bool { return target == ErrQuotaExhausted }
