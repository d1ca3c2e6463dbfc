package flow

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/shopspring/decimal"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/searchattr"
	"github.com/gateflow/gateflow/signals"
)

// MemoState is the Memo key under which a run keeps its final RunState, so closed runs can
// be inspected without a worker.
const MemoState = "gateflow.state"

// runConfig is what a worker adds to every flow it serves.
type runConfig struct {
	guards      Guards
	maxAttempts int
	directory   approval.Directory
	maxCost     *decimal.Decimal
	quotas      Quotas
	events      bool
}

// runner is one run's wrapper state, shared by the Contexts of its handler.
type runner struct {
	root    workflow.Context
	info    WorkflowInfo
	state   *RunState
	guards  Guards
	parent  *parentInfo
	onError []onErrorStep
	// children counts child runs started; childTokens the tokens they reported.
	children     int
	childTokens  Tokens
	childReports map[string]ChildReport
	// pendingSA are search attribute updates to send with the next status upsert.
	pendingSA []temporal.SearchAttributeUpdate
	people    *people
	signals   *signals.Buffer
	// ledger is the run's money: cap, spend, reservations. budgetErr, once set, ends the
	// run as budget_exceeded whatever the handler does with it.
	ledger     *budget.Ledger
	policy     budget.Policy
	pause      time.Duration
	budgetErr  error
	capVersion int
	// quotasOn: the worker has monthly quotas, so costs are charged to its ledgers.
	quotasOn bool
	// plan: the run is a plan; steps are recorded, not run.
	plan bool
	// waves counts Parallel calls per group name, for unique reservation keys.
	waves map[string]int
	// cancelReason says who cancelled the run and why (flowctl cancel --reason).
	cancelReason string
	// permits are the concurrency groups whose permits the run holds.
	permits []string
	// events: the worker has event sinks; eventSeq numbers the run's events; deliveries
	// are the event activities in flight.
	events     bool
	eventSeq   int
	deliveries []workflow.Future
}

func (rt *runner) publish() {
	workflow.SetCurrentDetails(rt.root, detailsMarkdown(rt.state, workflow.Now(rt.root)))
}

// treeTokens is what the run tree used so far, as far as this run knows: the tokens the
// parent's tree had used when this run started, plus this run's (which include its
// children's).
func (rt *runner) treeTokens() int64 {
	t := rt.state.Tokens.Total()
	if rt.parent != nil {
		t += rt.parent.TreeTokens
	}
	return t
}

// wallTimeLeft is the run's remaining wall time under its guard, and whether it is limited.
func (rt *runner) wallTimeLeft(now time.Time) (time.Duration, bool) {
	if rt.guards.MaxWallTime < 0 {
		return 0, false
	}
	left, _ := rt.guards.remaining(rt.state.StartedAt, now)
	return left, true
}

// VersionError is the failure of a run picked up by a worker whose flow has another
// version than the run was started with.
type VersionError struct {
	Workflow, Started, Worker string
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("version: run of %s was started with version %q, this worker has version %q; "+
		"run it on a worker with version %q (or keep versions compatible with workflow.GetVersion)",
		e.Workflow, e.Started, e.Worker, e.Started)
}

type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent marks a handler's error as final: the run fails without further run attempts
// (see MaxAttempts).
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// runHandler is gateflow's run wrapper around a handler.
func runHandler[I, O any](wctx workflow.Context, info WorkflowInfo, cfg runConfig, handler Handler[I, O], in I) (O, error) {
	var zero O
	parent := readParent(wctx)
	guards := info.Guards.resolve(cfg.guards)
	if parent != nil {
		guards = parent.Guards
	}
	st := &RunState{
		ID:          workflow.GetInfo(wctx).WorkflowExecution.ID,
		Workflow:    info.Name,
		Version:     info.Version,
		Status:      StatusRunning,
		StartedAt:   workflow.GetInfo(wctx).WorkflowStartTime,
		Attempt:     1,
		MaxAttempts: 1,
		Guards:      guards,
		Steps:       []StepRecord{},
	}
	if cfg.maxAttempts > 0 {
		st.MaxAttempts = cfg.maxAttempts
	}
	if info.MaxAttempts > 0 {
		st.MaxAttempts = info.MaxAttempts
	}
	rt := &runner{root: wctx, info: info, state: st, guards: guards, parent: parent, childReports: map[string]ChildReport{},
		people: &people{dir: cfg.directory, gates: map[string]*approval.Gate{}, gateDirs: map[string]approval.StaticDirectory{},
			waiting: map[string]bool{}, inputs: map[string]*inputWait{}, gateAttempt: map[string]int{}},
		signals: signals.NewBuffer(0, 0), waves: map[string]int{}}
	if cfg.events {
		// Runs started before the worker had event sinks replay without events.
		rt.events = workflow.GetVersion(wctx, "gateflow.events", workflow.DefaultVersion, 1) == 1
	}
	if parent != nil {
		st.Depth, st.ParentID = parent.Depth, parent.ParentID
		if !parent.StartedAt.IsZero() {
			// The wall-time guard covers the whole tree, from the top-level run's start.
			st.StartedAt = parent.StartedAt
		}
	}
	if err := workflow.SetQueryHandlerWithOptions(wctx, QueryState, func() (RunState, error) {
		return st.clone(), nil
	}, workflow.QueryHandlerOptions{Description: "The run's status, steps, cost and children"}); err != nil {
		return zero, fmt.Errorf("register query %s: %w", QueryState, err)
	}
	if err := rt.registerPeople(wctx); err != nil {
		return zero, err
	}
	opts := readOptions(wctx)
	rt.plan = opts.Plan
	if opts.MaxAttempts > 0 {
		st.MaxAttempts = opts.MaxAttempts
	}
	if err := rt.setupBudget(wctx, cfg, opts); err != nil {
		return zero, err
	}
	rt.listenForCancelReason(wctx)
	c := &Context{wctx: wctx, run: rt}
	if err := rt.checkVersion(); err != nil {
		return zero, rt.end(c, err)
	}
	if err := rt.checkQuota(c, cfg, opts); err != nil {
		return zero, rt.end(c, err)
	}
	if err := rt.holdIfPaused(c, opts); err != nil {
		return zero, rt.end(c, err)
	}
	if err := rt.acquirePermits(c, opts.Concurrency); err != nil {
		return zero, rt.end(c, err)
	}
	if !opts.Paused {
		c.setStatus(StatusRunning)
	}
	rt.publish()

	var out O
	var err error
	for {
		out, err = handler(c, in)
		if err == nil || !rt.retryable(err) || st.Attempt >= st.MaxAttempts {
			break
		}
		delay := attemptBackoff(st.Attempt)
		c.Logger().Info("run attempt failed, retrying", "attempt", st.Attempt, "error", err, "delay", delay)
		st.Attempt++
		st.AllowedFailures = 0 // the outcome is the last attempt's
		rt.publish()
		if terr := workflow.NewTimerWithOptions(wctx, delay, workflow.TimerOptions{
			Summary: fmt.Sprintf("run attempt %d of %d in %s", st.Attempt, st.MaxAttempts, delay),
		}).Get(wctx, nil); terr != nil {
			err = terr
			break
		}
	}
	if err == nil && rt.people.failRun != nil {
		err = rt.people.failRun // a gate's deadline with OnTimeout fail ends the run
	}
	if rt.budgetErr != nil && (err == nil || !isBudgetExceeded(err)) {
		err = rt.budgetErr // crossing the cap stops the run, whatever the handler did
	}
	return out, rt.end(c, err)
}

// SignalCancel carries who cancels a run and why, just before the cancellation itself
// (flowctl cancel --reason).
const SignalCancel = "gateflow.cancel"

// CancelRequest is the payload of SignalCancel.
type CancelRequest struct {
	By     string `json:"by"`
	Reason string `json:"reason"`
}

func (rt *runner) listenForCancelReason(wctx workflow.Context) {
	ch := workflow.GetSignalChannel(wctx, SignalCancel)
	workflow.Go(wctx, func(gctx workflow.Context) {
		for {
			var r CancelRequest
			ch.Receive(gctx, &r)
			rt.cancelReason = "by " + r.By
			if r.Reason != "" {
				rt.cancelReason += ": " + r.Reason
			}
		}
	})
}

// checkVersion compares the flow version the run was started with (FlowVersion) with this
// worker's. On the run's first workflow task a mismatch fails the run; when a worker with
// other code replays a run in progress, the workflow task fails with the reason and the
// run waits, untouched, for a worker with the right version.
func (rt *runner) checkVersion() error {
	started, _ := workflow.GetTypedSearchAttributes(rt.root).GetKeyword(searchattr.VersionKey)
	if started == "" {
		if rt.info.Version != "" {
			// Upserted with the first status.
			rt.pendingSA = append(rt.pendingSA, searchattr.VersionKey.ValueSet(rt.info.Version))
		}
		return nil
	}
	if started == rt.info.Version {
		return nil
	}
	verr := &VersionError{Workflow: rt.info.Name, Started: started, Worker: rt.info.Version}
	if workflow.IsReplaying(rt.root) {
		panic(verr.Error())
	}
	return temporal.NewNonRetryableApplicationError(verr.Error(), "gateflow.Version", verr)
}

// retryable reports whether a failed attempt may be followed by another.
func (rt *runner) retryable(err error) bool {
	var perm *permanentError
	var verr *VersionError
	switch {
	case isCancellation(err), errors.Is(err, ErrGuard), errors.As(err, &perm), errors.As(err, &verr),
		errors.Is(err, approval.ErrRejected), errors.Is(err, approval.ErrTimedOut), errors.Is(err, approval.ErrChangesRequested),
		rt.people != nil && rt.people.failRun != nil,
		isBudgetExceeded(err), rt.budgetErr != nil:
		return false
	}
	return true
}

func attemptBackoff(attempt int) time.Duration {
	d := time.Second << min(attempt-1, 6)
	return min(d, time.Minute)
}

// statusOf is the final status of a run whose handler returned err.
func statusOf(err error, allowedFailures int) Status {
	switch {
	case err == nil && allowedFailures > 0:
		return StatusWarning
	case err == nil:
		return StatusCompleted
	case isCancellation(err):
		return StatusCancelled
	case isBudgetExceeded(err):
		return StatusBudgetExceeded
	case errors.Is(err, approval.ErrRejected), appErrorType(err) == "gateflow.Rejected":
		return StatusRejected
	}
	return StatusFailed
}

// end records the run's outcome: it runs the OnError steps of a failed run, upserts
// FlowStatus, keeps the final state in the Memo and reports to the parent run.
func (rt *runner) end(c *Context, err error) error {
	status := statusOf(err, rt.state.AllowedFailures)
	if err != nil {
		rt.runOnError(c, err)
	}
	msg := ""
	switch {
	case err == nil:
	case isCancellation(err):
		msg = "cancelled"
		if rt.cancelReason != "" {
			msg = "cancelled " + rt.cancelReason
		}
	default:
		msg = err.Error()
	}
	wctx := rt.root
	if status == StatusCancelled {
		wctx, _ = workflow.NewDisconnectedContext(rt.root)
	}
	c = c.withWorkflow(wctx)
	rt.state.finish(workflow.Now(wctx), status, msg)
	c.setStatus(status)
	rt.publish()
	if merr := workflow.UpsertMemo(wctx, map[string]any{MemoState: rt.state.clone()}); merr != nil {
		c.Logger().Warn("keep final state in memo", "error", merr)
	}
	rt.releasePermits(wctx)
	rt.reportToParent(wctx)
	rt.awaitDeliveries(wctx)
	if !rt.plan {
		m := workflow.GetMetricsHandler(wctx).WithTags(map[string]string{"workflow": rt.info.Name})
		m.WithTags(map[string]string{"status": string(status)}).Counter("gateflow_runs_total").Inc(1)
		m.Counter("gateflow_run_cost_usd_micros_total").Inc(rt.state.CostUSD.Shift(6).IntPart())
		if status == StatusBudgetExceeded {
			m.Counter("gateflow_budget_exceeded_total").Inc(1)
		}
	}
	var perm *permanentError
	if errors.As(err, &perm) {
		err = perm.err
	}
	// A parent (or a tool) tells these outcomes apart by the application error's type.
	switch status {
	case StatusBudgetExceeded:
		return temporal.NewNonRetryableApplicationError(msg, "gateflow.BudgetExceeded", err)
	case StatusRejected:
		return temporal.NewNonRetryableApplicationError(msg, "gateflow.Rejected", err)
	}
	return err
}

// isBudgetExceeded reports a budget refusal or crossing, here or in a child run.
func isBudgetExceeded(err error) bool {
	return errors.Is(err, budget.ErrExceeded) || errors.Is(err, budget.ErrQuotaExhausted) ||
		appErrorType(err) == "gateflow.BudgetExceeded" || appErrorType(err) == "gateflow.QuotaExhausted"
}

func appErrorType(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Type()
	}
	return ""
}

// checkQuota refuses, before any step, a run not started by a Client (which checks
// quotas itself) when a monthly quota of the worker is exhausted.
func (rt *runner) checkQuota(c *Context, cfg runConfig, opts RunOptions) error {
	if opts.QuotaChecked || rt.parent != nil || rt.plan {
		return nil
	}
	if _, ok := cfg.quotas.limitFor(budget.AllScope); !ok {
		if _, ok := cfg.quotas.limitFor(budget.WorkflowScope(rt.info.Name)); !ok {
			return nil
		}
	}
	actx := workflow.WithActivityOptions(c.wctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second, Summary: "monthly quota check",
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 5},
	})
	if err := workflow.ExecuteActivity(actx, QuotaCheckActivity, rt.info.Name).Get(c.wctx, nil); err != nil {
		return fmt.Errorf("refused before any step: %w", err)
	}
	return nil
}

// setStatus records the run status and upserts FlowStatus (and the cost attributes) when
// they changed.
func (c *Context) setStatus(s Status) {
	c.run.state.Status = s
	if c.run.plan {
		return // a plan is not a run: no FlowStatus, so lists leave it out
	}
	sa := workflow.GetTypedSearchAttributes(c.wctx)
	var updates []temporal.SearchAttributeUpdate
	if cur, _ := sa.GetKeyword(searchattr.StatusKey); cur != string(s) {
		updates = append(updates, searchattr.StatusKey.ValueSet(string(s)))
	}
	c.run.state.Waiting = c.run.people.waitingList()
	if cur, _ := sa.GetKeyword(searchattr.StatusKey); cur != string(s) {
		c.run.emit(c.wctx, EventRunStatus, "", string(s), c.run.state.Error, map[string]any{"waiting": c.run.state.Waiting})
	}
	if u, ok := c.run.waitingUpdate(sa); ok {
		updates = append(updates, u)
	}
	cost, _ := c.run.state.CostUSD.Float64()
	if cur, ok := sa.GetFloat64(searchattr.CostUSDKey); (ok || !c.run.state.CostUSD.IsZero()) && cur != cost {
		updates = append(updates, searchattr.CostUSDKey.ValueSet(cost))
	}
	if len(updates) == 0 {
		return
	}
	updates = append(updates, c.run.pendingSA...)
	c.run.pendingSA = nil
	if err := workflow.UpsertTypedSearchAttributes(c.wctx, updates...); err != nil {
		c.Logger().Warn("upsert search attributes", "status", s, "error", err)
	}
}

func (s *RunState) clone() RunState {
	c := *s
	c.Steps = append([]StepRecord(nil), s.Steps...)
	c.Refused = append([]RefusedMessage(nil), s.Refused...)
	return c
}
