package testflows

import (
	"errors"
	"strings"
	"time"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
)

// StartFlows are the flows of the start kinds tests served by the shared worker: a source
// whose runs' ends trigger the others, and a flow signals start.
func StartFlows() []flow.Definition {
	return []flow.Definition{TriggerSource, OnDone, OnFailed, OnDoneMismatch, SignalStarted}
}

// OnceInput is the input of Once.
type OnceInput struct {
	Note string `json:"note"`
}

// Once is started once by the workers that serve it (tests serve it on their own queue).
var Once = flow.Define("test.once", func(ctx *flow.Context, in OnceInput) (string, error) {
	return "once:" + in.Note, nil
}, flow.Once(OnceInput{Note: "boot"}))

// SourceInput says whether a TriggerSource run fails, and the value it outputs.
type SourceInput struct {
	Value string `json:"value"`
	Fail  bool   `json:"fail,omitempty"`
}

// SourceOutput is what a TriggerSource run returns, completed or failed.
type SourceOutput struct {
	Value string `json:"value"`
}

// TriggerSource outputs its value, and fails (for good) when asked.
var TriggerSource = flow.Define("test.trigger.source", func(ctx *flow.Context, in SourceInput) (SourceOutput, error) {
	if in.Fail {
		return SourceOutput{Value: in.Value}, flow.Permanent(errors.New("asked to fail"))
	}
	return SourceOutput{Value: in.Value}, nil
})

// OnDone is started by completed TriggerSource runs, with their output.
var OnDone = flow.Define("test.trigger.ondone", func(ctx *flow.Context, in SourceOutput) (string, error) {
	return "done:" + in.Value, nil
}, flow.OnRunOf("test.trigger.source", core.WhenCompleted))

// OnFailed is started by failed TriggerSource runs, with their output.
var OnFailed = flow.Define("test.trigger.onfailed", func(ctx *flow.Context, in SourceOutput) (string, error) {
	return "failed:" + in.Value, nil
}, flow.OnRunOf("test.trigger.source", core.WhenFailed))

// OnDoneMismatch is triggered by completed TriggerSource runs but takes a number: its
// start is refused.
var OnDoneMismatch = flow.Define("test.trigger.mismatch", func(ctx *flow.Context, n int) (int, error) {
	return n, nil
}, flow.OnRunOf("test.trigger.source", core.WhenCompleted))

// OrderPlaced is the payload of the "order-placed" signal that starts SignalStarted.
type OrderPlaced struct {
	Order string `json:"order"`
	Item  string `json:"item"`
}

// SignalStarted is started by the signal "order-placed", one run per order (the key): it
// takes the signal that started it and the next one with the same key, and returns their
// items.
var SignalStarted = flow.Define("test.signal.started", func(ctx *flow.Context, in OrderPlaced) (string, error) {
	var items []string
	for range 2 {
		s, err := flow.WaitSignal[OrderPlaced](ctx, "order-placed", in.Order, time.Minute)
		if err != nil {
			return strings.Join(items, ","), err
		}
		items = append(items, s.Item)
	}
	return in.Order + ":" + strings.Join(items, ","), nil
}, flow.OnSignal("order-placed"))
