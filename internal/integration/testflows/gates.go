package testflows

import (
	"time"

	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/gates"
)

// GateFlows are the flows of the polled gate tests (gate_test.go).
func GateFlows() []flow.Definition { return []flow.Definition{HTTPGate, CommandGate} }

// GateInput configures the gate flows: the URL an "http" gate polls (its field "status":
// "green" approves, "red" rejects) or the command a "command" gate runs, and the request's
// timing.
type GateInput struct {
	URL         string          `json:"url,omitempty"`
	Command     string          `json:"command,omitempty"`
	Interval    time.Duration   `json:"interval,omitempty"`
	Timeout     time.Duration   `json:"timeout,omitempty"`
	OnTimeout   gates.OnTimeout `json:"on_timeout,omitempty"`
	AllowManual bool            `json:"allow_manual,omitempty"`
}

func (in GateInput) request(typ string, params any) gates.Request {
	return gates.Request{Type: typ, Params: params, PollInterval: in.Interval, Timeout: in.Timeout,
		OnTimeout: in.OnTimeout, AllowManual: in.AllowManual}
}

// HTTPGate waits at the "http" gate "ready" and returns its result.
var HTTPGate = flow.Define("test.gate.http", func(ctx *flow.Context, in GateInput) (gates.Result, error) {
	return ctx.Gate("ready", in.request(gates.HTTPType, gates.HTTPParams{URL: in.URL, Field: "status", Equals: "green",
		RejectValues: []any{"red"}}))
})

// CommandGate waits at the "command" gate "script" and returns its result.
var CommandGate = flow.Define("test.gate.command", func(ctx *flow.Context, in GateInput) (gates.Result, error) {
	return ctx.Gate("script", in.request(gates.CommandType, gates.CommandParams{Command: in.Command}))
})
