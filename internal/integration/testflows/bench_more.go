package testflows

import (
	"context"
	"fmt"
	"os/exec"

	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/flow"
)

// The benchmark's other variants: shell steps and an approval followed by a step, each
// as a gateflow flow and as a raw SDK workflow doing the same work.

// BenchMoreFlows are the gateflow shell and approval variants.
func BenchMoreFlows() []flow.Definition { return []flow.Definition{BenchShell, BenchApprove} }

// BenchShell runs in.Steps shell steps, one after the other.
var BenchShell = flow.Define(BenchFlowShell, func(ctx *flow.Context, in BenchInput) (int, error) {
	n := 0
	for i := 0; i < in.Steps; i++ {
		r, err := ctx.Shell(fmt.Sprintf("sh-%d", i), activities.Shell{Command: BenchShellCommand})
		if err != nil {
			return 0, err
		}
		n += len(r.Stdout)
	}
	return n, nil
})

// BenchApprove waits at a gate anyone may approve, then runs one step.
var BenchApprove = flow.Define(BenchFlowApprove, func(ctx *flow.Context, _ BenchInput) (int, error) {
	if _, err := ctx.Approval(BenchApproveGate, approval.Request{Message: "go on?"}); err != nil {
		return 0, err
	}
	return flow.Step[int](ctx, "after", BenchEcho, 1)
})

// RawShellStep is the raw side's shell step: the command under /bin/sh -c, its output.
func RawShellStep(ctx context.Context, command string) (string, error) {
	out, err := exec.CommandContext(ctx, "/bin/sh", "-c", command).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("shell %q: %w: %s", command, err, out)
	}
	return string(out), nil
}

// RawShell is BenchShell written with the raw SDK.
func RawShell(ctx workflow.Context, in BenchInput) (int, error) {
	n := 0
	for i := range in.Steps {
		var out string
		f := workflow.ExecuteActivity(rawOptions(ctx, fmt.Sprintf("sh-%d", i)), BenchShellActivity, BenchShellCommand)
		if err := f.Get(ctx, &out); err != nil {
			return 0, fmt.Errorf("shell step %d: %w", i, err)
		}
		n += len(out)
	}
	return n, nil
}

// RawApprove is BenchApprove written with the raw SDK: an Update approves, then one step.
func RawApprove(ctx workflow.Context, _ BenchInput) (int, error) {
	approved := false
	if err := workflow.SetUpdateHandler(ctx, BenchApproveGate, func(workflow.Context, string) (string, error) {
		approved = true
		return "approved", nil
	}); err != nil {
		return 0, err
	}
	if err := workflow.Await(ctx, func() bool { return approved }); err != nil {
		return 0, err
	}
	var v int
	err := workflow.ExecuteActivity(rawOptions(ctx, "after"), BenchEcho, 1).Get(ctx, &v)
	return v, err
}
