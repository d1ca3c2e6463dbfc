// Package flow is gateflow's authoring API and its runtime on Temporal.
//
// A workflow author writes a plain Go function and defines it with Define. The name given
// to Define is the Temporal workflow type; the function runs inside gateflow's run wrapper,
// which keeps a record of every step, answers the Query "gateflow.state", keeps the
// FlowStatus search attribute current and writes readable details for the Temporal Web UI.
//
//	var Hello = flow.Define("hello", hello, flow.Description("Say hello"))
//
//	func hello(ctx *flow.Context, in HelloInput) (HelloOutput, error) {
//		out, err := ctx.Shell("greet", activities.Shell{Command: "echo hello " + in.Name})
//		...
//	}
//
// Every step is a Temporal activity whose ActivityID and Summary are the step's name, so
// the Web UI's timeline reads like the handler. Handlers follow Temporal's determinism
// rules: no goroutines, clocks, randomness or I/O outside steps.
//
// NewWorker serves defined flows on a task queue and publishes their catalog (name,
// description, category, version, input type) so clients can list them and refuse unknown
// names before anything starts. NewClient starts and inspects runs; flowctl is built on it.
package flow
