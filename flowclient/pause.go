package flowclient

import (
	"context"
	"errors"

	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/decisions"
	"github.com/gateflow/gateflow/internal/protocol"
)

// PauseRun pauses the run r.Run with the Update gateflow.pause: it finishes the steps in
// flight and starts no new step, child or sleep until ResumeRun; its gates and inputs
// wait as usual and their deadlines keep running. Meanwhile its status is paused and it
// waits for "resume" (Wait.Command gives `flowctl resume RUN`). A run that has ended or is
// paused already returns a *RefusedError and nothing is recorded; an unknown run a
// *RunNotFoundError. An empty r.By is the client's identity.
func (c *Client) PauseRun(ctx context.Context, r PauseRequest) error {
	return c.pauseRun(ctx, protocol.ControlPause, r)
}

// ResumeRun resumes the run r.Run paused by PauseRun: it goes on where it stopped. A run
// that is not paused returns a *RefusedError.
func (c *Client) ResumeRun(ctx context.Context, r PauseRequest) error {
	r.Reason = ""
	return c.pauseRun(ctx, protocol.ControlResume, r)
}

func (c *Client) pauseRun(ctx context.Context, action string, r PauseRequest) error {
	switch {
	case r.Run == "":
		return &core.InputError{Workflow: action, Err: errors.New("the run ID is empty")}
	case r.Workflow != "":
		return &core.InputError{Workflow: action + " " + r.Run, Err: errors.New("give a run or a workflow type, not both (Pause and Resume take a type)")}
	}
	msg := protocol.RunPause{Action: action, By: c.who(r.By), Reason: r.Reason}
	d, derr := decisions.Pause(c.opts.Namespace, r.Run, msg)
	proof, err := c.proof(ctx, r.Run, action, d, derr)
	if err != nil {
		return err
	}
	msg.Proof = proof
	var status runs.Status
	return c.update(ctx, r.Run, action, protocol.UpdatePause, msg, &status)
}
