package flowctl

import (
	"context"
	"time"

	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/entity"
	"github.com/gateflow/gateflow/signals"
)

// receivedSignal is the signal name with ID id that run has received already, if its state
// says so (a signal is delivered once per ID: sending it again would change nothing).
func receivedSignal(ctx context.Context, c *flowclient.Client, run, name, id string) *signals.Envelope {
	d, err := c.Describe(ctx, run)
	if err != nil || d.State == nil {
		return nil // the send reports what is wrong with the run
	}
	for _, w := range d.State.SignalWaits {
		if w != nil && w.Received != nil && w.Received.Name == name && w.Received.ID == id {
			return w.Received
		}
	}
	return nil
}

// keptSignal is the task queue whose mailbox keeps a signal like e already (its ID
// repeated), or "" (entity.KeptSignal).
func (a *app) keptSignal(ctx context.Context, e signals.Envelope) string {
	if a.tc == nil {
		return ""
	}
	q, err := entity.KeptSignal(ctx, a.tc, a.taskQueue, e)
	if err != nil {
		return "" // the send reports what is wrong
	}
	return q
}

// duplicateSignal reports a signal that where (a run, or a mailbox) has already and that
// was not sent again.
func duplicateSignal(where string, e signals.Envelope) view {
	when := ""
	if !e.SentAt.IsZero() {
		when = " (sent " + e.SentAt.UTC().Format(time.RFC3339) + ")"
	}
	return view{value: struct {
		signals.Envelope
		Duplicate bool `json:"duplicate"`
	}{e, true}, text: say("Duplicate: %s signal %s with id %s already%s; not sent again.\n", where, e.Name, e.ID, when)}
}
