package entity

import (
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/protocol"
)

// LedgerState is the monthly ledger workflow's input and state across continue-as-new.
type LedgerState struct {
	Scope budget.Scope  `json:"scope"`
	Month string        `json:"month"`
	Quota *budget.Quota `json:"quota,omitempty"`
}

// QuotaSummary is what a monthly ledger shows in its Memo (protocol.MemoQuota): the
// month's spend and what admitted runs still hold in reservations.
type QuotaSummary struct {
	Scope   budget.Scope    `json:"scope"`
	Month   string          `json:"month"`
	Spent   decimal.Decimal `json:"spent"`
	Charges int             `json:"charges"`
	// Reserved is what Reservations runs hold (see budget.Quota.Reserve).
	Reserved     decimal.Decimal `json:"reserved,omitzero"`
	Reservations int             `json:"reservations,omitempty"`
}

// ledgerMaxCharges is how many messages (charges, releases, reservations) a ledger run
// takes before it continues as new.
const ledgerMaxCharges = 1000

// ledger is one run of the ledger workflow: the quota and what the message handlers share.
type ledger struct {
	q *budget.Quota
	// msgs counts the messages this run took, for continue-as-new.
	msgs int
	// wake tells the main loop that a reservation was made (its timer may have to move).
	wake workflow.Channel
}

// ledgerWorkflow keeps one scope's spend in one month, idempotent by charge key, and the
// reservations of admitted runs: the Update LedgerReserve admits a run atomically (spent +
// reserved + its cap must fit the quota), charges draw on the run's reservation, the
// signal LedgerRelease drops it, and a timer drops reservations past their deadline. The
// state (spend, charge keys, reservations) is carried across continue-as-new.
func ledgerWorkflow(ctx workflow.Context, in LedgerState) error {
	q := in.Quota
	if q == nil {
		q = budget.NewQuota(in.Scope, in.Month)
	}
	l := &ledger{q: q, wake: workflow.NewBufferedChannel(ctx, 1)}
	if err := l.register(ctx); err != nil {
		return err
	}
	charges := workflow.GetSignalChannel(ctx, protocol.LedgerCharge)
	releases := workflow.GetSignalChannel(ctx, protocol.LedgerRelease)
	var (
		timer       workflow.Future
		timerAt     time.Time
		cancelTimer workflow.CancelFunc
	)
	for {
		if l.msgs >= ledgerMaxCharges || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			if charges.Len() == 0 && releases.Len() == 0 {
				if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
					return err
				}
				return workflow.NewContinueAsNewError(ctx, protocol.LedgerWorkflowType, LedgerState{Scope: in.Scope, Month: in.Month, Quota: q})
			}
		}
		if dropped := q.Expire(workflow.Now(ctx)); len(dropped) > 0 {
			workflow.GetLogger(ctx).Info("monthly quota reservations expired", "keys", dropped)
			if err := l.publish(ctx); err != nil {
				return err
			}
		}
		if next, ok := q.NextExpiry(); ok && (timer == nil || next.Before(timerAt)) {
			if cancelTimer != nil {
				cancelTimer()
			}
			var tctx workflow.Context
			tctx, cancelTimer = workflow.WithCancel(ctx)
			timer, timerAt = workflow.NewTimerWithOptions(tctx, next.Sub(workflow.Now(ctx)), workflow.TimerOptions{
				Summary: "drop reservations past their deadline",
			}), next
		}
		var err error
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(charges, func(ch workflow.ReceiveChannel, _ bool) {
			var c protocol.QuotaCharge
			ch.Receive(ctx, &c)
			l.msgs++
			if q.ChargeReserved(c.Key, c.Reservation, c.Amount) {
				err = l.publish(ctx)
			}
		})
		sel.AddReceive(releases, func(ch workflow.ReceiveChannel, _ bool) {
			var r protocol.QuotaRelease
			ch.Receive(ctx, &r)
			l.msgs++
			if _, ok := q.Release(r.Key); ok {
				err = l.publish(ctx)
			}
		})
		sel.AddReceive(l.wake, func(ch workflow.ReceiveChannel, _ bool) { ch.Receive(ctx, nil) })
		if timer != nil {
			sel.AddFuture(timer, func(f workflow.Future) {
				if terr := f.Get(ctx, nil); terr != nil && !temporal.IsCanceledError(terr) {
					err = terr
				}
				timer, cancelTimer = nil, nil
			})
		}
		sel.Select(ctx)
		if err != nil {
			return err
		}
	}
}

// register sets up the ledger's Update LedgerReserve and Query LedgerQuery.
func (l *ledger) register(ctx workflow.Context) error {
	if err := workflow.SetQueryHandlerWithOptions(ctx, protocol.LedgerQuery, func() (budget.Quota, error) {
		return *l.q, nil
	}, workflow.QueryHandlerOptions{Description: "The month's spend, charge keys and reservations"}); err != nil {
		return fmt.Errorf("register query %s: %w", protocol.LedgerQuery, err)
	}
	err := workflow.SetUpdateHandlerWithOptions(ctx, protocol.LedgerReserve,
		func(ctx workflow.Context, r protocol.QuotaReserve) (QuotaSummary, error) {
			ttl := r.TTL
			if ttl <= 0 {
				ttl = budget.DefaultReservationTTL
			}
			if err := l.q.Reserve(r.Key, r.Amount, r.Limit, workflow.Now(ctx).Add(ttl)); err != nil {
				return QuotaSummary{}, quotaRefusal(err)
			}
			l.msgs++
			if err := l.publish(ctx); err != nil {
				return QuotaSummary{}, err
			}
			l.wake.SendAsync(true)
			return l.summary(), nil
		},
		workflow.UpdateHandlerOptions{
			// The validator refuses without a trace in history; the handler checks again,
			// in the same workflow task, so two admissions never both take the last room.
			Validator: func(ctx workflow.Context, r protocol.QuotaReserve) error {
				if r.Key == "" || r.Amount.IsNegative() {
					return fmt.Errorf("a reservation needs a key and an amount not below zero, got %q and %s", r.Key, r.Amount)
				}
				if _, ok := l.q.Reservations[r.Key]; ok {
					return nil
				}
				return quotaRefusal(l.q.Admit(r.Limit, r.Amount))
			},
			Description: "Admit a run under the monthly quota and reserve its possible cost. Payload: " +
				`{"key": "run#id", "amount": "0.50", "limit": "10.00", "ttl": 86400000000000}; refused when spent + reserved + amount > limit.`,
		})
	if err != nil {
		return fmt.Errorf("register update %s: %w", protocol.LedgerReserve, err)
	}
	return nil
}

// summary is the ledger's QuotaSummary.
func (l *ledger) summary() QuotaSummary {
	return QuotaSummary{Scope: l.q.Scope, Month: l.q.Month, Spent: l.q.Spent, Charges: len(l.q.Charges),
		Reserved: l.q.Reserved, Reservations: len(l.q.Reservations)}
}

// publish keeps the summary in the Memo, where clients read it.
func (l *ledger) publish(ctx workflow.Context) error {
	if err := workflow.UpsertMemo(ctx, map[string]any{protocol.MemoQuota: l.summary()}); err != nil {
		return fmt.Errorf("keep the monthly ledger's summary in memo: %w", err)
	}
	return nil
}

// quotaRefusal turns a *budget.QuotaError into a non-retryable application error of type
// protocol.ErrorQuotaExhausted carrying it as details, so a client can read it back
// (AsQuotaError); nil stays nil and other errors pass through.
func quotaRefusal(err error) error {
	var qe *budget.QuotaError
	if errors.As(err, &qe) {
		return temporal.NewApplicationErrorWithOptions(qe.Error(), protocol.ErrorQuotaExhausted,
			temporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{*qe}})
	}
	return err
}
