package testflows

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/flow"
)

// The benchmark does the same work twice: as gateflow flows and as raw Temporal SDK
// workflows with the same activity options.

// BenchInput is how many steps a benchmark run has.
type BenchInput struct {
	Steps int `json:"steps"`
}

// Echo is the benchmark's step: it returns its input.
func Echo(_ context.Context, i int) (int, error) { return i, nil }

// Marked counts Mark calls in this process.
var Marked atomic.Int64

// Mark is the first step of a held run: it counts that the run got going.
func Mark(_ context.Context) (int64, error) { return Marked.Add(1), nil }

// Bench names.
const (
	BenchEcho      = "bench.echo"
	BenchMark      = "bench.mark"
	BenchRawSteps  = "bench.raw.steps"
	BenchRawHold   = "bench.raw.hold"
	BenchFlowSteps = "bench.flow.steps"
	BenchFlowHold  = "bench.flow.hold"
	// The shell and approval variants, the raw side's Update and shell activity.
	BenchFlowShell   = "bench.flow.shell"
	BenchRawShell    = "bench.raw.shell"
	BenchFlowApprove = "bench.flow.approve"
	BenchRawApprove  = "bench.raw.approve"
	// BenchApproveGate is the gate of BenchApprove, and the raw side's Update.
	BenchApproveGate = "bench.approve"
	// BenchShellActivity runs a raw shell step.
	BenchShellActivity = "bench.shell"
	// BenchShellCommand is every shell step's command.
	BenchShellCommand = "echo step"
)

// BenchFlows are the gateflow halves of the benchmark.
func BenchFlows() []flow.Definition { return []flow.Definition{BenchSteps, BenchHold} }

// BenchSteps runs in.Steps steps, one after the other.
var BenchSteps = flow.Define(BenchFlowSteps, func(ctx *flow.Context, in BenchInput) (int, error) {
	sum := 0
	for i := 0; i < in.Steps; i++ {
		v, err := flow.Step[int](ctx, fmt.Sprintf("step-%d", i), BenchEcho, i)
		if err != nil {
			return 0, err
		}
		sum += v
	}
	return sum, nil
})

// BenchHold runs one step and then sleeps for an hour: a run held in the worker.
var BenchHold = flow.Define(BenchFlowHold, func(ctx *flow.Context, _ BenchInput) (int, error) {
	if _, err := flow.Step[int64](ctx, "mark", BenchMark); err != nil {
		return 0, err
	}
	return 0, ctx.Sleep("hold", time.Hour)
})

// rawOptions are the activity options gateflow gives a step by default.
func rawOptions(ctx workflow.Context, id string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ActivityID:          id,
		StartToCloseTimeout: flow.DefaultStepTimeout + 30*time.Second,
		HeartbeatTimeout:    flow.DefaultHeartbeatTimeout,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: flow.DefaultStepAttempts},
	})
}

// RawSteps is BenchSteps written with the raw SDK.
func RawSteps(ctx workflow.Context, in BenchInput) (int, error) {
	sum := 0
	for i := 0; i < in.Steps; i++ {
		var v int
		if err := workflow.ExecuteActivity(rawOptions(ctx, fmt.Sprintf("step-%d", i)), BenchEcho, i).Get(ctx, &v); err != nil {
			return 0, err
		}
		sum += v
	}
	return sum, nil
}

// RawHold is BenchHold written with the raw SDK.
func RawHold(ctx workflow.Context, _ BenchInput) (int, error) {
	if err := workflow.ExecuteActivity(rawOptions(ctx, "mark"), BenchMark).Get(ctx, nil); err != nil {
		return 0, err
	}
	return 0, workflow.Sleep(ctx, time.Hour)
}
