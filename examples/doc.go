// Package examples holds the example flows that flow-worker serves by default: the demo
// of `make run` and the flows the documentation walks through.
//
//   - hello: two shell steps, the second using the first's output.
package examples

import "github.com/gateflow/gateflow/flow"

// All returns every example flow, for flow.NewWorker.
func All() []flow.Definition {
	return []flow.Definition{Hello}
}
