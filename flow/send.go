package flow

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/events"
	"github.com/gateflow/gateflow/internal/display"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/signals"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Send sends the signal name with payload (as JSON) to the run run, or, with no run, to
// the mailboxes of (name, key), which deliver it to every run waiting on that key
// (WaitSignal(ctx, name, key, ...)) on any task queue, and keep it for runs of this
// run's queue that start waiting later: the same rules as flowclient.Client.SignalKey and
// `flowctl signal`. Given a run, key is the envelope's key,
// which the run's wait must match.
//
// The step is named name, of kind send. The envelope's sender is this run's ID and its ID
// is this run's ID and the step's activity ID ("rel-1/deploy-done"), so a retried or
// replayed step is delivered once: runs and mailboxes keep each ID once. A new run attempt sends
// again, under a new ID. A run that is not found or has ended fails the step; step options
// (Retry, StepTimeout, AllowFailure) come from c.With.
func (c *Context) Send(name, run, key string, payload any) error {
	to := "mailbox " + runs.Wait{Kind: runs.ForSignal, Name: name, Key: key}.String()
	if run != "" {
		to = "run " + run
	}
	return c.message(name, "send "+name+" to "+to, func(id string) (workflow.Future, string, error) {
		e := signals.Envelope{Name: name, Key: key, ID: envelopeID(c.RunID(), id), Sender: c.RunID(), SentAt: c.Now()}
		b, err := json.Marshal(payload)
		if err != nil {
			return nil, "", fmt.Errorf("send %s: the payload is not JSON: %w", name, err)
		}
		e.Payload = b
		if err := e.Validate(); err != nil {
			return nil, "", err
		}
		if run == "" && key == "" {
			return nil, "", fmt.Errorf("send %s: give a run, or a key for the mailbox", name)
		}
		out := "to " + to + ": " + display.Preview(string(e.Payload), 150)
		if c.run.setup.plan {
			return nil, out, nil
		}
		if run != "" {
			return workflow.SignalExternalWorkflow(c.wctx, run, "", protocol.SignalName, e), out, nil
		}
		o := c.options(nil)
		ao := workflow.ActivityOptions{ActivityID: id, Summary: "send " + name + " to " + to, StartToCloseTimeout: 30 * time.Second,
			RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 5}}
		if o.timeout > 0 {
			ao.StartToCloseTimeout = o.timeout
		}
		if o.retry != nil {
			ao.RetryPolicy = o.retry
		}
		return workflow.ExecuteActivity(workflow.WithActivityOptions(c.wctx, ao), protocol.MailboxPostActivity, e), out, nil
	}, run)
}

// CancelRun cancels the run id, as the step "cancel ID" of kind send: it tells the run
// who cancels it (this run) and why, then requests its cancellation, as `flowctl cancel
// --reason` does. It does not wait for the run to stop. A run that is not found or has
// ended fails the step, as does a run cancelling itself (return an error instead).
func (c *Context) CancelRun(id, reason string) error {
	name := "cancel " + id
	return c.message(name, "cancel run "+id, func(string) (workflow.Future, string, error) {
		switch {
		case strings.TrimSpace(id) == "":
			return nil, "", errors.New("cancel: the run ID is empty")
		case id == c.RunID():
			return nil, "", errors.New("cancel: a run cannot cancel itself; return an error instead")
		}
		out := "cancellation of run " + id + " requested"
		if c.run.setup.plan {
			return nil, out, nil
		}
		fut, set := workflow.NewFuture(c.wctx)
		workflow.Go(c.wctx, func(gctx workflow.Context) {
			by := protocol.CancelReason{By: c.RunID(), Reason: reason}
			if err := workflow.SignalExternalWorkflow(gctx, id, "", protocol.SignalCancel, by).Get(gctx, nil); err != nil {
				set.Set(nil, err)
				return
			}
			set.Set(nil, workflow.RequestCancelExternalWorkflow(gctx, id, "").Get(gctx, nil))
		})
		return fut, out, nil
	}, id)
}

// message runs a step of kind send named name: start validates and starts what the step
// sends (given the step's activity ID) and says what the step record's output will be;
// it returns no future for a plan. run is the run the message goes to, if any, for the
// error when it is not found or has ended.
func (c *Context) message(name, summary string, start func(id string) (workflow.Future, string, error), run string) error {
	rt := c.run
	held := c.holdWhilePaused(false)
	s := c.begin(name, runs.KindSend)
	p := &pending{idx: s.i, call: call{name: name, kind: runs.KindSend, opts: c.options(nil), summary: summary}}
	err := held
	if err == nil && strings.TrimSpace(name) == "" {
		err = errors.New("step name is empty")
	}
	if err == nil {
		err = s.checkWallTime()
	}
	if err == nil {
		err = c.countStep(name) // run_limits.go: the MaxSteps guard
	}
	var fut workflow.Future
	var out string
	if err == nil {
		fut, out, err = start(s.rec().ActivityID)
	}
	if err != nil {
		return s.refuse(err) // refused before anything was sent, as dispatch refuses a step
	}
	if fut == nil {
		s.end(s.began, runs.StepPlanned, "", summary)
		return nil
	}
	rt.publish()
	rt.emit(c.wctx, events.StepStarted, name, string(runs.StepRunning), "", map[string]any{"kind": runs.KindSend})
	err = fut.Get(c.wctx, nil)
	var gone *temporal.UnknownExternalWorkflowExecutionError
	if errors.As(err, &gone) {
		err = fmt.Errorf("run %s is not found or has ended", run)
	}
	return c.record(p, err, func() outcome { return outcome{output: out} })
}

// envelopeID is the ID of the envelope a run sends in the step with activity ID step:
// readable when it fits signals.MaxIDLen, a digest of both otherwise.
func envelopeID(run, step string) string {
	if id := run + "/" + step; len([]rune(id)) <= signals.MaxIDLen {
		return id
	}
	return signals.NewID(run, step, "", 0)
}
