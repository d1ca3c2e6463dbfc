package flow

import (
	"errors"
	"fmt"
	"time"

	"github.com/gateflow/gateflow/auth"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/runs"

	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/events"
	"github.com/gateflow/gateflow/gates"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/searchattr"
)

// runConfig is what a worker adds to every flow it serves.
type runConfig struct {
	guards      Guards
	maxAttempts int
	directory   approval.Directory
	auth        *auth.Policy
	maxCost     *decimal.Decimal
	quotas      budget.Quotas
	events      []events.Sink // the worker's event sinks (run_events.go)
	// gateTypes are the types of the worker's gate resolvers, sorted (run_gate.go).
	gateTypes []string
	// triggers are, by flow name, the flows of the worker its runs' ends start (OnRunOf).
	triggers map[string][]trigger
	// services are the worker's declared services, sorted, and baseQueue its task queue
	// (service.go).
	services  []string
	baseQueue string
	// mcpServers are the names of the worker's MCP servers, sorted (mcp.go).
	mcpServers []string
	// prices is the worker's price table: an agent loop pins its model's price from it at
	// its start (agent_money.go).
	prices llm.PriceTable
	// lossTolerant: the worker's activities run lossInterceptor, so steps without a cost
	// are scheduled with room for worker losses (worker_losses.go).
	lossTolerant bool
}

// runner is one run's wrapper: the state every part shares, and the parts. Each part owns
// one concern of the run, registers its message handlers when the run starts and finishes
// its work when the run ends (see end).
type runner struct {
	root  workflow.Context
	info  core.WorkflowInfo
	state *runs.State
	// setup is what the start and the worker set for the run.
	setup setupPart
	// steps counts the run's steps for the MaxSteps guard (run_limits.go).
	steps stepsPart
	// after: cleanup and Always steps, the step error handler, the handler's output, the
	// flows the run's end starts (run_always.go).
	after afterPart
	// control: who may decide, the run's cancellation and its signal listener.
	control controlPart
	// report: what the run shows of itself besides its state (the Web UI details, search
	// attributes, step metrics).
	report reportPart

	budget   *budgetPart   // run_budget.go: cap, reservations, pause and raise, quotas
	people   *peoplePart   // run_people.go: approvals, inputs, signals
	waits    statusPart    // run_status.go: what the run waits for, and so its status
	children *childrenPart // run_children.go: the parent, child runs and their reports
	events   *eventsPart   // run_events.go: deliveries to the worker's event sinks
	permits  *permitsPart  // run_permits.go: paused workflow types and concurrency permits
	pause    *pausePart    // run_pause.go: one run paused and resumed (the Update gateflow.pause)
}

// setupPart is what the start and the worker set for a run.
type setupPart struct {
	// guards are the limits in force (the flow's over the worker's, or the parent's).
	guards Guards
	// plan: the run is a plan; steps are recorded, not run.
	plan bool
	// input is the run's input, as the handler gets it.
	input any
	// optionsErr is why the start options in the Memo could not be read; the run fails
	// with it before any step.
	optionsErr error
	// gateTypes are the worker's gate resolver types (run_gate.go).
	gateTypes []string
	// services and baseQueue: the worker's services and task queue (service.go).
	services  []string
	baseQueue string
	// mcpServers: the worker's MCP server names (mcp.go).
	mcpServers []string
	// prices: see runConfig.
	prices llm.PriceTable
	// lossTolerant: see runConfig.
	lossTolerant bool
}

// controlPart is who may decide for a run and how it is cancelled.
type controlPart struct {
	// auth is the run's pinned decision policy (run_auth.go).
	auth *authPart
	// cancelReason says who cancelled the run and why (flowctl cancel --reason), from the
	// Signal cancelSignals.
	cancelReason  string
	cancelSignals workflow.ReceiveChannel
	// listener serves the run's signal channels from one coroutine (run_signals.go).
	listener *signalListener
	// cancelHandler cancels the handler's context: the Update gateflow.cancel, accepted,
	// calls it (run_cancel.go); cancelled says it did.
	cancelHandler workflow.CancelFunc
	cancelled     bool
}

// reportPart is what a run shows of itself besides its state.
type reportPart struct {
	// pendingSA are search attribute updates to send with the next status upsert.
	pendingSA []temporal.SearchAttributeUpdate
	// details keeps rendered parts of the Web UI details (run_details_rows.go); conn are
	// the connection flags of their flowctl commands (connFlags: the run's namespace and
	// queue do not change).
	details detailsCache
	conn    string
	// stepTimers are the step duration timers made so far (run_metrics.go).
	stepTimers map[stepTimerKey]client.MetricsTimer
}

// runHandler is gateflow's run wrapper around a handler: it sets the run up, runs the
// checks that come before any step, runs the handler's attempts and records the end.
func runHandler[I, O any](wctx workflow.Context, info core.WorkflowInfo, cfg runConfig, handler handler[I, O], in I) (O, error) {
	var zero O
	rt, opts, err := newRunner(wctx, info, cfg)
	if err != nil {
		return zero, err
	}
	rt.metricsStarted(wctx) // run_metrics.go
	hctx, cancel := workflow.WithCancel(wctx)
	rt.control.cancelHandler = cancel
	c := &Context{wctx: hctx, run: rt}
	rt.setup.input = in // maxruns_key.go: a run renders its concurrency key from it
	if err := rt.preChecks(c, cfg, opts); err != nil {
		return zero, rt.end(c, err)
	}
	out, err := runAttempts(c, handler, in)
	rt.keepOutput(out)
	return out, rt.end(c, rt.outcome(err))
}

// newRunner builds the run's state and parts and registers the run's message handlers
// (the state Query, people's Updates and Signals, the pause Update, the budget Update, the
// cancel reason).
func newRunner(wctx workflow.Context, info core.WorkflowInfo, cfg runConfig) (*runner, protocol.RunOptions, error) {
	parent, parentErr := readParent(wctx)
	guards := Guards(info.Guards).resolve(cfg.guards)
	if parent != nil {
		// The parent's limits; a limit its worker did not know yet (zero) is the child's own.
		guards = parent.Guards.resolve(guards)
	}
	st := initialState(wctx, info, cfg, guards)
	rt := &runner{root: wctx, info: info, state: st,
		setup: setupPart{guards: guards, gateTypes: cfg.gateTypes, services: cfg.services, baseQueue: cfg.baseQueue, lossTolerant: cfg.lossTolerant,
			mcpServers: cfg.mcpServers, prices: cfg.prices},
		after: afterPart{triggers: cfg.triggers[info.Name]}}
	rt.control.listener = &signalListener{root: wctx}
	rt.report.conn = rt.connFlags()
	rt.children = &childrenPart{parent: parent, reports: map[string]runs.Child{}}
	rt.people = newPeoplePart(rt, cfg.directory)
	rt.events = newEventsPart(wctx, cfg.events, info.Name) // run_events.go
	rt.permits = &permitsPart{}
	if parent != nil {
		st.Depth, st.ParentID = parent.Depth, parent.ParentID
		if !parent.StartedAt.IsZero() {
			// The wall-time guard covers the whole tree, from the top-level run's start.
			st.StartedAt = parent.StartedAt
		}
	}
	if err := workflow.SetQueryHandlerWithOptions(wctx, protocol.QueryState, func() (runs.State, error) {
		return cloneState(st), nil
	}, workflow.QueryHandlerOptions{Description: "The run's status, steps, cost and children"}); err != nil {
		return nil, protocol.RunOptions{}, fmt.Errorf("register query %s: %w", protocol.QueryState, err)
	}
	if err := rt.people.registerMayDecide(wctx); err != nil { // run_maydecide.go
		return nil, protocol.RunOptions{}, err
	}
	ap, err := pinAuth(wctx, cfg.auth, cfg.directory, st)
	if err != nil {
		return nil, protocol.RunOptions{}, err
	}
	rt.control.auth = ap
	if err := rt.people.register(wctx); err != nil {
		return nil, protocol.RunOptions{}, err
	}
	rt.pause = &pausePart{rt: rt}
	if err := rt.pause.register(wctx); err != nil {
		return nil, protocol.RunOptions{}, err
	}
	opts, optsErr := readOptions(wctx)
	if opts.Guards != nil {
		rt.setup.guards = rt.setup.guards.tighten(*opts.Guards)
		st.Guards = runs.Guards(rt.setup.guards)
	}
	rt.setup.plan = opts.Plan
	if opts.MaxAttempts > 0 {
		st.MaxAttempts = opts.MaxAttempts
	}
	rt.budget = newBudgetPart(rt, cfg, opts)
	if err := rt.budget.register(wctx); err != nil {
		return nil, protocol.RunOptions{}, err
	}
	rt.listenForCancelReason(wctx)
	if err := rt.registerCancel(wctx); err != nil {
		return nil, protocol.RunOptions{}, err
	}
	rt.setup.optionsErr = errors.Join(parentErr, optsErr)
	return rt, opts, nil
}

// initialState is a run's state before its first step: running, its first attempt, and
// the attempts and guards it may use.
func initialState(wctx workflow.Context, info core.WorkflowInfo, cfg runConfig, guards Guards) *runs.State {
	st := &runs.State{
		ID:          workflow.GetInfo(wctx).WorkflowExecution.ID,
		Workflow:    info.Name,
		Version:     info.Version,
		Status:      runs.StatusRunning,
		StartedAt:   workflow.GetInfo(wctx).WorkflowStartTime.Truncate(time.Millisecond), // as runNow
		Attempt:     1,
		MaxAttempts: 1,
		Guards:      runs.Guards(guards),
		Steps:       []runs.Step{},
	}
	if cfg.maxAttempts > 0 {
		st.MaxAttempts = cfg.maxAttempts
	}
	if info.MaxAttempts > 0 {
		st.MaxAttempts = info.MaxAttempts
	}
	return st
}

// preChecks run before any step: the start options could be read, the flow's version
// matches the run's, the monthly quotas allow the run, its type is not paused, and it
// holds its concurrency permits. Then the run is running.
func (rt *runner) preChecks(c *Context, cfg runConfig, opts protocol.RunOptions) error {
	if rt.setup.optionsErr != nil {
		return rt.setup.optionsErr
	}
	if err := rt.checkVersion(); err != nil {
		return err
	}
	if err := rt.budget.checkQuota(c, cfg, opts); err != nil {
		return err
	}
	if err := rt.permits.holdIfPaused(c, opts); err != nil {
		return err
	}
	if err := rt.permits.acquire(c, opts.Concurrency); err != nil {
		return err
	}
	if !opts.Paused {
		c.setStatus(runs.StatusRunning)
	}
	rt.publish()
	return nil
}

// runAttempts runs the handler until an attempt succeeds, fails for good, or the run's
// attempts are used up, waiting a growing pause between attempts.
func runAttempts[I, O any](c *Context, handler handler[I, O], in I) (O, error) {
	rt, st := c.run, c.run.state
	for {
		out, err := handler(c, in)
		err = strayGoto(err) // run_routing.go: a Goto no label caught names the label
		if onlyAllowed(err) {
			err = nil // the handler passed an allowed failure on: the run ends warning
			st.AllowedFailures = max(st.AllowedFailures, 1)
		}
		if err == nil || !rt.retryable(err) || st.Attempt >= st.MaxAttempts {
			return out, err
		}
		delay := attemptBackoff(st.Attempt)
		c.Logger().Info("run attempt failed, retrying", "attempt", st.Attempt, "error", err, "delay", delay)
		st.Attempt++
		st.AllowedFailures = 0 // the outcome is the last attempt's
		rt.publish()
		if terr := workflow.NewTimerWithOptions(c.wctx, delay, workflow.TimerOptions{
			Summary: fmt.Sprintf("run attempt %d of %d in %s", st.Attempt, st.MaxAttempts, delay),
		}).Get(c.wctx, nil); terr != nil {
			return out, terr
		}
	}
}

// outcome is the run's error once the handler returned err: a gate's deadline with
// OnTimeout fail, or a crossing of the cap, end the run whatever the handler did.
func (rt *runner) outcome(err error) error {
	if err == nil && rt.people.failRun != nil {
		err = rt.people.failRun
	}
	if rt.budget.err != nil && (err == nil || !isBudgetExceeded(err)) {
		err = rt.budget.err
	}
	return err
}

// retryable reports whether a failed attempt may be followed by another.
func (rt *runner) retryable(err error) bool {
	var perm *permanentError
	var verr *versionError
	switch {
	case isCancellation(err), errors.Is(err, errGuard), errors.As(err, &perm), errors.As(err, &verr),
		errors.Is(err, approval.ErrRejected), errors.Is(err, approval.ErrTimedOut), errors.Is(err, approval.ErrChangesRequested),
		errors.Is(err, gates.ErrRejected), errors.Is(err, gates.ErrTimedOut),
		rt.people != nil && rt.people.failRun != nil,
		isBudgetExceeded(err), rt.budget != nil && rt.budget.err != nil:
		return false
	}
	return true
}

func attemptBackoff(attempt int) time.Duration {
	d := time.Second << min(attempt-1, 6)
	return min(d, time.Minute)
}

// statusOf is the final status of a run whose handler returned err.
func statusOf(err error, allowedFailures int) runs.Status {
	switch {
	case err == nil && allowedFailures > 0:
		return runs.StatusWarning
	case err == nil:
		return runs.StatusCompleted
	case isCancellation(err):
		return runs.StatusCancelled
	case isBudgetExceeded(err):
		return runs.StatusBudgetExceeded
	case errors.Is(err, approval.ErrRejected), errors.Is(err, gates.ErrRejected), ErrorRejected.Is(err):
		return runs.StatusRejected
	}
	return runs.StatusFailed
}

// end records the run's outcome: it runs the OnError steps of a failed run, then the
// Always steps, upserts FlowStatus, keeps the final state in the Memo, reports to the
// parent run and starts the flows its end triggers (OnRunOf).
func (rt *runner) end(c *Context, err error) error {
	status := statusOf(err, rt.state.AllowedFailures)
	if err != nil {
		rt.runOnError(c, err)
	}
	rt.runAlways(c, err, status)
	msg := ""
	switch {
	case err == nil:
	case isCancellation(err):
		msg = "cancelled"
		dctx, _ := workflow.NewDisconnectedContext(rt.root)
		rt.drainCancelReason(dctx)
		if rt.control.cancelReason != "" {
			msg = "cancelled " + rt.control.cancelReason
		}
	default:
		msg = err.Error()
	}
	wctx := rt.root
	if status == runs.StatusCancelled {
		wctx, _ = workflow.NewDisconnectedContext(rt.root)
	}
	c = c.withWorkflow(wctx)
	finishRun(rt.state, runNow(wctx), status, msg)
	c.setStatus(status)
	rt.publish()
	if merr := workflow.UpsertMemo(wctx, map[string]any{protocol.MemoState: cloneState(rt.state)}); merr != nil {
		c.Logger().Warn("keep final state in memo", "error", merr)
	}
	rt.permits.release(c)
	rt.budget.releaseQuota(wctx)
	rt.children.reportToParent(wctx, rt.state)
	rt.startTriggered(wctx, status)
	rt.events.await(wctx)
	rt.metricsEnded(wctx, status) // run_metrics.go
	var perm *permanentError
	if errors.As(err, &perm) {
		err = perm.err
	}
	// A parent (or a tool) tells these outcomes apart by the application error's type.
	switch status {
	case runs.StatusBudgetExceeded:
		return newTypedError(msg, ErrorBudgetExceeded, err)
	case runs.StatusRejected:
		return newTypedError(msg, ErrorRejected, err)
	}
	return err
}

func (rt *runner) listenForCancelReason(wctx workflow.Context) {
	ch := workflow.GetSignalChannelWithOptions(wctx, protocol.SignalCancel, workflow.SignalChannelOptions{Description: descCancelSignal})
	rt.control.cancelSignals = ch
	listen(rt.control.listener, ch, func(_ workflow.Context, r protocol.CancelReason) { rt.takeCancelReason(r) })
}

// takeCancelReason keeps who cancelled the run and why.
func (rt *runner) takeCancelReason(r protocol.CancelReason) {
	rt.control.cancelReason = "by " + r.By
	if r.Reason != "" {
		rt.control.cancelReason += ": " + r.Reason
	}
}

// drainCancelReason takes a reason that arrived with the cancellation itself (in the same
// workflow task). The listener coroutine (run_signals.go), which runs after this one, may
// not have taken it yet: a coroutine started now runs after it, so waiting for that one
// lets the listener keep the reason first (no command, nothing in history); the wait also
// lets the other coroutines run before the run's end, as recorded histories expect. ctx must not be
// cancelled (the run's end uses a disconnected one).
func (rt *runner) drainCancelReason(ctx workflow.Context) {
	if rt.control.cancelSignals == nil {
		return
	}
	ran := false
	workflow.Go(ctx, func(workflow.Context) { ran = true })
	if err := workflow.Await(ctx, func() bool { return ran }); err != nil {
		workflow.GetLogger(ctx).Warn("wait for the cancel reason", "error", err)
	}
	for {
		var r protocol.CancelReason
		if !rt.control.cancelSignals.ReceiveAsync(&r) {
			return
		}
		rt.takeCancelReason(r)
	}
}

// checkVersion compares the flow version the run was started with (FlowVersion) with this
// worker's. On the run's first workflow task a mismatch fails the run; when a worker with
// other code replays a run in progress, the workflow task fails with the reason and the
// run waits, untouched, for a worker with the right version. Declarative definitions
// (kind "yaml") are not compared: their version follows edits of the file while the
// worker runs, and each run is pinned to the exact definition it started with instead
// (package flowdef/interp records it in the run's history).
func (rt *runner) checkVersion() error {
	if rt.info.Kind == protocol.KindYAMLFlow {
		return nil
	}
	started, _ := workflow.GetTypedSearchAttributes(rt.root).GetKeyword(searchattr.VersionKey)
	if started == "" {
		if rt.info.Version != "" {
			// Upserted with the first status.
			rt.report.pendingSA = append(rt.report.pendingSA, searchattr.VersionKey.ValueSet(rt.info.Version))
		}
		return nil
	}
	if started == rt.info.Version {
		return nil
	}
	verr := &versionError{Workflow: rt.info.Name, Started: started, Worker: rt.info.Version}
	if workflow.IsReplaying(rt.root) {
		panic(verr.Error())
	}
	return newTypedError(verr.Error(), ErrorVersionMismatch, verr)
}

// wallTimeLeft is the run's remaining wall time under its guard, and whether it is limited.
func (rt *runner) wallTimeLeft(now time.Time) (time.Duration, bool) {
	if rt.setup.guards.MaxWallTime < 0 {
		return 0, false
	}
	left, _ := rt.setup.guards.remaining(rt.state.StartedAt, now)
	return left, true
}
