package flowclient

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/entity"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/startplan"
)

// quotaHold is what a start reserved against the monthly quotas before it started the run:
// released again when the start is refused after all, else handed to the run (RunOptions),
// which draws its charges from it and releases the rest when it ends.
type quotaHold struct {
	req    protocol.QuotaReserve
	scopes []budget.Scope
}

// startCap is the cap the run of plan p will have (the start option, then the flow's
// default, then the worker's, see budget.ResolveCap): what its admission reserves. Zero when
// the run has no cap.
func startCap(info core.WorkflowInfo, p *startplan.Plan) decimal.Decimal {
	parse := func(s string) *decimal.Decimal {
		if s == "" {
			return nil
		}
		d, err := budget.ParseUSD(s)
		if err != nil {
			return nil
		}
		return &d
	}
	c := budget.ResolveCap(parse(p.RunOpts.MaxCostUSD), parse(info.MaxCostUSD), parse(info.WorkerMaxCostUSD))
	if !c.Set {
		return decimal.Zero
	}
	return c.Amount
}

// reservationKey names one start's reservation: the run's ID and a random request ID, so
// two starts of one ID (one refused as a duplicate) never share a reservation.
func reservationKey(runID string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return runID + "#" + hex.EncodeToString(b[:])
}

// reserveQuotas admits the planned run under the monthly quotas of the catalog's workers
// and reserves its cap in each ledger with a quota (overall and the workflow's): atomically
// per ledger, so concurrent starts cannot take a month over its quota. A run without a cap
// is admitted while spent + reserved is below each quota and reserves nothing. The refusal
// is a *budget.QuotaError with the ledger's figures; nil, nil when no quota applies. Against
// workers that predate reservations (core.WorkflowInfo.QuotaReservations unset) it only checks
// that spent has not reached the quotas, as those workers did.
//
// The reservation's deadline is budget.DefaultReservationTTL after the run's start time
// (its delay included): the run releases it when it ends, the deadline only covers a run
// that never ends.
func (c *Client) reserveQuotas(ctx context.Context, cat *core.Catalog, p *startplan.Plan) (*quotaHold, error) {
	q := quotas(cat)
	_, all := q.LimitFor(budget.AllScope)
	_, own := q.LimitFor(budget.WorkflowScope(p.Name))
	if !all && !own {
		return nil, nil
	}
	info, _ := cat.Lookup(p.Name)
	if !info.QuotaReservations {
		// Workers from before reservations: their ledgers only know charges.
		return nil, entity.CheckQuotas(ctx, c.tc, c.opts.TaskQueue, q.LimitFor, p.Name, p.Now)
	}
	h := &quotaHold{req: protocol.QuotaReserve{
		Key:      reservationKey(p.ID),
		Workflow: p.Name,
		Month:    budget.MonthOf(p.Now),
		Amount:   startCap(info, p),
		TTL:      budget.DefaultReservationTTL + p.Workflow.StartDelay,
	}}
	scopes, err := entity.ReserveQuotas(ctx, c.tc, c.opts.TaskQueue, q.LimitFor, h.req)
	if err != nil {
		if _, ok := entity.AsQuotaError(err); ok {
			return nil, err
		}
		return nil, fmt.Errorf("start %s: %w", p.Name, err)
	}
	h.scopes = scopes
	if h.req.Amount.IsPositive() && len(scopes) > 0 {
		p.RunOpts.Reservation = &protocol.RunReservation{Key: h.req.Key, Month: h.req.Month, Amount: h.req.Amount}
	}
	return h, nil
}

// release gives back a reservation whose run did not start (the start was refused after
// the admission). It uses a context of its own: the caller's may be what failed. Its error
// says the reservation stays until the ledger drops it at its deadline; the start joins it
// to its own error.
func (h *quotaHold) release(ctx context.Context, c *Client) error {
	if h == nil || len(h.scopes) == 0 || !h.req.Amount.IsPositive() {
		return nil
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := entity.ReleaseQuotas(rctx, c.tc, c.opts.TaskQueue,
		protocol.QuotaRelease{Key: h.req.Key, Workflow: h.req.Workflow, Month: h.req.Month}, h.scopes...); err != nil {
		return fmt.Errorf("release the monthly quota reservation %s (it expires at its deadline): %w", h.req.Key, err)
	}
	return nil
}
