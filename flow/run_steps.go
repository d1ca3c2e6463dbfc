package flow

import (
	"github.com/gateflow/gateflow/artifacts"

	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/events"
	"github.com/gateflow/gateflow/internal/display"
	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// call describes one activity step before it is dispatched.
type call struct {
	name         string
	kind         runs.StepKind
	activity     any // an activity name or function
	args         []any
	invalid      error // set: the step fails without being dispatched
	opts         stepOptions
	nonRetryable []string
	summary      string
	group        string
	onError      bool
	// always marks an Always step (onError is set too: no guard stops either).
	always bool
	// costLimit is the step's own cost limit: a cost-bearing step reserves it before it is
	// dispatched. reserved says Parallel reserved it already.
	costLimit  *decimal.Decimal
	reserved   bool
	reserveKey string
}

// pending is a dispatched (or refused) step.
type pending struct {
	idx     int
	call    call
	fut     workflow.Future
	err     error // refused before dispatch
	planned bool  // a plan's step: recorded, not run
	// raw: fut is a cost-bearing step's attempts (run_paid.go), whose value is the last
	// attempt's raw result; attempt is the attempt being made and waited how long it
	// waited for provider capacity.
	raw     bool
	attempt int
	waited  time.Duration
	// notMade: the next attempt was not made (its money did not fit the cap); the last
	// attempt made is already charged and recorded.
	notMade bool
	// cachedAge: the result came from the step cache, stored this long ago (cache.go).
	cachedAge *time.Duration
}

// outcome is what a finished step reports for its record: filled by the step kind from
// its result.
type outcome struct {
	output     string
	attempt    int
	exitCode   *int
	httpStatus int
	cost       decimal.Decimal
	tokens     runs.Tokens
	artifacts  []artifacts.Artifact
}

// dispatch records the step as running and schedules its activity, or records it as
// failed when it is invalid or the run's wall time is used up.
func (c *Context) dispatch(cl call) *pending {
	if cl.invalid == nil {
		cl.invalid = checkRoutes(cl) // run_routing.go: a route that cannot apply to the step
	}
	if cl.invalid == nil {
		cl.invalid = c.checkService(cl) // service.go: a service the worker does not declare
	}
	if err := c.holdWhilePaused(cl.onError); err != nil && cl.invalid == nil {
		cl.invalid = err // run_pause.go: cancelled while the run was paused
	}
	s := c.begin(cl.name, cl.kind)
	r := s.rec()
	r.Group = cl.group
	r.OnError = cl.onError && !cl.always
	r.Always = cl.always
	p := &pending{idx: s.i, call: cl}
	err := c.guardCall(s, cl)
	if err == nil && s.planned(planDetail(cl)) {
		p.planned = true
		return p
	}
	if err == nil && cl.opts.cache != nil {
		var hit cacheHit
		if hit, err = c.lookupCache(cl); err == nil && hit.Hit {
			c.hitCache(p, hit) // cache.go: not dispatched, no reservation
			c.run.publish()
			if c.run.emits(events.StepStarted) {
				c.run.emit(c.wctx, events.StepStarted, cl.name, string(runs.StepRunning), "", map[string]any{"kind": cl.kind, "group": cl.group, "cached": true})
			}
			return p
		}
	}
	if err == nil && cl.costLimit != nil && !cl.reserved {
		if err = c.reserve([]budget.Item{{Key: r.ActivityID, Amount: *cl.costLimit}}); err == nil {
			p.call.reserved = true
		}
	}
	if err != nil {
		c.refuseCall(s, p, err)
		return p
	}
	c.schedule(s, p)
	return p
}

// guardCall is why the activity step s may not run: the call is invalid, or a guard
// (wall time, MaxSteps) refuses it. Cleanup steps pass the guards.
func (c *Context) guardCall(s *step, cl call) error {
	if cl.invalid != nil {
		return cl.invalid
	}
	if strings.TrimSpace(cl.name) == "" {
		return errors.New("step name is empty")
	}
	if cl.onError {
		return nil
	}
	if err := s.checkWallTime(); err != nil {
		return err
	}
	return c.countStep(cl.name) // run_limits.go: the MaxSteps guard
}

// refuseCall ends the activity step s of p refused (err) before it was dispatched, and
// gives back the money reserved for it.
func (c *Context) refuseCall(s *step, p *pending, err error) {
	if p.call.reserved {
		key := s.rec().ActivityID
		if p.call.reserveKey != "" {
			key = p.call.reserveKey
		}
		if r, ok := c.run.budget.ledger.Reservation(key); ok {
			c.run.budget.ledger.Release(r)
		}
	}
	status := runs.StepFailed
	if errors.Is(err, budget.ErrExceeded) {
		status = runs.StepRefused // its money did not fit the cap: not dispatched
	}
	s.end(s.began, status, stepFailureMessage(err), "") // artifacts.go
	p.err = s.err(err)
	c.onStepFailed(s.i, p.call.group, p.call.onError)
}

// schedule schedules the activity of the step s of p.
func (c *Context) schedule(s *step, p *pending) {
	cl, r := p.call, s.rec()
	ao := activityOptions(r.ActivityID, cl.name, cl.kind, cl.opts, cl.nonRetryable)
	if cl.summary != "" {
		ao.Summary = cl.summary
	}
	ao.ScheduleToStartTimeout = cl.opts.queueTimeout // QueueTimeout (routing.go)
	ao.TaskQueue = c.serviceQueue(cl)                // service.go: "" is the run's queue
	if left, limited := c.run.wallTimeLeft(s.began); limited && !cl.onError && left < ao.StartToCloseTimeout {
		ao.StartToCloseTimeout = left
		ao.ScheduleToCloseTimeout = left
	}
	if cl.costLimit != nil && cl.costLimit.IsPositive() {
		limit := *cl.costLimit // an agent without MaxBudgetUSD has no limit to show
		r.CostLimitUSD = &limit
	}
	if cl.costLimit == nil && c.run.setup.lossTolerant && ownsTimeout(cl.kind) {
		ao.RetryPolicy = lossTolerant(ao.RetryPolicy) // worker_losses.go
	}
	if cl.costLimit == nil || !c.dispatchPaid(p, ao) {
		p.fut = workflow.ExecuteActivity(workflow.WithActivityOptions(c.wctx, ao), cl.activity, cl.args...)
	}
	c.run.publish()
	if c.run.emits(events.StepStarted) {
		c.run.emit(c.wctx, events.StepStarted, cl.name, string(runs.StepRunning), "", map[string]any{"kind": cl.kind, "group": cl.group})
	}
}

// settle waits for a dispatched step, decodes its result into result and records the
// outcome; describe turns the decoded result into the record's outcome. A failed step's
// error routing (OnFailure, OnTimeout; run_routing.go) decides what the handler sees.
func (c *Context) settle(p *pending, result any, describe func() outcome) error {
	err := c.settleStep(p, result, describe)
	return c.route(p, result, describe, err)
}

// settleStep is settle without the error routing.
func (c *Context) settleStep(p *pending, result any, describe func() outcome) error {
	if p.err != nil {
		return p.err
	}
	if p.planned {
		return nil
	}
	err := p.get(c.wctx, result)
	if err == nil {
		c.storeCache(p, result) // cache.go: a miss keeps its result
	}
	return c.record(p, err, describe)
}

// record keeps a finished step's outcome and returns the error the handler sees: nil, a
// *StepError, or for a step allowed to fail an *AllowedFailure. A failed step calls the
// step error handler (OnStepError) first.
func (c *Context) record(p *pending, err error, describe func() outcome) error {
	st := c.run.state
	s := c.stepAt(p.idx)
	end := s.now()
	name, kind := p.call.name, p.call.kind
	key := st.Steps[p.idx].ActivityID
	resKey := key
	if p.call.reserveKey != "" {
		resKey = p.call.reserveKey
	}
	if p.raw && p.attempt > 1 && !p.notMade {
		// A later attempt of a cost-bearing step has keys of its own (run_paid.go).
		key, resKey = paidActivityID(key, p.attempt), paidActivityID(resKey, p.attempt)
	}
	if err == nil {
		o := describe()
		if p.cachedAge != nil { // cache.go: a hit costs nothing
			o.cost, o.tokens = decimal.Zero, runs.Tokens{}
			st.Steps[p.idx].Cached, st.Steps[p.idx].CachedAgeMS = true, p.cachedAge.Milliseconds()
		}
		s.close(end, runs.StepCompleted, o.attempt, "", o.output, o.exitCode)
		c.stepMetric(kind, runs.StepCompleted, st.Steps[p.idx].Duration(end))
		st.Steps[p.idx].HTTPStatus = o.httpStatus
		st.Steps[p.idx].Artifacts = o.artifacts
		chargeStep(st, p.idx, o.cost, o.tokens)
		c.lastAttempt(p, o.cost, o.tokens, "", false)
		c.run.publish()
		if c.run.emits(events.StepCompleted) {
			c.run.emit(c.wctx, events.StepCompleted, name, string(runs.StepCompleted), "",
				map[string]any{"kind": kind, "cost_usd": o.cost.String(), "output": o.output})
		}
		c.chargeQuota(key, o.cost)
		if berr := c.settleCost(resKey, name, p.call.reserved, o.cost); berr != nil {
			return &StepError{Step: name, Kind: kind, Err: berr}
		}
		if o.tokens.Total() > 0 && !p.call.onError {
			if gerr := c.run.setup.guards.checkTokens(name, c.run.children.treeTokens(c.run.state)); gerr != nil {
				return &StepError{Step: name, Kind: kind, Err: gerr}
			}
		}
		return nil
	}
	fi := failureInfo(err)
	status, timeout := failureStatus(err)
	s.close(end, status, fi.attempt, errorMessage(err), "", fi.exitCode)
	st.Steps[p.idx].Timeout = timeout
	c.stepMetric(kind, status, st.Steps[p.idx].Duration(end))
	st.Steps[p.idx].HTTPStatus = fi.httpStatus
	st.Steps[p.idx].Artifacts = fi.artifacts // what a failed shell step collected
	// An attempt lost in flight is charged its reservation (run_paid.go).
	cost, unconfirmed := c.unconfirmedCost(p, resKey, err, fi.cost)
	chargeStep(st, p.idx, cost, fi.tokens)
	if unconfirmed {
		chargeUnconfirmed(st, p.idx, cost)
	}
	c.lastAttempt(p, cost, fi.tokens, errorMessage(err), unconfirmed)
	if c.run.emits(events.StepFailed) {
		c.run.emit(c.wctx, events.StepFailed, name, string(status), errorMessage(err), map[string]any{"kind": kind, "cost_usd": cost.String()})
	}
	c.chargeQuota(key, cost)
	serr := &StepError{Step: name, Kind: kind, Err: err}
	var rerr error = serr
	if berr := c.settleCost(resKey, name, p.call.reserved, cost); berr != nil {
		rerr = &StepError{Step: name, Kind: kind, Err: berr}
	} else if p.call.opts.allowed(status) { // AllowFailure, or the route Continue (routing.go)
		if _, routed := p.call.opts.routeFor(status); routed {
			st.Steps[p.idx].Route = "continue"
		}
		st.Steps[p.idx].AllowedFailure = true
		st.AllowedFailures++
		rerr = c.allowedFailure(serr)
	}
	c.run.publish()
	if status != runs.StepCancelled {
		c.onStepFailed(p.idx, p.call.group, p.call.onError)
	}
	return rerr
}

func activityOptions(id, name string, kind runs.StepKind, o stepOptions, nonRetryable []string) workflow.ActivityOptions {
	timeout := o.timeout
	if timeout <= 0 {
		timeout = DefaultStepTimeout
	}
	hb := o.heartbeatTimeout
	if hb <= 0 {
		hb = DefaultHeartbeatTimeout
	}
	retry := o.retry
	if retry == nil {
		retry = &temporal.RetryPolicy{MaximumAttempts: DefaultStepAttempts, NonRetryableErrorTypes: nonRetryable}
	}
	startToClose := timeout
	if kind == runs.KindShell || kind == runs.KindHTTP {
		// Shell and HTTP steps enforce their timeout themselves and report it; the slack
		// lets the report arrive before Temporal's own timeout. (An agent step has no timeout
		// of its own: Temporal's is its timeout.)
		startToClose += 30 * time.Second
	}
	return workflow.ActivityOptions{
		ActivityID:          id,
		Summary:             name + " (" + string(kind) + ")",
		StartToCloseTimeout: startToClose,
		HeartbeatTimeout:    hb,
		RetryPolicy:         retry,
		// A cancelled step is really stopped (a shell step's process group killed) before
		// the handler goes on.
		WaitForCancellation: true,
	}
}

// failure is what a built-in step attached to its error: the attempt, and per kind the exit
// code, the HTTP status, or the cost and usage of an agent call that was paid for.
type failure struct {
	attempt    int
	exitCode   *int
	httpStatus int
	cost       decimal.Decimal
	tokens     runs.Tokens
	artifacts  []artifacts.Artifact
}

type failureDetailsJSON struct {
	Attempt  int             `json:"attempt"`
	ExitCode *int            `json:"exit_code"`
	Status   int             `json:"status"`
	CostUSD  decimal.Decimal `json:"cost_usd"`
	Usage    llm.Usage       `json:"usage"`
	TimedOut bool            `json:"timed_out"`
	// Artifacts: what a failed shell step collected (activities.ShellFailure).
	Artifacts []artifacts.Artifact `json:"artifacts"`
}

func failureInfo(err error) failure {
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || !app.HasDetails() {
		return failure{}
	}
	d, ok := decodeDetails(app)
	if !ok {
		return failure{}
	}
	f := failure{attempt: d.Attempt, cost: d.CostUSD, artifacts: d.Artifacts, // a failed or timed-out shell step's
		tokens: runs.Tokens{Input: d.Usage.InputTokens, Output: d.Usage.OutputTokens}}
	switch app.Type() {
	case activities.ShellExitErrorType:
		f.exitCode = d.ExitCode
	case activities.HTTPStatusErrorType:
		f.httpStatus = d.Status
	}
	return f
}

// decodeDetails reads an application error's first detail. Details that came over the
// wire decode as JSON into failureDetailsJSON; details of an error made in this process
// can only be read into their own type, so the built-in failure types are tried too.
func decodeDetails(app *temporal.ApplicationError) (failureDetailsJSON, bool) {
	if d, ok := tryDetails[failureDetailsJSON](app); ok {
		return d, true
	}
	if sf, ok := tryDetails[activities.ShellFailure](app); ok {
		code := sf.ExitCode
		return failureDetailsJSON{Attempt: sf.Attempt, ExitCode: &code, Artifacts: sf.Artifacts}, true
	}
	if hf, ok := tryDetails[activities.HTTPFailure](app); ok {
		return failureDetailsJSON{Attempt: hf.Attempt, Status: hf.Status, TimedOut: hf.TimedOut}, true
	}
	return failureDetailsJSON{}, false
}

func tryDetails[T any](app *temporal.ApplicationError) (v T, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return v, app.Details(&v) == nil
}

// failureDetails extracts the attempt and exit code a built-in step attached to its error.
func failureDetails(err error) (int, *int) {
	f := failureInfo(err)
	return f.attempt, f.exitCode
}

// planDetail says what a planned step would do: its options and the money it would reserve.
func planDetail(cl call) string {
	var parts []string
	if a, ok := cl.activity.(string); ok {
		parts = append(parts, "activity "+a)
	}
	if cl.opts.timeout > 0 {
		parts = append(parts, "timeout "+cl.opts.timeout.String())
	}
	if cl.opts.retry != nil {
		parts = append(parts, fmt.Sprintf("retry %d attempts", cl.opts.retry.MaximumAttempts))
	}
	if cl.opts.allowFailure {
		parts = append(parts, "may fail")
	}
	if cl.costLimit != nil {
		parts = append(parts, "reserves "+budget.FormatUSD(*cl.costLimit))
	}
	if cs := cl.opts.cache; cs != nil {
		parts = append(parts, fmt.Sprintf("cached %q for %s", cs.key, cs.ttl))
	}
	if len(cl.args) == 1 {
		if sh, ok := cl.args[0].(activities.Shell); ok {
			parts = append(parts, "$ "+display.Preview(oneLine(sh.Command), 80))
		}
		if h, ok := cl.args[0].(activities.HTTP); ok {
			parts = append(parts, strings.ToUpper(orDefault(h.Method, "GET"))+" "+h.URL)
		}
		if ag, ok := cl.args[0].(activities.Agent); ok {
			parts = append(parts, "model "+ag.Model)
		}
	}
	return strings.Join(parts, ", ")
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
