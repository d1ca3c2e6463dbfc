package entity

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/signals"
)

// MailboxState is the mailbox workflow's input (and its state across continue-as-new).
// The delivery rules are signals.Mailbox's.
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
	if err := workflow.SetQueryHandlerWithOptions(ctx, protocol.QueryMailboxKept, func() ([]signals.Envelope, error) {
		return m.Kept(workflow.Now(ctx)), nil
	}, workflow.QueryHandlerOptions{Description: "The signals this mailbox keeps (within retention), oldest first"}); err != nil {
		return err
	}
	post := workflow.GetSignalChannel(ctx, protocol.MailboxPost)
	sub := workflow.GetSignalChannel(ctx, protocol.MailboxSubscribe)
	unsub := workflow.GetSignalChannel(ctx, protocol.MailboxUnsubscribe)
	deliver := func(id string, e signals.Envelope) {
		if err := workflow.SignalExternalWorkflow(ctx, id, "", protocol.SignalName, e).Get(ctx, nil); err != nil {
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
				return workflow.NewContinueAsNewError(ctx, protocol.MailboxWorkflowType, MailboxState{Name: in.Name, Key: in.Key, Mailbox: m})
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
			var r protocol.MailboxRequest
			c.Receive(ctx, &r)
			for _, e := range m.Subscribe(r.WorkflowID, r.Since, workflow.Now(ctx)) {
				deliver(r.WorkflowID, e)
			}
		})
		sel.AddReceive(unsub, func(c workflow.ReceiveChannel, _ bool) {
			var r protocol.MailboxRequest
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

// mailboxActivities (un)subscribe runs at the mailbox of a (name, key).
type mailboxActivities struct{ queue string }

func (m mailboxActivities) subscribe(ctx context.Context, r protocol.MailboxRequest) error {
	return SignalMailbox(ctx, activity.GetClient(ctx), m.queue, r.Name, r.Key, protocol.MailboxSubscribe, r)
}

func (m mailboxActivities) unsubscribe(ctx context.Context, r protocol.MailboxRequest) error {
	return SignalMailbox(ctx, activity.GetClient(ctx), m.queue, r.Name, r.Key, protocol.MailboxUnsubscribe, r)
}

// post posts the envelope a run sends (flow.Context.Send) to the mailboxes of (e.Name,
// e.Key) on every task queue (PostMailboxes). A retried post is delivered once: a mailbox
// keeps each envelope ID once.
func (m mailboxActivities) post(ctx context.Context, e signals.Envelope) error {
	tc := activity.GetClient(ctx)
	if tc == nil {
		return temporal.NewNonRetryableApplicationError("no Temporal client to reach the mailbox (a test environment: mock the step)", "gateflow.NoClient", nil)
	}
	_, err := PostMailboxes(ctx, tc, m.queue, e)
	return err
}

// SignalMailbox sends signal (protocol.MailboxPost with a signals.Envelope, or a
// subscription) to the mailbox of (name, key) on queue, starting it if needed.
func SignalMailbox(ctx context.Context, tc client.Client, queue, name, key, signal string, arg any) error {
	id := protocol.MailboxID(queue, name, key)
	_, err := tc.SignalWithStartWorkflow(ctx, id, signal, arg, client.StartWorkflowOptions{
		ID: id, TaskQueue: queue, StaticSummary: fmt.Sprintf("gateflow mailbox of signal %s, key %s", name, key),
	}, protocol.MailboxWorkflowType, MailboxState{Name: name, Key: key})
	return err
}
