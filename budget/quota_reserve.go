package budget

import (
	"fmt"
	"slices"
	"time"

	"github.com/shopspring/decimal"
)

// DefaultReservationTTL is how long a monthly ledger keeps a run's reservation when the run
// says nothing else: a run releases what is left of its reservation when it ends, however it
// ends (completed, failed, cancelled), so the deadline only matters for a run that dies
// without ending (terminated, or stuck on a broken worker). After the deadline the ledger
// drops the reservation; the run's later charges still count as spent. A start with a delay
// adds the delay to the deadline.
const DefaultReservationTTL = 24 * time.Hour

// QuotaReservation is money a monthly quota sets aside for one admitted run until the run
// ends: the run's possible cost (its cap) at admission, less what the run has been charged
// since.
type QuotaReservation struct {
	// Amount is what the reservation still holds; charges under it move money from Amount
	// to the quota's Spent, never below zero.
	Amount decimal.Decimal `json:"amount"`
	// Expires is when the ledger drops the reservation if the run has not released it.
	Expires time.Time `json:"expires"`
}

// Committed is what admission counts against the quota: Spent + Reserved.
func (q *Quota) Committed() decimal.Decimal {
	return q.Spent.Add(q.Reserved)
}

// Admit says whether a run asking to reserve amount may start under limit, without changing
// the quota. A positive amount (the run's cap) is admitted when Spent + Reserved + amount <=
// limit (equal to the limit is allowed). A zero amount (a run without a cap, whose cost is
// unknown) is admitted while Spent + Reserved < limit, and reserves nothing: such runs are
// not bounded by admission, only refused once the month is used up. The refusal is a
// *QuotaError with both figures.
func (q *Quota) Admit(limit, amount decimal.Decimal) error {
	committed := q.Committed()
	if amount.IsPositive() {
		if committed.Add(amount).LessThanOrEqual(limit) {
			return nil
		}
	} else if committed.LessThan(limit) {
		return nil
	}
	return &QuotaError{Scope: q.Scope, Month: q.Month, Limit: limit, Spent: q.Spent, Reserved: q.Reserved,
		Requested: nonNegative(amount)}
}

// Reserve admits a run under limit (see Admit) and, for a positive amount, sets amount aside
// under key until expires. It remembers limit as the quota's Limit. A key already reserved
// is admitted again without reserving twice (a retried reservation). A negative amount or an
// empty key is an error.
func (q *Quota) Reserve(key string, amount, limit decimal.Decimal, expires time.Time) error {
	if key == "" {
		return fmt.Errorf("budget: a quota reservation needs a key")
	}
	if amount.IsNegative() {
		return fmt.Errorf("budget: quota reservation %s of %s is negative", key, amount)
	}
	if _, ok := q.Reservations[key]; ok {
		return nil
	}
	if err := q.Admit(limit, amount); err != nil {
		return err
	}
	q.Limit, q.Set = limit, true
	if !amount.IsPositive() {
		return nil
	}
	if q.Reservations == nil {
		q.Reservations = map[string]QuotaReservation{}
	}
	q.Reservations[key] = QuotaReservation{Amount: amount, Expires: expires}
	q.Reserved = q.Reserved.Add(amount)
	return nil
}

// ChargeReserved charges amount under the charge key (as Charge: a key charged before is
// not counted again) and, when it is counted, moves it out of the reservation named
// reservation: the reservation shrinks by the amount, never below zero, so Spent + Reserved
// grows only by what the run spends beyond its reservation. An unknown or empty reservation
// (released, expired, or in another month's ledger) leaves the reservations alone.
func (q *Quota) ChargeReserved(key, reservation string, amount decimal.Decimal) (added bool) {
	if !q.Charge(key, amount) {
		return false
	}
	r, ok := q.Reservations[reservation]
	if !ok || reservation == "" {
		return true
	}
	take := decimal.Min(amount, r.Amount)
	r.Amount = r.Amount.Sub(take)
	q.Reservations[reservation] = r
	q.Reserved = nonNegative(q.Reserved.Sub(take))
	return true
}

// Release drops the reservation key and returns what it still held (zero, false when there
// is no such reservation: released already, expired, or never made).
func (q *Quota) Release(key string) (decimal.Decimal, bool) {
	r, ok := q.Reservations[key]
	if !ok {
		return decimal.Zero, false
	}
	delete(q.Reservations, key)
	q.Reserved = nonNegative(q.Reserved.Sub(r.Amount))
	return r.Amount, true
}

// Expire drops every reservation whose deadline is not after now and returns their keys,
// sorted.
func (q *Quota) Expire(now time.Time) []string {
	var dropped []string
	for k, r := range q.Reservations {
		if !r.Expires.After(now) {
			dropped = append(dropped, k)
		}
	}
	slices.Sort(dropped)
	for _, k := range dropped {
		q.Release(k)
	}
	return dropped
}

// NextExpiry is the earliest deadline of the reservations, and false when there are none.
func (q *Quota) NextExpiry() (time.Time, bool) {
	var next time.Time
	for _, r := range q.Reservations {
		if next.IsZero() || r.Expires.Before(next) {
			next = r.Expires
		}
	}
	return next, !next.IsZero()
}

// ReservationKeys are the keys of the reservations held, sorted.
func (q *Quota) ReservationKeys() []string {
	keys := make([]string, 0, len(q.Reservations))
	for k := range q.Reservations {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
