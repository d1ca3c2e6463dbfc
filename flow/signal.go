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
	rt := ctx.run
	st := rt.state
	now := runNow(ctx.wctx)
	wait := runs.Wait{Kind: runs.ForSignal, Name: name, Key: key}
	what := wait.String()
	step := "signal " + strings.TrimPrefix(what, "signal:")
	i := beginStep(st, ctx.scope, name, runs.KindSignal, now)
	fail := func(status runs.StepStatus, err error) (T, error) {
		endStep(st, i, runNow(ctx.wctx), status, 0, err.Error(), "", nil)
		rt.publish()
		return zero, &StepError{Step: name, Kind: runs.KindSignal, Err: err}
	}
	if err := signals.ValidateName(name); err != nil {
		return fail(runs.StepFailed, err)
	}
	if err := ctx.countStep(name); err != nil { // run_limits.go: the MaxSteps guard
		return fail(runs.StepFailed, err)
	}
	if rt.plan {
		endStep(st, i, now, runs.StepPlanned, 0, "", "wait for "+what, nil)
		rt.publish()
		return zero, nil
	}
	sw := &signals.Wait{Name: name, Key: key, Since: now}
	var deadline time.Time
	if timeout > 0 {
		deadline = now.Add(timeout)
		sw.Deadline = &deadline
	}
	st.SignalWaits = append(st.SignalWaits, sw)
	if key != "" {
		// Since zero: the run gets every signal the mailbox keeps for the key, also those
		// sent before it started waiting (within the mailbox's retention).
		if err := ctx.mailbox(protocol.MailboxSubscribeActivity, name, key, time.Time{}); err != nil {
			return fail(runs.StepFailed, fmt.Errorf("subscribe to %s: %w", what, err))
		}
		defer func() {
			// Also when the wait was cancelled: leave the mailbox on a disconnected context.
			dctx, _ := workflow.NewDisconnectedContext(ctx.wctx)
			if err := ctx.withWorkflow(dctx).mailbox(protocol.MailboxUnsubscribeActivity, name, key, time.Time{}); err != nil {
				// The mailbox drops a subscriber whose run is gone when it next delivers.
				ctx.Logger().Warn("leave the mailbox", "signal", what, "error", err)
			}
		}()
	}
	schema, err := typeschema.Compile(reflect.TypeOf(&zero).Elem())
	if err != nil {
		return fail(runs.StepFailed, fmt.Errorf("%s: the schema of %T: %w", step, zero, err))
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
			rt.people.refuse(ctx.wctx, runs.RefusedSignal, step, r.Envelope.Sender, fmt.Errorf("%s (id %s): payload refused: %s", step, r.Envelope.ID, r.Error))
		}
		if ok {
			rt.emit(ctx.wctx, events.SignalReceived, name, "", "", map[string]any{"key": key, "id": e.ID, "sender": e.Sender})
			sw.Received = &e
			endStep(st, i, runNow(ctx.wctx), runs.StepCompleted, 0, "",
				fmt.Sprintf("from %s: %s", e.Sender, display.Preview(string(e.Payload), 150)), nil)
			rt.publish()
			return out, nil
		}
		left := time.Duration(0)
		if !deadline.IsZero() {
			left = deadline.Sub(runNow(ctx.wctx))
			if left <= 0 {
				return fail(runs.StepFailed, fmt.Errorf("%s: nothing arrived within %s", step, timeout))
			}
		}
		got, err := ctx.await(left, step, func() bool { return rt.people.signals.Has(name, key) })
		if err != nil {
			return fail(runs.StepCancelled, err)
		}
		if !got {
			return fail(runs.StepFailed, fmt.Errorf("%s: nothing arrived within %s", step, timeout))
		}
	}
}
