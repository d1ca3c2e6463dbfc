package interp_test

import (
	"testing"
	"time"

	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/internal/integration/testflows"
	"github.com/gateflow/gateflow/testsuite"
)

// benchRun runs flowName once with k steps in a fresh test environment serving the bench
// flows (the Go flow and the definition) and their actions.
func benchRun(b *testing.B, flows []flow.Definition, k int, flowName string) {
	b.Helper()
	env := testsuite.NewEnv(b)
	env.Register(flows...)
	env.RegisterActivity(testflows.Echo, testflows.BenchEcho)
	env.RegisterActivity(testflows.EchoWith, testflows.BenchEchoWith)
	r := env.Run(flowName, testflows.BenchInput{Steps: k})
	if r.Err != nil {
		b.Fatal(r.Err)
	}
}

// benchFlows are the `make bench` flows, built once as a worker builds them at start.
func benchFlows(b *testing.B) []flow.Definition {
	b.Helper()
	defs, err := testflows.BenchDefFlows()
	if err != nil {
		b.Fatal(err)
	}
	return append(testflows.BenchFlows(), defs...)
}

// BenchmarkInterpreterOverhead runs the `make bench` flows without a server (Temporal's
// test environment): each iteration runs the Go flow of K steps and the definition doing
// the same steps, one after the other, so both see the same machine. It reports each
// one's time per run, the definition's extra time per step and the ratio def/Go; ns/op
// is the pair. A regression in the interpreter (compiling per run, converting values per
// evaluation...) shows in overhead-ns/step and def/go without `make bench`.
func BenchmarkInterpreterOverhead(b *testing.B) {
	for _, k := range []int{5, 50} {
		b.Run(map[int]string{5: "K=5", 50: "K=50"}[k], func(b *testing.B) {
			flows := benchFlows(b)
			benchRun(b, flows, k, testflows.BenchDefSteps) // compile once, as a worker's first run does
			var goTime, defTime time.Duration
			b.ReportAllocs()
			for b.Loop() {
				t0 := time.Now()
				benchRun(b, flows, k, testflows.BenchFlowSteps)
				t1 := time.Now()
				benchRun(b, flows, k, testflows.BenchDefSteps)
				goTime += t1.Sub(t0)
				defTime += time.Since(t1)
			}
			n := float64(b.N)
			b.ReportMetric(float64(goTime.Nanoseconds())/n, "go-ns/run")
			b.ReportMetric(float64(defTime.Nanoseconds())/n, "def-ns/run")
			b.ReportMetric(float64((defTime-goTime).Nanoseconds())/n/float64(k), "overhead-ns/step")
			b.ReportMetric(float64(defTime)/float64(goTime), "def/go")
		})
	}
}
