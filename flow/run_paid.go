package flow

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/events"
	"github.com/gateflow/gateflow/internal/backoff"
	"github.com/shopspring/decimal"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Cost-bearing steps (agents, decisions, any step with a CostLimit) are retried by the run
// itself, one activity attempt at a time: Temporal's own retries would pay for every
// attempt but report only the last one's cost. Each attempt's cost and tokens are charged
// to the step, the run and the month as soon as it ends, the money for the next attempt
// is reserved again (so an attempt the cap cannot pay for is not made), and the backoff
// between attempts is a durable timer with deterministic jitter. A provider's rate limit
// (429 with Retry-After) is waited out in waiting_capacity without using an attempt, for
// at most the step's timeout.

// paidAttemptsChange is the workflow.GetVersion change of cost-bearing steps retried by
// the run: runs that recorded a step before it keep Temporal's retries on replay.
const paidAttemptsChange = "gateflow.paid-attempts"

// unconfirmedChange is the workflow.GetVersion change that charges an attempt lost in
// flight its reservation (unconfirmedCost); runs that lost one before it keep charging
// nothing on replay.
const unconfirmedChange = "gateflow.unconfirmed-cost"

// lostInFlight reports whether a failed attempt's cost is unknown: it timed out (its
// worker was lost, or it ran past its timeout) without reporting one, while the provider
// may have billed it.
func lostInFlight(err error) bool {
	var te *temporal.TimeoutError
	return errors.As(err, &te) && !failureInfo(err).cost.IsPositive()
}

// unconfirmedCost is what a failed attempt of a cost-bearing step is charged: what it
// reported, or, for an attempt lost in flight that had money reserved, that whole
// reservation (unconfirmed is then true), so the run's spend is never below what the
// provider could have billed.
func (c *Context) unconfirmedCost(p *pending, resKey string, err error, reported decimal.Decimal) (cost decimal.Decimal, unconfirmed bool) {
	if !p.raw || !p.call.reserved || !lostInFlight(err) {
		return reported, false
	}
	r, ok := c.run.budget.ledger.Reservation(resKey)
	if !ok || !r.Amount.IsPositive() {
		return reported, false
	}
	if workflow.GetVersion(c.wctx, unconfirmedChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return reported, false
	}
	return r.Amount, true
}

// workerLossChange is the workflow.GetVersion change that makes a cost-bearing step's
// attempt again when its worker was lost, without using up one of its attempts.
const workerLossChange = "gateflow.worker-loss"

// maxWorkerLosses bounds how often one attempt of a step is made again because its worker
// was lost; past it a lost worker counts as a failed attempt.
const maxWorkerLosses = 10

// workerLost reports whether an attempt ended because its worker stopped heartbeating: the
// worker died, was killed or was cut off, not the step failing.
func workerLost(err error) bool {
	var te *temporal.TimeoutError
	return errors.As(err, &te) && te.TimeoutType() == enumspb.TIMEOUT_TYPE_HEARTBEAT
}

// chargeLostTry charges the try of attempt lost with its worker (the loss-th of that
// attempt) its whole reservation, unconfirmed, under a key of its own, and reserves again
// for the attempt's next try.
func (c *Context) chargeLostTry(p *pending, attempt, loss int, err error, waited time.Duration) error {
	st := c.run.state
	i := p.idx
	baseKey := st.Steps[i].ActivityID
	if p.call.reserveKey != "" {
		baseKey = p.call.reserveKey
	}
	resKey := paidActivityID(baseKey, attempt)
	lost := fmt.Sprintf("/lost-%d", loss)
	cost := decimal.Zero
	if r, ok := c.run.budget.ledger.Reservation(resKey); ok && p.call.reserved {
		cost = r.Amount
		c.run.budget.ledger.Release(r)
	}
	p.call.reserved = false
	chargeStep(st, i, cost, runs.Tokens{})
	chargeUnconfirmed(st, i, cost)
	st.Steps[i].Attempts = append(st.Steps[i].Attempts, runs.Attempt{Attempt: attempt, CostUSD: cost,
		Error: "worker lost, made again: " + errorMessage(err), WaitedMS: waited.Milliseconds(), Unconfirmed: true})
	c.chargeQuota(paidActivityID(st.Steps[i].ActivityID, attempt)+lost, cost)
	if berr := c.settleCost(resKey+lost, p.call.name, false, cost); berr != nil {
		p.notMade = true
		return fmt.Errorf("attempt %d not made again after its worker was lost: %w", attempt, berr)
	}
	c.run.publish()
	if p.call.costLimit != nil {
		if rerr := c.reserve([]budget.Item{{Key: resKey, Amount: *p.call.costLimit}}); rerr != nil {
			p.notMade = true
			return fmt.Errorf("attempt %d not made again after its worker was lost: %w", attempt, rerr)
		}
		p.call.reserved = true
	}
	return nil
}

// chargeUnconfirmed records the unconfirmed part of a step's cost.
func chargeUnconfirmed(st *runs.State, i int, cost decimal.Decimal) {
	st.Steps[i].UnconfirmedUSD = st.Steps[i].UnconfirmedUSD.Add(cost)
}

// paidActivityID is the activity ID of the n-th activity (1 for the first) a cost-bearing
// step schedules: its step's ID, then ID@2, ID@3 ... for retries and capacity waits.
func paidActivityID(id string, n int) string {
	if n <= 1 {
		return id
	}
	return fmt.Sprintf("%s@%d", id, n)
}

// dispatchPaid schedules a cost-bearing step's attempts in a coroutine of the run and
// returns the future of its last attempt's raw result; ok is false for runs recorded
// before paid attempts existed, which dispatch as before.
func (c *Context) dispatchPaid(p *pending, ao workflow.ActivityOptions) bool {
	if workflow.GetVersion(c.wctx, paidAttemptsChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return false
	}
	fut, set := workflow.NewFuture(c.wctx)
	p.fut, p.raw = fut, true
	workflow.Go(c.wctx, func(gctx workflow.Context) {
		var raw json.RawMessage
		// Blocking calls in this coroutine need its own context.
		err := c.withWorkflow(gctx).paidAttempts(gctx, p, ao, &raw)
		set.Set(raw, err)
	})
	return true
}

// get waits for the step's activity (or, for a cost-bearing step, its last attempt) and
// decodes its result into result.
func (p *pending) get(ctx workflow.Context, result any) error {
	if !p.raw {
		return p.fut.Get(ctx, result)
	}
	var raw json.RawMessage
	if err := p.fut.Get(ctx, &raw); err != nil {
		return err
	}
	if len(raw) == 0 || result == nil {
		return nil
	}
	if err := json.Unmarshal(raw, result); err != nil {
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("decode the result of step %s: %v", p.call.name, err), string(ErrorInvalidStep), err)
	}
	return nil
}

// paidAttempts runs the attempts of a cost-bearing step and returns the last one's result
// or error. Every attempt but the last is charged here; the last is charged by record,
// like any step's outcome. An attempt the cap cannot pay for is not made: the step then
// fails with the *budget.ExceededError (and the run ends budget_exceeded unless the cap
// is raised while it is paused).
func (c *Context) paidAttempts(ctx workflow.Context, p *pending, ao workflow.ActivityOptions, raw *json.RawMessage) error {
	id := ao.ActivityID
	policy := ao.RetryPolicy
	if policy == nil {
		policy = &temporal.RetryPolicy{MaximumAttempts: DefaultStepAttempts}
	}
	ao.RetryPolicy = &temporal.RetryPolicy{MaximumAttempts: 1}
	pa := &paidTries{id: id, ao: ao, base: ao, policy: policy, capacity: stepTimeout(p.call.opts),
		// Seeded as the worker seeds Temporal's own retries (worker_jitter.go): run and step.
		seed: workflow.GetInfo(ctx).WorkflowExecution.ID + "/" + id}
	losses := 0
	for attempt := 1; ; attempt++ {
		p.attempt = attempt
		err, attemptWait, stop := c.paidTry(ctx, p, pa, raw)
		if stop != nil {
			return stop
		}
		if workerLost(err) && losses < maxWorkerLosses && workflow.GetVersion(ctx, workerLossChange, workflow.DefaultVersion, 1) == 1 {
			losses++
			if lerr := c.chargeLostTry(p, attempt, losses, err, attemptWait); lerr != nil {
				return lerr
			}
			attempt-- // made again: a lost worker does not use up one of the step's attempts
			continue
		}
		p.waited = attemptWait
		if err == nil || !retryablePaid(err, policy) || (policy.MaximumAttempts > 0 && attempt >= int(policy.MaximumAttempts)) {
			return err
		}
		baseKey, cerr := c.chargeFailedTry(p, attempt, err, attemptWait)
		if cerr != nil {
			return cerr
		}
		if nerr := c.nextPaidTry(ctx, p, pa, attempt, err, baseKey); nerr != nil {
			return nerr
		}
	}
}

// paidTries is what the attempts of a cost-bearing step share: the step's activity ID,
// the options of the next try and those each try's timeouts come from (base, cut to the
// wall time left by clipAttempt), the step's retry policy, how long it may wait for
// provider capacity, the retry jitter's seed, and how many tries and waits it made.
type paidTries struct {
	id       string
	ao, base workflow.ActivityOptions
	policy   *temporal.RetryPolicy
	capacity time.Duration
	seed     string
	n        int
	waited   time.Duration
}

// paidTry makes one attempt of the cost-bearing step p, trying again while the provider
// is rate limiting; it returns the attempt's error and how long it waited for capacity.
// stop is why the step ends before the attempt could be made.
func (c *Context) paidTry(ctx workflow.Context, p *pending, pa *paidTries, raw *json.RawMessage) (err error, wait time.Duration, stop error) {
	for {
		pa.n++
		pa.ao.ActivityID = paidActivityID(pa.id, pa.n)
		if pa.n > 1 {
			if werr := c.clipAttempt(ctx, p, &pa.ao, pa.base); werr != nil {
				return nil, wait, werr
			}
		}
		*raw = nil
		err = workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, pa.ao), p.call.activity, p.call.args...).Get(ctx, raw)
		delay, limited := rateLimited(err)
		if !limited {
			return err, wait, nil
		}
		if pa.waited+delay > pa.capacity {
			var app *temporal.ApplicationError
			errors.As(err, &app)
			return nil, wait, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
				"the provider is still rate limiting after %s of waiting (the step timeout is %s): %s",
				pa.waited, pa.capacity, app.Message()), app.Type(), err)
		}
		if werr := c.waitForCapacity(ctx, p.idx, delay); werr != nil {
			return nil, wait, werr
		}
		pa.waited += delay
		wait += delay
	}
}

// chargeFailedTry charges the failed attempt (err) of the step p, after which another
// one may be made, and settles its reservation; it returns the step's reservation key.
func (c *Context) chargeFailedTry(p *pending, attempt int, err error, wait time.Duration) (string, error) {
	st, i := c.run.state, p.idx
	fi := failureInfo(err)
	baseKey := st.Steps[i].ActivityID
	if p.call.reserveKey != "" {
		baseKey = p.call.reserveKey
	}
	resKey := paidActivityID(baseKey, attempt)
	cost, unconfirmed := c.unconfirmedCost(p, resKey, err, fi.cost)
	chargeStep(st, i, cost, fi.tokens)
	if unconfirmed {
		chargeUnconfirmed(st, i, cost)
	}
	st.Steps[i].Attempts = append(st.Steps[i].Attempts, runs.Attempt{Attempt: attempt, CostUSD: cost,
		Tokens: fi.tokens, Error: errorMessage(err), WaitedMS: wait.Milliseconds(), Unconfirmed: unconfirmed})
	c.chargeQuota(paidActivityID(st.Steps[i].ActivityID, attempt), cost)
	if berr := c.settleCost(resKey, p.call.name, p.call.reserved, cost); berr != nil {
		p.call.reserved, p.notMade = false, true
		return baseKey, fmt.Errorf("attempt %d not made: %w", attempt+1, berr)
	}
	p.call.reserved = false
	return baseKey, nil
}

// nextPaidTry waits the retry delay after the failed attempt (err) of the step p and
// reserves the next attempt's money.
func (c *Context) nextPaidTry(ctx workflow.Context, p *pending, pa *paidTries, attempt int, err error, baseKey string) error {
	c.run.publish()
	bo := backoff.Policy{InitialInterval: pa.policy.InitialInterval, BackoffCoefficient: pa.policy.BackoffCoefficient,
		MaximumInterval: pa.policy.MaximumInterval}
	delay := bo.Next(pa.seed, attempt+1)
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.NextRetryDelay() > 0 {
		delay = app.NextRetryDelay()
	}
	c.run.emit(ctx, events.StepRetrying, p.call.name, string(runs.StepRunning), errorMessage(err), retryData(attempt, delay)) // run_events_retry.go
	if serr := workflow.NewTimerWithOptions(ctx, delay, workflow.TimerOptions{
		Summary: fmt.Sprintf("%s: attempt %d in %s", p.call.name, attempt+1, delay.Round(time.Millisecond)),
	}).Get(ctx, nil); serr != nil {
		return serr
	}
	if p.call.costLimit != nil {
		if rerr := c.reserve([]budget.Item{{Key: paidActivityID(baseKey, attempt+1), Amount: *p.call.costLimit}}); rerr != nil {
			p.notMade = true
			return fmt.Errorf("attempt %d not made: %w", attempt+1, rerr)
		}
		p.call.reserved = true
	}
	return nil
}

// paidWallTimeChange is the workflow.GetVersion change that stops a cost-bearing step's
// retries when the run's wall time is used up; runs that made an attempt past it before
// keep doing so on replay. The version is asked only when an attempt would be refused, so
// other runs record no marker.
const paidWallTimeChange = "gateflow.paid-wall-time"

// clipAttempt sets the timeouts of a cost-bearing step's next attempt (a retry, or the
// same attempt again after a capacity wait) to the step's (base), cut to the run's wall
// time left; when none is left it returns the wall-time *GuardError naming the step, and
// the attempt is not made. Cleanup steps (OnError, Always) are not limited, as at dispatch.
func (c *Context) clipAttempt(ctx workflow.Context, p *pending, ao *workflow.ActivityOptions, base workflow.ActivityOptions) error {
	if p.call.onError {
		return nil
	}
	now := runNow(ctx)
	left, limited := c.run.wallTimeLeft(now)
	startToClose, ok := attemptTimeout(base.StartToCloseTimeout, left, limited)
	if !ok {
		if workflow.GetVersion(ctx, paidWallTimeChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
			return nil // recorded before the change: the attempt was made with the step's timeouts
		}
		p.notMade = true
		return fmt.Errorf("attempt %d not made: %w", p.attempt, c.run.setup.guards.checkWallTime(p.call.name, c.run.state.StartedAt, now))
	}
	scheduleToClose, _ := attemptTimeout(base.ScheduleToCloseTimeout, left, limited)
	ao.StartToCloseTimeout, ao.ScheduleToCloseTimeout = startToClose, scheduleToClose
	return nil
}

// waitForCapacity waits, durably, for a rate-limited provider: the step is
// waiting_capacity and the run waits for capacity:STEP until the delay has passed.
func (c *Context) waitForCapacity(ctx workflow.Context, i int, delay time.Duration) error {
	st := c.run.state
	w := runs.Wait{Kind: runs.ForCapacity, Name: st.Steps[i].Label()}
	st.Steps[i].Status = runs.StepWaitingCapacity
	c.wait(w)
	err := workflow.NewTimerWithOptions(ctx, delay, workflow.TimerOptions{
		Summary: fmt.Sprintf("%s: rate limited, waiting %s", st.Steps[i].Name, delay.Round(time.Millisecond)),
	}).Get(ctx, nil)
	st.Steps[i].Status = runs.StepRunning
	c.unwait(w)
	return err
}

// rateLimited reports whether err is a provider's rate limit (an agent's 429 or 529, an
// HTTP step's 429) and how long the provider asked to wait.
func rateLimited(err error) (time.Duration, bool) {
	var app *temporal.ApplicationError
	if !errors.As(err, &app) {
		return 0, false
	}
	switch {
	case app.Type() == activities.AgentRateLimitedErrorType:
	case app.Type() == activities.HTTPStatusErrorType && failureInfo(err).httpStatus == 429:
	default:
		return 0, false
	}
	d := app.NextRetryDelay()
	if d <= 0 {
		d = activities.DefaultAgentRetryAfter
	}
	return d, true
}

// retryablePaid reports whether a failed attempt may be retried under policy, as
// Temporal would decide: not a cancellation, not non-retryable, not a listed type.
func retryablePaid(err error, policy *temporal.RetryPolicy) bool {
	if isCancellation(err) {
		return false
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return !app.NonRetryable() && !slices.Contains(policy.NonRetryableErrorTypes, app.Type())
	}
	return true // timeouts and other failures are retried, as Temporal retries them
}

// stepTimeout is the step's timeout (StepTimeout, or DefaultStepTimeout).
func stepTimeout(o stepOptions) time.Duration {
	if o.timeout > 0 {
		return o.timeout
	}
	return DefaultStepTimeout
}

// lastAttempt completes the record of a cost-bearing step made attempt by attempt: its
// last attempt (cost, tokens, error, capacity wait), the attempt count, and whether the
// step cost more than its limit.
func (c *Context) lastAttempt(p *pending, cost decimal.Decimal, tokens runs.Tokens, errMsg string, unconfirmed bool) {
	st := &c.run.state.Steps[p.idx]
	if p.raw && p.attempt > 0 && !p.notMade {
		st.Attempt = p.attempt
		st.Attempts = append(st.Attempts, runs.Attempt{Attempt: p.attempt, CostUSD: cost, Tokens: tokens,
			Error: errMsg, WaitedMS: p.waited.Milliseconds(), Unconfirmed: unconfirmed})
	}
	if st.CostLimitUSD != nil && st.CostLimitUSD.IsPositive() && st.CostUSD.GreaterThan(*st.CostLimitUSD) {
		st.Overshoot = true
	}
}
