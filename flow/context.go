package flow

import (
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/activities"
)

// QueryState is the Query that returns a run's RunState.
const QueryState = "gateflow.state"

// Context is what a handler receives: its steps are methods (Shell, ...) and package
// functions for typed steps. It wraps the Temporal workflow.Context of the run, so the
// handler follows Temporal's determinism rules.
type Context struct {
	wctx  workflow.Context
	state *RunState
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

// State returns a copy of the run's state as the Query gateflow.state would.
func (c *Context) State() RunState { return c.state.clone() }

// StepOption adjusts one step's Temporal activity options.
type StepOption func(*stepOptions)

type stepOptions struct {
	timeout          time.Duration
	heartbeatTimeout time.Duration
	retry            *temporal.RetryPolicy
}

// StepTimeout bounds one attempt of the step (the activity's StartToCloseTimeout).
func StepTimeout(d time.Duration) StepOption { return func(o *stepOptions) { o.timeout = d } }

// HeartbeatTimeout is how long a step may go without a heartbeat before Temporal
// considers its worker gone and retries it elsewhere.
func HeartbeatTimeout(d time.Duration) StepOption {
	return func(o *stepOptions) { o.heartbeatTimeout = d }
}

// Retry sets the step's retry policy. Without it a step is tried up to three times for
// infrastructure failures (a lost worker, a timeout), and a command's own failure, such as
// a non-zero exit, is not retried.
func Retry(p temporal.RetryPolicy) StepOption {
	return func(o *stepOptions) { o.retry = &p }
}

// Defaults for steps.
const (
	DefaultStepTimeout      = time.Hour
	DefaultHeartbeatTimeout = 30 * time.Second
	DefaultStepAttempts     = 3
)

// Shell runs a shell command as the step name. A non-zero exit fails the step; the error
// carries the exit code and the tail of stderr, and so does the step record.
func (c *Context) Shell(name string, s activities.Shell, opts ...StepOption) (activities.ShellResult, error) {
	o := stepOptions{timeout: s.Timeout}
	for _, opt := range opts {
		opt(&o)
	}
	var res activities.ShellResult
	err := c.runStep(name, KindShell, s.Validate(), activities.ShellActivity, s, o,
		[]string{activities.ShellExitErrorType}, &res,
		func() (string, int, *int) {
			code := res.ExitCode
			return Preview(res.Stdout, 200), res.Attempt, &code
		})
	return res, err
}
