package flow

import (
	"context"
	"fmt"
)

// Cancel cancels run (and its children, which its cancellation reaches): OnError steps
// run, and the run ends cancelled with "by WHO: reason" as its error.
func (c *Client) Cancel(ctx context.Context, run, reason, by string) error {
	if by == "" {
		by = c.opts.Identity
	}
	d, err := c.tc.DescribeWorkflowExecution(ctx, run, "")
	if err != nil {
		return runError("cancel", run, err)
	}
	if !isOpen(d.GetWorkflowExecutionInfo().GetStatus()) {
		return &RefusedError{Run: run, What: "cancel", Reason: "the run has ended (" +
			temporalStatusName(d.GetWorkflowExecutionInfo().GetStatus()) + ")"}
	}
	if err := c.tc.SignalWorkflow(ctx, run, "", SignalCancel, CancelRequest{By: by, Reason: reason}); err != nil {
		return c.refusal(ctx, run, "cancel", err)
	}
	if err := c.tc.CancelWorkflow(ctx, run, ""); err != nil {
		return c.refusal(ctx, run, "cancel", err)
	}
	return nil
}

// Plan runs the flow name with input on a worker with every step stubbed: nothing runs,
// approvals are assumed granted, inputs and signals give zero values, and the returned
// state lists the steps in order with their kinds, options and the money they would
// reserve. Branches that depend on step results follow the zero values.
func (c *Client) Plan(ctx context.Context, name string, input any) (*RunDescription, error) {
	run, err := c.Start(ctx, name, input, StartOptions{ID: "plan-" + newRunID(name), plan: true})
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	return c.Wait(ctx, run.ID)
}
