package testflows

import (
	"context"
	"fmt"

	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/flowdef/interp"
)

// The benchmark's third half: the same work as BenchSteps and BenchHold, written as
// declarative definitions and run by the interpreter.

// Names of the definition halves and of the actions they call.
const (
	BenchDefSteps = "bench.def.steps"
	BenchDefHold  = "bench.def.hold"
	// BenchEchoWith and BenchMarkWith are Echo and Mark as actions: a definition's step
	// passes its `with` map as the one argument.
	BenchEchoWith = "bench.echo.with"
	BenchMarkWith = "bench.mark.with"
)

// benchDefStepsYAML runs inputs.steps steps one after the other and returns the sum of
// their results, as BenchSteps does.
const benchDefStepsYAML = `name: bench.def.steps
inputs:
  type: object
  properties:
    steps: {type: integer}
vars: {sum: 0}
steps:
  - id: steps
    loop:
      over: lists.range(inputs.steps)
      steps:
        - id: step
          uses: bench.echo.with
          with: {i: "${{ index }}"}
        - id: add
          set: {sum: "${{ vars.sum + steps.step.output }}"}
  - id: done
    finish: {status: completed, output: "${{ vars.sum }}"}
`

// benchDefHoldYAML runs one step and sleeps for an hour, as BenchHold does.
const benchDefHoldYAML = `name: bench.def.hold
steps:
  - id: mark
    uses: bench.mark.with
  - id: hold
    sleep: 1h
`

// EchoWith is Echo for a definition's step: it returns with["i"].
func EchoWith(_ context.Context, with map[string]any) (int, error) {
	switch v := with["i"].(type) {
	case float64:
		return int(v), nil
	case int:
		return v, nil
	}
	return 0, fmt.Errorf("bench echo: with.i is %T, want a number", with["i"])
}

// MarkWith is Mark for a definition's step.
func MarkWith(ctx context.Context, _ map[string]any) (int64, error) { return Mark(ctx) }

// BenchDefFlows are the definition halves of the benchmark, checked against the actions
// the bench worker registers.
func BenchDefFlows() ([]flow.Definition, error) {
	reg := &flowdef.StaticRegistry{Actions: []string{BenchEchoWith, BenchMarkWith}}
	var out []flow.Definition
	for _, d := range []struct{ file, src string }{{"bench-steps.yaml", benchDefStepsYAML}, {"bench-hold.yaml", benchDefHoldYAML}} {
		def, err := flowdef.Check(d.file, []byte(d.src), reg)
		if err != nil {
			return nil, err
		}
		f, err := interp.Flow(def)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}
