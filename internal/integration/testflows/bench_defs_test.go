package testflows

import (
	"testing"

	"github.com/gateflow/gateflow/testsuite"
)

func TestBenchDefinitionsRunTheirSteps(t *testing.T) {
	defs, err := BenchDefFlows()
	if err != nil {
		t.Fatal(err)
	}
	env := testsuite.NewEnv(t)
	env.Register(defs...)
	env.RegisterActivity(EchoWith, BenchEchoWith)
	env.RegisterActivity(MarkWith, BenchMarkWith)
	r := env.Run(BenchDefSteps, map[string]any{"steps": 5})
	if r.Err != nil {
		t.Fatalf("%v (state %+v)", r.Err, r.State.Steps)
	}
	steps := 0
	for _, s := range r.State.Steps {
		if s.Name == "step" {
			steps++
		}
	}
	if steps != 5 {
		t.Errorf("the definition made %d steps, want 5 (output %s)", steps, r.Output)
	}
	var sum int
	if err := r.Decode(&sum); err != nil || sum != 0+1+2+3+4 {
		t.Errorf("output %s (%v), want the sum 10, as the Go bench flow returns", r.Output, err)
	}
}
