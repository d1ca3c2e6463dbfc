package budget

import (
	"fmt"
	"slices"
	"time"

	"github.com/shopspring/decimal"
)

// Ledger is one run's money account against its cap. It lives in workflow state and is
// plain JSON (amounts as decimal strings); every list in it is kept in the order things
// happened, so replays build the same ledger. The zero Ledger has no cap and no warning
// thresholds; NewLedger is the usual way to make one.
//
// Invariants kept by the methods: Reserved is the sum of Reservations; Spent is the sum of
// Charges; no key is both reserved and charged, and no key is charged twice.
type Ledger struct {
	// Cap is the run's cap.
	Cap Cap `json:"cap"`
	// Spent is the sum of every charge.
	Spent decimal.Decimal `json:"spent"`
	// Reserved is the sum of the open reservations.
	Reserved decimal.Decimal `json:"reserved"`
	// Reservations are the open reservations, in the order they were made.
	Reservations []Reservation `json:"reservations,omitempty"`
	// Charges has one entry per charged step, in order.
	Charges []Charge `json:"charges,omitempty"`
	// Warnings are the thresholds crossed, in order.
	Warnings []Warning `json:"warnings,omitempty"`
	// Thresholds are the fractions of the cap that raise a warning, ascending (default
	// [0.8]). Empty means no warnings.
	Thresholds []decimal.Decimal `json:"thresholds,omitempty"`
	// Ignored lists the charges that changed nothing (a key charged twice, a negative
	// cost, a settlement without a reservation), so they show in the run state.
	Ignored []Ignored `json:"ignored,omitempty"`
}

// Reservation is money set aside for a step while it runs: its own limit.
type Reservation struct {
	// Key names one try of one step; it becomes the Charge's key.
	Key string `json:"key"`
	// Amount is the step's limit.
	Amount decimal.Decimal `json:"amount"`
}

// Item is one step of a parallel wave, for ReserveAll.
type Item struct {
	// Key names the step's try, as for Reserve.
	Key string
	// Amount is the step's limit.
	Amount decimal.Decimal
}

// Charge is one cost charged to the run.
type Charge struct {
	// Key is the idempotency key (the reservation's key for a settled step).
	Key string `json:"key"`
	// Step is the step's name, for people.
	Step string `json:"step,omitempty"`
	// Amount is what the step cost.
	Amount decimal.Decimal `json:"amount"`
	// Limit is what was reserved for it; zero when nothing was (no declared limit).
	Limit decimal.Decimal `json:"limit"`
	// Overshoot is Amount - Limit when a step with a limit cost more; zero otherwise.
	Overshoot decimal.Decimal `json:"overshoot"`
	// At is when it was charged (UTC).
	At time.Time `json:"at"`
}

// Warning records a threshold of the cap crossed by the spend.
type Warning struct {
	// Threshold is the fraction of the cap (0.8 for 80%).
	Threshold decimal.Decimal `json:"threshold"`
	// Spent is the spend right after the charge that crossed it.
	Spent decimal.Decimal `json:"spent"`
	// Cap is the cap it was measured against.
	Cap decimal.Decimal `json:"cap"`
	// At is when the charge was made (UTC).
	At time.Time `json:"at"`
}

// String reads "budget: 80% of the $2.00 cap reached (spent $1.62)".
func (w Warning) String() string {
	return fmt.Sprintf("budget: %s%% of the %s cap reached (spent %s)",
		w.Threshold.Mul(decimal.NewFromInt(100)).String(), FormatUSD(w.Cap), FormatUSD(w.Spent))
}

// IgnoreReason says why a charge changed nothing.
type IgnoreReason string

const (
	// IgnoredDuplicate is a charge whose key was already charged.
	IgnoredDuplicate IgnoreReason = "duplicate key"
	// IgnoredNegative is a negative cost; costs are never refunded.
	IgnoredNegative IgnoreReason = "negative amount"
	// IgnoredNoReservation is Settle called with a nil reservation.
	IgnoredNoReservation IgnoreReason = "no reservation"
)

// Ignored is a charge that changed nothing, kept so it can be seen and reported.
type Ignored struct {
	// Key, Step and Amount are the charge's.
	Key    string          `json:"key"`
	Step   string          `json:"step,omitempty"`
	Amount decimal.Decimal `json:"amount"`
	// Reason says why it was ignored.
	Reason IgnoreReason `json:"reason"`
	// At is when it was attempted (UTC).
	At time.Time `json:"at"`
}

// DefaultThresholds are the warning thresholds of a ledger made without any: [0.8].
func DefaultThresholds() []decimal.Decimal {
	return []decimal.Decimal{decimal.New(8, -1)}
}

// NewLedger opens a run's ledger with its cap. Thresholds replace DefaultThresholds; they
// are sorted, duplicates are dropped and so are values outside (0, 1]. Set Thresholds to nil
// afterwards for no warnings. A negative cap counts as zero.
func NewLedger(c Cap, thresholds ...decimal.Decimal) *Ledger {
	if len(thresholds) == 0 {
		thresholds = DefaultThresholds()
	}
	var kept []decimal.Decimal
	for _, t := range thresholds {
		if t.IsPositive() && t.LessThanOrEqual(decimal.NewFromInt(1)) {
			kept = append(kept, t)
		}
	}
	slices.SortFunc(kept, decimal.Decimal.Cmp)
	kept = slices.CompactFunc(kept, decimal.Decimal.Equal)
	if c.Set {
		c.Amount = nonNegative(c.Amount)
	} else {
		c = NoCap()
	}
	return &Ledger{Cap: c, Thresholds: kept}
}

// CanReserve says whether amount could be reserved now: nil, or an *ExceededError when
// Spent + Reserved + amount would be above the cap (equal is allowed), or an *AmountError
// for a negative amount. Without a cap it is never refused.
func (l *Ledger) CanReserve(amount decimal.Decimal) error {
	if amount.IsNegative() {
		return negativeAmount(amount)
	}
	if e := l.refusal(amount); e != nil {
		return e
	}
	return nil
}

// refusal is the *ExceededError for reserving amount now, or nil when it fits.
func (l *Ledger) refusal(amount decimal.Decimal) *ExceededError {
	if !l.Cap.Set || l.Spent.Add(l.Reserved).Add(amount).LessThanOrEqual(l.Cap.Amount) {
		return nil
	}
	return &ExceededError{Cap: l.Cap.Amount, Spent: l.Spent, Reserved: l.Reserved, Requested: amount}
}

// Reserve sets a step's limit aside before it is dispatched and returns the reservation to
// Settle or Release afterwards. It refuses, changing nothing: a negative amount
// (*AmountError), a key already reserved or already charged (*KeyError), and an amount the
// cap does not allow (*ExceededError naming the key as the step). A zero amount (a step
// without a declared limit) is allowed unless Spent + Reserved is already above the cap.
func (l *Ledger) Reserve(key string, amount decimal.Decimal) (*Reservation, error) {
	if err := l.checkKey(key); err != nil {
		return nil, err
	}
	if amount.IsNegative() {
		return nil, negativeAmount(amount)
	}
	if e := l.refusal(amount); e != nil {
		e.Step = key
		return nil, e
	}
	r := Reservation{Key: key, Amount: amount}
	l.Reservations = append(l.Reservations, r)
	l.Reserved = l.Reserved.Add(amount)
	return &r, nil
}

// ReserveAll reserves the limits of a parallel wave, all or nothing: if any item is refused
// nothing is reserved. The cap is checked against the items' total, and an *ExceededError
// names every step and the total they need together. Keys must be distinct and unused.
// Look the reservations up with Reservation(key) to settle them.
func (l *Ledger) ReserveAll(items []Item) error {
	total := decimal.Zero
	keys := make([]string, 0, len(items))
	for i, it := range items {
		if err := l.checkKey(it.Key); err != nil {
			return err
		}
		if slices.ContainsFunc(items[:i], func(o Item) bool { return o.Key == it.Key }) {
			return &KeyError{Key: it.Key, Reason: "appears twice in the wave"}
		}
		if it.Amount.IsNegative() {
			return negativeAmount(it.Amount)
		}
		total = total.Add(it.Amount)
		keys = append(keys, it.Key)
	}
	if len(items) == 0 {
		return nil
	}
	if e := l.refusal(total); e != nil {
		if len(keys) == 1 {
			e.Step = keys[0]
		} else {
			e.Steps = keys
		}
		return e
	}
	for _, it := range items {
		l.Reservations = append(l.Reservations, Reservation{Key: it.Key, Amount: it.Amount})
	}
	l.Reserved = l.Reserved.Add(total)
	return nil
}

// Reservation returns a copy of the open reservation with this key.
func (l *Ledger) Reservation(key string) (*Reservation, bool) {
	i := l.reservationIndex(key)
	if i < 0 {
		return nil, false
	}
	r := l.Reservations[i]
	return &r, true
}

// Settle closes a step's reservation and charges what it really cost, which may be more
// than the limit (the Charge records the overshoot). It returns the warning thresholds this
// charge crossed and, when the spend is now strictly above the cap, an *ExceededError
// (AfterCharge set); a nil *ExceededError means within the cap, so compare it with nil
// before turning it into an error.
//
// A key already charged changes nothing and is listed in Ignored; so is a negative cost
// (the reservation is still released) and a nil reservation. A reservation no longer open
// (released, or from another ledger) is still charged: the money was spent.
func (l *Ledger) Settle(r *Reservation, actual decimal.Decimal, step string, now time.Time) (crossed []Warning, exceeded *ExceededError) {
	if r == nil {
		l.ignore("", step, actual, IgnoredNoReservation, now)
		return nil, nil
	}
	return l.chargeKey(r.Key, step, actual, r.Amount, now)
}

// Release closes a reservation without a charge: the step did not run, or failed without
// a cost. A reservation that is not open is ignored.
func (l *Ledger) Release(r *Reservation) {
	if r == nil {
		return
	}
	if i := l.reservationIndex(r.Key); i >= 0 {
		l.release(i)
	}
}

// Charge records a cost that had no reservation of its own: a child's rolled-up spend, a
// failed call's partial cost. It is idempotent by key: a key already charged changes
// nothing and is listed in Ignored (as is a negative amount). If a reservation with the key
// is open, Charge settles it (the reservation is the limit). Results are as for Settle.
func (l *Ledger) Charge(key, step string, amount decimal.Decimal, now time.Time) (crossed []Warning, exceeded *ExceededError) {
	return l.chargeKey(key, step, amount, decimal.Zero, now)
}

// HasCharge says whether a charge with this key was recorded.
func (l *Ledger) HasCharge(key string) bool {
	return slices.ContainsFunc(l.Charges, func(c Charge) bool { return c.Key == key })
}

// Remaining is what the cap still allows, Cap - Spent - Reserved, never below zero; false
// when the run has no cap.
func (l *Ledger) Remaining() (decimal.Decimal, bool) {
	if !l.Cap.Set {
		return decimal.Zero, false
	}
	return nonNegative(l.Cap.Amount.Sub(l.Spent).Sub(l.Reserved)), true
}

// Over says whether the spend is strictly above the cap (never without a cap).
func (l *Ledger) Over() bool {
	return l.Cap.Set && l.Spent.GreaterThan(l.Cap.Amount)
}

// ChildCap is the cap for a child run started now: what is left of this run's cap
// (Source parent), or no cap when this run has none. Reserve it under the child's key and
// settle with the child's spend, so parallel work cannot hand the same money out twice.
func (l *Ledger) ChildCap() Cap {
	left, ok := l.Remaining()
	if !ok {
		return NoCap()
	}
	return Cap{Amount: left, Set: true, Source: SourceParent}
}

// Raise sets a higher cap, for a run paused on its budget. The new cap must be strictly
// above the current one and at least Spent + Reserved (equal is allowed); otherwise, or
// when the run has no cap, it returns a *RaiseError and changes nothing. The cap's Source
// becomes SourceRaise, and the warning thresholds apply afresh to the new cap (from the
// next charge).
func (l *Ledger) Raise(to decimal.Decimal) error {
	if !l.Cap.Set || to.LessThanOrEqual(l.Cap.Amount) || to.LessThan(l.Spent.Add(l.Reserved)) {
		return &RaiseError{Cap: l.Cap, To: to, Spent: l.Spent, Reserved: l.Reserved}
	}
	l.Cap = Cap{Amount: to, Set: true, Source: SourceRaise}
	return nil
}

func (l *Ledger) chargeKey(key, step string, amount, limit decimal.Decimal, now time.Time) ([]Warning, *ExceededError) {
	if l.HasCharge(key) {
		l.ignore(key, step, amount, IgnoredDuplicate, now)
		return nil, nil
	}
	if i := l.reservationIndex(key); i >= 0 {
		limit = l.Reservations[i].Amount
		l.release(i)
	}
	if amount.IsNegative() {
		l.ignore(key, step, amount, IgnoredNegative, now)
		return nil, nil
	}
	overshoot := decimal.Zero
	if limit.IsPositive() && amount.GreaterThan(limit) {
		overshoot = amount.Sub(limit)
	}
	l.Spent = l.Spent.Add(amount)
	l.Charges = append(l.Charges, Charge{Key: key, Step: step, Amount: amount, Limit: limit, Overshoot: overshoot, At: now.UTC()})
	crossed := l.cross(now)
	if !l.Over() {
		return crossed, nil
	}
	return crossed, &ExceededError{
		Cap: l.Cap.Amount, Spent: l.Spent, Reserved: l.Reserved, Requested: amount, Step: step, AfterCharge: true,
	}
}

// cross records and returns the thresholds the spend has now reached for the first time
// against the current cap, lowest first. Nothing is crossed without a cap or any spend.
func (l *Ledger) cross(now time.Time) []Warning {
	if !l.Cap.Set || !l.Spent.IsPositive() {
		return nil
	}
	var crossed []Warning
	for _, t := range l.Thresholds {
		if l.Spent.LessThan(t.Mul(l.Cap.Amount)) || l.warned(t) {
			continue
		}
		w := Warning{Threshold: t, Spent: l.Spent, Cap: l.Cap.Amount, At: now.UTC()}
		l.Warnings = append(l.Warnings, w)
		crossed = append(crossed, w)
	}
	return crossed
}

func (l *Ledger) warned(t decimal.Decimal) bool {
	return slices.ContainsFunc(l.Warnings, func(w Warning) bool {
		return w.Threshold.Equal(t) && w.Cap.Equal(l.Cap.Amount)
	})
}

func (l *Ledger) checkKey(key string) error {
	if l.reservationIndex(key) >= 0 {
		return &KeyError{Key: key, Reason: "is already reserved"}
	}
	if l.HasCharge(key) {
		return &KeyError{Key: key, Reason: "was already charged"}
	}
	return nil
}

func (l *Ledger) reservationIndex(key string) int {
	return slices.IndexFunc(l.Reservations, func(r Reservation) bool { return r.Key == key })
}

func (l *Ledger) release(i int) {
	l.Reserved = l.Reserved.Sub(l.Reservations[i].Amount)
	l.Reservations = slices.Delete(l.Reservations, i, i+1)
	if len(l.Reservations) == 0 {
		l.Reservations = nil
	}
}

func (l *Ledger) ignore(key, step string, amount decimal.Decimal, reason IgnoreReason, now time.Time) {
	l.Ignored = append(l.Ignored, Ignored{Key: key, Step: step, Amount: amount, Reason: reason, At: now.UTC()})
}

func negativeAmount(d decimal.Decimal) *AmountError {
	return &AmountError{Value: d.String(), Reason: "is negative"}
}
