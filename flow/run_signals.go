package flow

import "go.temporal.io/sdk/workflow"

// signalListener serves all of a run's signal channels (votes and signals sent as
// Signals, the cancel reason, resume and permit grants) from one coroutine, so a waiting
// run holds two coroutines: its function and this one.
//
// The handling order is the one of the coroutines it replaces, one per channel, each
// looping on Receive, without a GetVersion: the SDK's dispatcher calls the coroutines of a
// run in the order they were created and each one runs until it blocks, so in every pass
// the old listeners took, one after the other, all the messages buffered on their own
// channel. This coroutine takes the place of the first of them (created where it was,
// with no coroutine created between the three the run always had) and, each time it is
// called, drains the channels with ReceiveAsync in the order they were added, which is the
// order the old coroutines were created in. The handlers neither block nor produce
// commands (they change the run's state and its details, read by the run's function in a
// later pass as before), so the commands of a recorded history stay the same, as the
// recorded histories of the examples show (examples/replay_test.go). Resume and permit
// grants, whose coroutines were created later, only set flags the run's function waits
// for; which pass sets them is unchanged.
//
// The coroutine waits on a disconnected context: the old listeners' Receive ignored the
// run's cancellation (a cancel reason arrives with it), and so does this one.
type signalListener struct {
	root    workflow.Context
	started bool
	cases   []*listenCase
}

// listenCase is one channel of the listener.
type listenCase struct {
	ch workflow.ReceiveChannel
	// take receives one buffered message and handles it; false when none was buffered.
	take func(workflow.Context) bool
	// once stops the case after its first message (the rest stay buffered, unread).
	once, done bool
}

// listen adds ch to the run's listener (starting its coroutine on the first channel);
// handle is called in the listener's coroutine for each message, in arrival order.
func listen[T any](l *signalListener, ch workflow.ReceiveChannel, handle func(workflow.Context, T)) {
	l.add(&listenCase{ch: ch, take: func(ctx workflow.Context) bool {
		var v T
		if !ch.ReceiveAsync(&v) {
			return false
		}
		handle(ctx, v)
		return true
	}})
}

// listenOnce adds ch to the run's listener for its first message, whose payload is not
// read; later messages stay buffered, unread.
func listenOnce(l *signalListener, ch workflow.ReceiveChannel, handle func()) {
	l.add(&listenCase{ch: ch, once: true, take: func(workflow.Context) bool {
		if !ch.ReceiveAsync(nil) {
			return false
		}
		handle()
		return true
	}})
}

func (l *signalListener) add(c *listenCase) {
	l.cases = append(l.cases, c)
	if l.started {
		return
	}
	l.started = true
	workflow.Go(l.root, func(gctx workflow.Context) {
		dctx, _ := workflow.NewDisconnectedContext(gctx)
		for {
			if err := workflow.Await(dctx, l.pending); err != nil {
				workflow.GetLogger(gctx).Error("signal listener stopped", "error", err)
				return
			}
			for _, c := range l.cases {
				for !c.done && c.take(gctx) {
					c.done = c.once
				}
			}
		}
	})
}

// pending reports whether a channel still served has a message buffered.
func (l *signalListener) pending() bool {
	for _, c := range l.cases {
		if !c.done && c.ch.Len() > 0 {
			return true
		}
	}
	return false
}
