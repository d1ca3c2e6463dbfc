package flow

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/events"
	"github.com/gateflow/gateflow/internal/display"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/typeschema"
	"github.com/gateflow/gateflow/signals"
	"go.temporal.io/sdk/workflow"
)

// ForSignal waits for the signal name (with key, if not empty) and returns its payload
// decoded as T, as the step name. A signal sent before the wait is kept and delivered; the
// same ID twice is delivered once; a payload that does not fit T is recorded as refused
// and the wait goes on. Keyed signals sent without a run ID (flowctl signal NAME --key K)
// reach every run waiting on that key, on any task queue, through the mailbox workflow of
// the run's queue, which keeps them for runs that start waiting later. A timeout of 0 waits without a limit.
func WaitSignal[T any](ctx *Context, name, key string, timeout time.Duration) (T, error) {
	var zero T
	wait := runs.Wait{Kind: runs.ForSignal, Name: name, Key: key}
	what := wait.String()
	s := ctx.begin(name, runs.KindSignal)
	if err := signals.ValidateName(name); err != nil {
		return zero, s.fail(s.now(), runs.StepFailed, err)
	}
	if err := ctx.countStep(name); err != nil { // run_limits.go: the MaxSteps guard
		return zero, s.fail(s.now(), runs.StepFailed, err)
	}
	if s.planned("wait for " + what) {
		return zero, nil
	}
	sw := &signals.Wait{Name: name, Key: key, Since: s.began}
	if timeout > 0 {
		deadline := s.began.Add(timeout)
		sw.Deadline = &deadline
	}
	ctx.run.people.openSignalWait(sw)
	if key != "" {
		// Since zero: the run gets every signal the mailbox keeps for the key, also those
		// sent before it started waiting (within the mailbox's retention).
		if err := ctx.mailbox(protocol.MailboxSubscribeActivity, name, key, time.Time{}); err != nil {
			return zero, s.fail(s.now(), runs.StepFailed, fmt.Errorf("subscribe to %s: %w", what, err))
		}
		defer ctx.leaveMailbox(name, key, what)
	}
	return awaitSignal[T](s, sw, wait, timeout)
}

// leaveMailbox unsubscribes the run from the keyed signal name, also when the wait was
// cancelled: on a disconnected context.
func (c *Context) leaveMailbox(name, key, what string) {
	dctx, _ := workflow.NewDisconnectedContext(c.wctx)
	if err := c.withWorkflow(dctx).mailbox(protocol.MailboxUnsubscribeActivity, name, key, time.Time{}); err != nil {
		// The mailbox drops a subscriber whose run is gone when it next delivers.
		c.Logger().Warn("leave the mailbox", "signal", what, "error", err)
	}
}

// awaitSignal is WaitSignal's wait for the signal sw, as the step s: a payload that does
// not fit T is refused and the wait goes on, until sw's deadline if it has one.
func awaitSignal[T any](s *step, sw *signals.Wait, wait runs.Wait, timeout time.Duration) (T, error) {
	var zero T
	ctx, rt := s.c, s.c.run
	name, key, what := sw.Name, sw.Key, wait.String()
	label := "signal " + strings.TrimPrefix(what, "signal:")
	fail := func(status runs.StepStatus, err error) (T, error) {
		return zero, s.fail(s.now(), status, err)
	}
	schema, err := typeschema.Compile(reflect.TypeOf(&zero).Elem())
	if err != nil {
		return fail(runs.StepFailed, fmt.Errorf("%s: the schema of %T: %w", label, zero, err))
	}
	var out T
	check := func(e signals.Envelope) error {
		if err := schema.Validate(orNull(e.Payload)); err != nil {
			return err
		}
		var v T
		if err := json.Unmarshal(orNull(e.Payload), &v); err != nil {
			return err
		}
		out = v
		return nil
	}
	rt.emit(ctx.wctx, events.SignalAwaited, name, "", what, map[string]any{"key": key})
	ctx.wait(wait)
	defer ctx.unwait(wait)
	for {
		e, rejected, ok := rt.people.signals.TakeValid(name, key, check)
		for _, r := range rejected {
			rt.people.refuse(ctx.wctx, runs.RefusedSignal, label, r.Envelope.Sender, fmt.Errorf("%s (id %s): payload refused: %s", label, r.Envelope.ID, r.Error))
		}
		if ok {
			rt.emit(ctx.wctx, events.SignalReceived, name, "", "", map[string]any{"key": key, "id": e.ID, "sender": e.Sender})
			sw.Received = &e
			s.end(s.now(), runs.StepCompleted, "", fmt.Sprintf("from %s: %s", e.Sender, display.Preview(string(e.Payload), 150)))
			return out, nil
		}
		left := time.Duration(0)
		if sw.Deadline != nil {
			left = sw.Deadline.Sub(runNow(ctx.wctx))
			if left <= 0 {
				return fail(runs.StepFailed, fmt.Errorf("%s: nothing arrived within %s", label, timeout))
			}
		}
		got, err := ctx.await(left, label, func() bool { return rt.people.signals.Has(name, key) })
		if err != nil {
			return fail(runs.StepCancelled, err)
		}
		if !got {
			return fail(runs.StepFailed, fmt.Errorf("%s: nothing arrived within %s", label, timeout))
		}
	}
}
