package flow

import (
	"time"

	"github.com/gateflow/gateflow/runs"

	"go.temporal.io/sdk/log"

	"go.temporal.io/sdk/workflow"
)

// Context is what a handler receives: its steps are methods (Shell, HTTP, Agent, Parallel,
// Skip, Sleep, OnError) and package functions for typed steps (Step, Child). It wraps the
// Temporal workflow.Context of the run, so the handler follows Temporal's determinism
// rules.
type Context struct {
	wctx     workflow.Context
	run      *runner
	defaults []StepOption
	// scope is the path of the branch or fan-out item the context runs in ("" at the top).
	scope string
	// labels are the labels (Label) the context runs inside, innermost first.
	labels *labelFrame
}

// Workflow returns the underlying Temporal workflow context, for Temporal APIs gateflow
// does not wrap. Work done through it is not recorded as steps.
func (c *Context) Workflow() workflow.Context { return c.wctx }

// Now is the run's deterministic clock (workflow.Now).
func (c *Context) Now() time.Time { return runNow(c.wctx) }

// Logger is the replay-safe workflow logger.
func (c *Context) Logger() log.Logger { return workflow.GetLogger(c.wctx) }

// RunID is the run's ID (its Temporal workflow ID).
func (c *Context) RunID() string { return workflow.GetInfo(c.wctx).WorkflowExecution.ID }

// Attempt is the current run attempt, 1 for the first (see MaxAttempts).
func (c *Context) Attempt() int { return c.run.state.Attempt }

// State returns a copy of the run's state as the Query gateflow.state would.
func (c *Context) State() runs.State { return cloneState(c.run.state) }

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
