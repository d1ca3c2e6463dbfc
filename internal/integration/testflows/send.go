package testflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/signals"
)

// SendFlows are the flows of the tests of runs that talk to other runs (send_test.go).
func SendFlows() []flow.Definition {
	return []flow.Definition{SendWaiter, Sender, Canceller, DetachingParent, DetachedKid, UnservedParent,
		TaggedParent, TaggedKid}
}

// Note is what the send tests send.
type Note struct {
	Text string `json:"text"`
}

// SendIn says where a run sends (or whom it cancels) and what.
type SendIn struct {
	Run    string `json:"run,omitempty"`
	Key    string `json:"key,omitempty"`
	Text   string `json:"text,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Tags are the child's worker tags (TaggedParent).
	Tags []string `json:"tags,omitempty"`
}

// WaiterOut is what SendWaiter got: the first "note" and, when a second came within a few
// seconds, that one too.
type WaiterOut struct {
	Got    []string          `json:"got"`
	First  *signals.Envelope `json:"first,omitempty"`
	Second string            `json:"second,omitempty"`
}

// SendWaiter waits for the signal "note" (with in.Key) and then a few seconds for another.
var SendWaiter = flow.Define("test.send.waiter", func(ctx *flow.Context, in SendIn) (WaiterOut, error) {
	var out WaiterOut
	n, err := flow.WaitSignal[Note](ctx, "note", in.Key, 2*time.Minute)
	if err != nil {
		return out, err
	}
	out.Got = append(out.Got, n.Text)
	if st := ctx.State(); len(st.SignalWaits) > 0 {
		out.First = st.SignalWaits[0].Received
	}
	if n, err := flow.WaitSignal[Note](ctx, "note", in.Key, 3*time.Second); err == nil {
		out.Got = append(out.Got, n.Text)
	} else {
		out.Second = err.Error()
	}
	return out, nil
})

// Sender sends the signal "note" with in.Text to the run in.Run, or to the mailbox of key
// in.Key.
var Sender = flow.Define("test.send.sender", func(ctx *flow.Context, in SendIn) (string, error) {
	return "sent", ctx.Send("note", in.Run, in.Key, Note{Text: in.Text})
})

// Canceller cancels the run in.Run with in.Reason.
var Canceller = flow.Define("test.send.canceller", func(ctx *flow.Context, in SendIn) (string, error) {
	return "cancelled " + in.Run, ctx.CancelRun(in.Run, in.Reason)
})

// DetachedKid waits up to two minutes for the signal "release", then completes.
var DetachedKid = flow.Define("test.send.detached-kid", func(ctx *flow.Context, _ SendIn) (string, error) {
	n, err := flow.WaitSignal[Note](ctx, "release", "", 2*time.Minute)
	return "released: " + n.Text, err
})

// DetachingParent runs DetachedKid as the detached child step "kid".
var DetachingParent = flow.Define("test.send.detaching-parent", func(ctx *flow.Context, in SendIn) (string, error) {
	return flow.Child(ctx, "kid", DetachedKid, in, flow.Detached())
})

// Unserved is a flow no worker serves: it is in no list of flows.
var Unserved = flow.Define("test.send.unserved", func(*flow.Context, SendIn) (string, error) { return "never", nil })

// UnservedParent runs Unserved as its child step "orphan".
var UnservedParent = flow.Define("test.send.unserved-parent", func(ctx *flow.Context, in SendIn) (string, error) {
	return flow.Child(ctx, "orphan", Unserved, in)
})

// TaggedKid says which task queue it ran on.
var TaggedKid = flow.Define("test.send.tagged-kid", func(ctx *flow.Context, _ SendIn) (string, error) {
	return workflow.GetInfo(ctx.Workflow()).TaskQueueName, nil
})

// TaggedParent runs TaggedKid as the child step "kid" on the workers with in.Tags.
var TaggedParent = flow.Define("test.send.tagged-parent", func(ctx *flow.Context, in SendIn) (string, error) {
	return flow.Child(ctx, "kid", TaggedKid, in, flow.ChildTags(in.Tags...))
})
