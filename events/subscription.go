package events

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Types lists every event type, in the order of the constants.
var Types = []Type{RunStatus, StepStarted, StepCompleted, StepFailed, StepRetrying, ApprovalRequested, ApprovalDecided,
	InputRequested, InputReceived, SignalAwaited, SignalReceived, BudgetWarning, BudgetExceeded}

// Subscription chooses the events a sink receives: those of one of Types from runs of one
// of Workflows (flow names). An empty list means all.
type Subscription struct {
	Types     []Type
	Workflows []string
}

// Wants reports whether the subscription takes an event of type t from a run of
// workflow; t == "" asks whether it takes any event of that workflow.
func (s Subscription) Wants(workflow string, t Type) bool {
	if len(s.Workflows) > 0 && !slices.Contains(s.Workflows, workflow) {
		return false
	}
	return t == "" || len(s.Types) == 0 || slices.Contains(s.Types, t)
}

// Validate reports an unknown event type or an empty workflow name.
func (s Subscription) Validate() error {
	for _, t := range s.Types {
		if !slices.Contains(Types, t) {
			return fmt.Errorf("subscription: unknown event type %q (known: %v)", t, Types)
		}
	}
	for _, w := range s.Workflows {
		if w == "" {
			return errors.New("subscription: an empty workflow name")
		}
	}
	return nil
}

// Subscribed is a sink that receives only the events its subscription wants.
type Subscribed struct {
	Sink         Sink
	Subscription Subscription
}

// Subscribe is sink narrowed to the events sub wants, e.g.
// events.Subscribe(events.Webhook{URL: u}, events.Subscription{Types: []events.Type{events.ApprovalRequested}}).
func Subscribe(sink Sink, sub Subscription) Subscribed {
	return Subscribed{Sink: sink, Subscription: sub}
}

// Deliver implements Sink: it passes e on when the subscription wants it.
func (s Subscribed) Deliver(ctx context.Context, e Event) error {
	if !s.Subscription.Wants(e.Workflow, e.Type) {
		return nil
	}
	return s.Sink.Deliver(ctx, e)
}

// Wants implements Filter.
func (s Subscribed) Wants(workflow string, t Type) bool {
	if !s.Subscription.Wants(workflow, t) {
		return false
	}
	return Wants(s.Sink, workflow, t)
}

// Filter is a sink that wants only some events; the worker asks it before it delivers
// (and before it schedules a delivery at all). Subscribed is one.
type Filter interface {
	Wants(workflow string, t Type) bool
}

// Wants reports whether sink wants an event of type t from a run of workflow: a Filter
// says so, any other sink wants every event. t == "" asks about any event of workflow.
func Wants(sink Sink, workflow string, t Type) bool {
	if f, ok := sink.(Filter); ok {
		return f.Wants(workflow, t)
	}
	return true
}

// Check reports a nil sink, or a Subscribed with a nil sink or an invalid subscription,
// naming the sink by its index.
func Check(sinks []Sink) error {
	for i, s := range sinks {
		if s == nil {
			return fmt.Errorf("event sink %d is nil", i)
		}
		if sub, ok := s.(Subscribed); ok {
			if sub.Sink == nil {
				return fmt.Errorf("event sink %d: Subscribed without a sink", i)
			}
			if err := sub.Subscription.Validate(); err != nil {
				return fmt.Errorf("event sink %d: %w", i, err)
			}
		}
	}
	return nil
}

// ParseTypes reads a comma-separated list of event types ("step.failed,
// approval.requested"); an unknown type is an error naming it.
func ParseTypes(s string) ([]Type, error) {
	var out []Type
	for _, part := range strings.Split(s, ",") {
		t := Type(strings.TrimSpace(part))
		if t == "" {
			continue
		}
		if !slices.Contains(Types, t) {
			return nil, fmt.Errorf("unknown event type %q (known: %v)", t, Types)
		}
		out = append(out, t)
	}
	return out, nil
}
