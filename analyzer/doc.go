// Package analyzer owns flowvet's determinism check for gateflow flow handlers: the
// go/analysis analyzer Analyzer (named "flowdeterminism") and nothing else. The command
// that runs it is cmd/flowvet.
//
// A Temporal workflow is replayed from its history, so the code of a flow handler must make
// the same decisions in the same order every time it runs. The analyzer finds the flow
// handlers of a package by their types, not their names: every function declaration and
// every function literal whose first parameter has type *flow.Context, where flow is
// github.com/gateflow/gateflow/flow. That covers handlers func(*flow.Context, I) (O, error),
// branch funcs func(*flow.Context) error and item funcs func(*flow.Context, int, T) (O, error).
// From each handler it follows static calls to the functions and methods declared in the
// same package, transitively, checking each of them once (with the function literals
// inside them). Calls through interfaces or function values are not followed, and neither
// are functions only passed by name (an activity handed to a step runs outside the
// workflow and may do all of the below). The package github.com/gateflow/gateflow/flow
// itself, the runtime, is not checked.
//
// Inside all of those functions it reports:
//
//   - go statements (use flow branches, workflow.Go, instead);
//   - select statements (use workflow.NewSelector);
//   - native channels: sends, receives, make(chan ...) and ranging over a channel (use
//     workflow.NewChannel);
//   - ranging over a map, or over maps.Keys, maps.Values or maps.All: the order is random,
//     so sort the keys first;
//   - the wall clock and native timers: time.Now, time.Sleep, time.After, time.AfterFunc,
//     time.Tick, time.NewTimer, time.NewTicker, time.Since and time.Until (use ctx.Now and
//     ctx.Sleep);
//   - randomness: the functions of math/rand and math/rand/v2 (except the constructors of
//     seeded generators) and of crypto/rand;
//   - clients: a call of a method on a value of a type from go.temporal.io/sdk/client (such
//     as client.Client or client.WorkflowRun) or on *flowclient.Client, and calls of the
//     functions that dial a Temporal client (client.Dial, client.NewLazyClient, ...).
//
// Each message names the construct, the handler that reaches it and, when the construct is
// in a callee, the chain of calls from the handler:
//
//	go statement in flow handler ship (via notifyAll): use flow branches (workflow.Go) instead
//
// # Suppressing a finding
//
// A comment //flowvet:ignore on the line of a finding, or alone on the line above it,
// suppresses the findings of that line. Text after the directive and a space is free, so
// give the reason:
//
//	//flowvet:ignore the keys are sorted by the caller
//	for k := range m {
//
// # Running it
//
// From the module root:
//
//	go run ./cmd/flowvet ./...
//
// or build it and let go vet drive it:
//
//	go build -o bin/flowvet ./cmd/flowvet
//	go vet -vettool=$(pwd)/bin/flowvet ./...
//
// flowvet exits non-zero when it reports anything; `make lint` runs it over the module.
package analyzer
