package flow

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/signals"
)

// SignalName is the Signal that carries a signals.Envelope {name, key, id, payload,
// sender} to a run. Signals that arrive before the run waits for them are kept; an ID seen
// before is delivered once.
const SignalName = signals.SignalName

// SignalWait is what a run keeps about one WaitSignal.
type SignalWait struct {
	Name     string            `json:"name"`
	Key      string            `json:"key,omitempty"`
	Since    time.Time         `json:"since"`
	Deadline *time.Time        `json:"deadline,omitempty"`
	Received *signals.Envelope `json:"received,omitempty"`
}

func (rt *runner) registerSignals(wctx workflow.Context) error {
	ch := workflow.GetSignalChannel(wctx, SignalName)
	workflow.Go(wctx, func(gctx workflow.Context) {
		for {
			var e signals.Envelope
			ch.Receive(gctx, &e)
			if err := e.Validate(); err != nil {
				rt.refuse(gctx, "signal", e.Name, e.Sender, err)
				continue
			}
			if e.SentAt.IsZero() {
				e.SentAt = workflow.Now(gctx)
			}
			rt.signals.Add(e)
			rt.publish()
		}
	})
	return nil
}

// WaitSignal waits for the signal name (with key, if not empty) and returns its payload
// decoded as T, as the step name. A signal sent before the wait is kept and delivered; the
// same ID twice is delivered once; a payload that does not fit T is recorded as refused
// and the wait goes on. Keyed signals sent without a run ID (flowctl signal NAME --key K)
// reach every run waiting on that key through a mailbox workflow, which keeps them for runs
// that start waiting later. A timeout of 0 waits without a limit.
func WaitSignal[T any](ctx *Context, name, key string, timeout time.Duration) (T, error) {
	var zero T
	rt := ctx.run
	st := rt.state
	now := workflow.Now(ctx.wctx)
	step := "signal " + name
	what := "signal:" + name
	if key != "" {
		step += "/" + key
		what += "/" + key
	}
	i := st.beginStep(name, KindSignal, now)
	fail := func(status StepStatus, err error) (T, error) {
		st.endStep(i, workflow.Now(ctx.wctx), status, 0, err.Error(), "", nil)
		rt.publish()
		return zero, &StepError{Step: name, Kind: KindSignal, Err: err}
	}
	if err := signals.ValidateName(name); err != nil {
		return fail(StepFailed, err)
	}
	if rt.plan {
		st.endStep(i, now, StepPlanned, 0, "", "wait for "+what, nil)
		rt.publish()
		return zero, nil
	}
	sw := &SignalWait{Name: name, Key: key, Since: now}
	var deadline time.Time
	if timeout > 0 {
		deadline = now.Add(timeout)
		sw.Deadline = &deadline
	}
	st.SignalWaits = append(st.SignalWaits, sw)
	if key != "" {
		// Since zero: the run gets every signal the mailbox keeps for the key, also those
		// sent before it started waiting (within the mailbox's retention).
		if err := ctx.mailbox(MailboxSubscribe, name, key, time.Time{}); err != nil {
			return fail(StepFailed, fmt.Errorf("subscribe to %s: %w", what, err))
		}
		defer func() {
			// Also when the wait was cancelled: leave the mailbox on a disconnected context.
			dctx, _ := workflow.NewDisconnectedContext(ctx.wctx)
			_ = ctx.withWorkflow(dctx).mailbox(MailboxUnsubscribe, name, key, time.Time{})
		}()
	}
	schema := SchemaOf(reflect.TypeOf(&zero).Elem())
	var out T
	check := func(e signals.Envelope) error {
		if err := checkInput(schema, orNull(e.Payload)); err != nil {
			return err
		}
		var v T
		if err := json.Unmarshal(orNull(e.Payload), &v); err != nil {
			return err
		}
		out = v
		return nil
	}
	rt.emit(ctx.wctx, EventSignalAwaited, name, "", what, map[string]any{"key": key})
	ctx.wait(what, StatusWaitingSignal)
	defer ctx.unwait(what)
	for {
		e, rejected, ok := rt.signals.TakeValid(name, key, check)
		for _, r := range rejected {
			rt.refuse(ctx.wctx, "signal", step, r.Envelope.Sender, fmt.Errorf("%s (id %s): payload refused: %s", step, r.Envelope.ID, r.Error))
		}
		if ok {
			rt.emit(ctx.wctx, EventSignalReceived, name, "", "", map[string]any{"key": key, "id": e.ID, "sender": e.Sender})
			sw.Received = &e
			st.endStep(i, workflow.Now(ctx.wctx), StepCompleted, 0, "",
				fmt.Sprintf("from %s: %s", e.Sender, Preview(string(e.Payload), 150)), nil)
			rt.publish()
			return out, nil
		}
		left := time.Duration(0)
		if !deadline.IsZero() {
			left = deadline.Sub(workflow.Now(ctx.wctx))
			if left <= 0 {
				return fail(StepFailed, fmt.Errorf("%s: nothing arrived within %s", step, timeout))
			}
		}
		got, err := ctx.await(left, step, func() bool { return rt.signals.Has(name, key) })
		if err != nil {
			return fail(StepCancelled, err)
		}
		if !got {
			return fail(StepFailed, fmt.Errorf("%s: nothing arrived within %s", step, timeout))
		}
	}
}

// Mailbox activity names and the entity workflow's type and messages.
const (
	MailboxWorkflowType = "gateflow.mailbox"
	MailboxSubscribe    = "gateflow.mailbox.subscribe"
	MailboxUnsubscribe  = "gateflow.mailbox.unsubscribe"
	mailboxPost         = "post"
	mailboxSub          = "subscribe"
	mailboxUnsub        = "unsubscribe"
)

// MailboxRequest asks the mailbox of (Name, Key) to add or drop a subscriber run.
type MailboxRequest struct {
	Name       string    `json:"name"`
	Key        string    `json:"key"`
	WorkflowID string    `json:"workflow_id"`
	Since      time.Time `json:"since"`
}

// mailbox runs the (un)subscribe activity for this run.
func (c *Context) mailbox(op, name, key string, since time.Time) error {
	actx := workflow.WithActivityOptions(c.wctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		Summary:             fmt.Sprintf("%s %s/%s", op, name, key),
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5},
	})
	req := MailboxRequest{Name: name, Key: key, WorkflowID: c.RunID(), Since: since}
	return workflow.ExecuteActivity(actx, op, req).Get(actx, nil)
}

// mailboxActivities signal the mailbox workflow of a (name, key), starting it if needed.
type mailboxActivities struct{ queue string }

func (m mailboxActivities) subscribe(ctx context.Context, r MailboxRequest) error {
	return signalMailbox(ctx, activity.GetClient(ctx), m.queue, r.Name, r.Key, mailboxSub, r)
}

func (m mailboxActivities) unsubscribe(ctx context.Context, r MailboxRequest) error {
	return signalMailbox(ctx, activity.GetClient(ctx), m.queue, r.Name, r.Key, mailboxUnsub, r)
}

// signalMailbox sends a message to the mailbox of (name, key), starting it if needed.
func signalMailbox(ctx context.Context, tc client.Client, queue, name, key, signal string, arg any) error {
	id := MailboxWorkflowID(queue, name, key)
	_, err := tc.SignalWithStartWorkflow(ctx, id, signal, arg, client.StartWorkflowOptions{
		ID: id, TaskQueue: queue, StaticSummary: fmt.Sprintf("gateflow mailbox of signal %s, key %s", name, key),
	}, MailboxWorkflowType, MailboxState{Name: name, Key: key})
	return err
}

// MailboxWorkflowID is the ID of the mailbox of (name, key) on a task queue: a queue's
// workers serve its own mailboxes.
func MailboxWorkflowID(queue, name, key string) string {
	return signals.MailboxID(name, key) + "@" + queue
}

// MailboxState is the mailbox workflow's input (and its state across continue-as-new).
type MailboxState struct {
	Name    string           `json:"name"`
	Key     string           `json:"key"`
	Mailbox *signals.Mailbox `json:"mailbox,omitempty"`
}

// mailboxMaxEvents bounds a mailbox's history before it continues as new.
const mailboxMaxEvents = 500

// mailboxWorkflow keeps the signals of one (name, key) for the retention window and
// delivers them to every run waiting on that key.
func mailboxWorkflow(ctx workflow.Context, in MailboxState) error {
	m := in.Mailbox
	if m == nil {
		m = signals.NewMailbox(in.Name, in.Key, signals.DefaultRetention)
	}
	post := workflow.GetSignalChannel(ctx, mailboxPost)
	sub := workflow.GetSignalChannel(ctx, mailboxSub)
	unsub := workflow.GetSignalChannel(ctx, mailboxUnsub)
	deliver := func(id string, e signals.Envelope) {
		if err := workflow.SignalExternalWorkflow(ctx, id, "", SignalName, e).Get(ctx, nil); err != nil {
			workflow.GetLogger(ctx).Warn("deliver signal", "run", id, "error", err)
			m.Unsubscribe(id) // the run is gone
			return
		}
		m.MarkDelivered(id, e.ID)
	}
	for events := 0; ; events++ {
		now := workflow.Now(ctx)
		m.Expire(now)
		if m.Idle(now) && post.Len() == 0 && sub.Len() == 0 {
			return nil
		}
		if events >= mailboxMaxEvents || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			if post.Len() == 0 && sub.Len() == 0 && unsub.Len() == 0 {
				return workflow.NewContinueAsNewError(ctx, MailboxWorkflowType, MailboxState{Name: in.Name, Key: in.Key, Mailbox: m})
			}
		}
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(post, func(c workflow.ReceiveChannel, _ bool) {
			var e signals.Envelope
			c.Receive(ctx, &e)
			if e.SentAt.IsZero() {
				e.SentAt = workflow.Now(ctx)
			}
			if m.Post(e, workflow.Now(ctx)) {
				for _, id := range m.Deliveries(e) {
					deliver(id, e)
				}
			}
		})
		sel.AddReceive(sub, func(c workflow.ReceiveChannel, _ bool) {
			var r MailboxRequest
			c.Receive(ctx, &r)
			for _, e := range m.Subscribe(r.WorkflowID, r.Since, workflow.Now(ctx)) {
				deliver(r.WorkflowID, e)
			}
		})
		sel.AddReceive(unsub, func(c workflow.ReceiveChannel, _ bool) {
			var r MailboxRequest
			c.Receive(ctx, &r)
			m.Unsubscribe(r.WorkflowID)
		})
		if next, ok := m.NextExpiry(); ok {
			tctx, cancel := workflow.WithCancel(ctx)
			sel.AddFuture(workflow.NewTimer(tctx, max(next.Sub(now), time.Second)), func(workflow.Future) {})
			sel.Select(ctx)
			cancel()
			continue
		}
		sel.Select(ctx)
	}
}
