package testflows

import (
	"time"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/flow"
)

// PeopleFlows are the flows of the people-in-the-loop tests.
func PeopleFlows() []flow.Definition {
	return []flow.Definition{EarlyGate, TimedGate, Pings, Keyed}
}

// EarlyGate sleeps, then opens the gate "gate" (alice decides).
var EarlyGate = flow.Define("test.earlygate", func(ctx *flow.Context, _ struct{}) (approval.Decision, error) {
	if err := ctx.Sleep("before", 2*time.Second); err != nil {
		return approval.Decision{}, err
	}
	return ctx.Approval("gate", approval.Request{Message: "go?", Approvers: []string{"alice"}})
})

// TimedGateInput chooses the deadline policy.
type TimedGateInput struct {
	OnTimeout approval.OnTimeout `json:"on_timeout"`
	// Handle makes the handler swallow the gate's error.
	Handle bool `json:"handle"`
}

// TimedGate opens a gate nobody answers, with a 1s deadline.
var TimedGate = flow.Define("test.timedgate", func(ctx *flow.Context, in TimedGateInput) (string, error) {
	d, err := ctx.Approval("quick", approval.Request{Message: "anyone?", Approvers: []string{"alice"},
		Timeout: time.Second, OnTimeout: in.OnTimeout})
	if err != nil && in.Handle {
		return "handled: " + string(d.Outcome), nil
	}
	return string(d.Outcome), err
})

// Ping is a test signal's payload.
type Ping struct {
	N int `json:"n"`
}

// Pings sleeps, then waits for "ping" twice (the second with a short timeout) and returns
// what it got.
var Pings = flow.Define("test.pings", func(ctx *flow.Context, _ struct{}) ([]int, error) {
	if err := ctx.Sleep("before", 2*time.Second); err != nil {
		return nil, err
	}
	first, err := flow.WaitSignal[Ping](ctx, "ping", "", time.Minute)
	if err != nil {
		return nil, err
	}
	got := []int{first.N}
	if second, err := flow.WaitSignal[Ping](ctx, "ping", "", 2*time.Second); err == nil {
		got = append(got, second.N)
	}
	return got, nil
})

// KeyedInput is the key Keyed waits on.
type KeyedInput struct {
	Key string `json:"key"`
}

// Keyed waits for the keyed signal "go".
var Keyed = flow.Define("test.keyed", func(ctx *flow.Context, in KeyedInput) (Ping, error) {
	return flow.WaitSignal[Ping](ctx, "go", in.Key, time.Minute)
})
