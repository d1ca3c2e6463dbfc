package flow

import (
	"time"

	"github.com/shopspring/decimal"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// QueryState is the Query that returns a run's RunState.
const QueryState = "gateflow.state"

// Context is what a handler receives: its steps are methods (Shell, HTTP, Agent, Parallel,
// Skip, Sleep, OnError) and package functions for typed steps (Step, Child). It wraps the
// Temporal workflow.Context of the run, so the handler follows Temporal's determinism
// rules.
type Context struct {
	wctx     workflow.Context
	run      *runner
	defaults []StepOption
}

// Workflow returns the underlying Temporal workflow context, for Temporal APIs gateflow
// does not wrap. Work done through it is not recorded as steps.
func (c *Context) Workflow() workflow.Context { return c.wctx }

// Now is the run's deterministic clock (workflow.Now).
func (c *Context) Now() time.Time { return workflow.Now(c.wctx) }

// Logger is the replay-safe workflow logger.
func (c *Context) Logger() log.Logger { return workflow.GetLogger(c.wctx) }

// RunID is the run's ID (its Temporal workflow ID).
func (c *Context) RunID() string { return workflow.GetInfo(c.wctx).WorkflowExecution.ID }

// Attempt is the current run attempt, 1 for the first (see MaxAttempts).
func (c *Context) Attempt() int { return c.run.state.Attempt }

// State returns a copy of the run's state as the Query gateflow.state would.
func (c *Context) State() RunState { return c.run.state.clone() }

// With returns a context whose steps use opts (before their own options). Use it to give
// typed steps (Step, Child) options: flow.Step[int](ctx.With(flow.StepTimeout(time.Minute)), ...).
func (c *Context) With(opts ...StepOption) *Context {
	d := *c
	d.defaults = append(append([]StepOption(nil), c.defaults...), opts...)
	return &d
}

// withWorkflow returns a copy running on another workflow context (a cancellable one for
// parallel steps, a disconnected one for cleanup).
func (c *Context) withWorkflow(wctx workflow.Context) *Context {
	d := *c
	d.wctx = wctx
	return &d
}

func (c *Context) options(opts []StepOption) stepOptions {
	var o stepOptions
	for _, opt := range c.defaults {
		if opt != nil {
			opt(&o)
		}
	}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// StepOption adjusts one step.
type StepOption func(*stepOptions)

type stepOptions struct {
	timeout          time.Duration
	heartbeatTimeout time.Duration
	retry            *temporal.RetryPolicy
	allowFailure     bool
	costLimit        *decimal.Decimal
}

// StepTimeout bounds one attempt of the step (the activity's StartToCloseTimeout).
func StepTimeout(d time.Duration) StepOption { return func(o *stepOptions) { o.timeout = d } }

// HeartbeatTimeout is how long a step may go without a heartbeat before Temporal
// considers its worker gone and retries it elsewhere.
func HeartbeatTimeout(d time.Duration) StepOption {
	return func(o *stepOptions) { o.heartbeatTimeout = d }
}

// Retry sets the step's retry policy (attempts, backoff, non-retryable error types).
// Without it a step is tried up to three times for infrastructure failures (a lost worker,
// a timeout, a provider's rate limit), and a command's own failure, such as a non-zero exit
// or a 4xx answer, is not retried.
func Retry(p temporal.RetryPolicy) StepOption {
	return func(o *stepOptions) { o.retry = &p }
}

// AllowFailure lets the step fail without failing the run: the step is recorded as failed
// (allowed), the handler gets the zero result and a nil error, and a run that otherwise
// completes ends with status warning.
func AllowFailure() StepOption { return func(o *stepOptions) { o.allowFailure = true } }

// CostLimit declares what the step may cost at most: the step reserves it against the
// run's cap before it is dispatched (a step that would take spend over the cap is not
// dispatched), and a child run gets it as its cap when it is less than what is left.
// Agent steps reserve their MaxBudgetUSD without it.
func CostLimit(usd decimal.Decimal) StepOption {
	return func(o *stepOptions) { o.costLimit = &usd }
}

// Defaults for steps.
const (
	DefaultStepTimeout      = time.Hour
	DefaultHeartbeatTimeout = 30 * time.Second
	DefaultStepAttempts     = 3
)
