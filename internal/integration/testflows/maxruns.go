package testflows

import (
	"time"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
)

// MaxRunsFlows are the flows of the step-count guard and per-flow run limit tests.
func MaxRunsFlows() []flow.Definition {
	return []flow.Definition{MaxSteps, MaxRunsRefuse, MaxRunsQueue, MaxRunsReplace}
}

// MaxSteps may record three steps: its fourth (a shell step) is refused by the guard; the
// cleanup step still runs and appends "cleanup" to in.File.
var MaxSteps = flow.Define("test.maxsteps", func(ctx *flow.Context, in FileInput) (string, error) {
	ctx.OnError("cleanup", appendTo(in.File, "cleanup"))
	if _, err := ctx.Shell("one", appendTo(in.File, "one")); err != nil {
		return "", err
	}
	ctx.Skip("two", "nothing to do")
	if err := ctx.Sleep("three", time.Millisecond); err != nil {
		return "", err
	}
	_, err := ctx.Shell("four", appendTo(in.File, "four"))
	return "unreachable", err
}, flow.WithGuards(flow.Guards{MaxSteps: 3}), flow.MaxAttempts(2))

// gated waits for alice's approval of "gate".
func gated(ctx *flow.Context, _ struct{}) (approval.Decision, error) {
	return ctx.Approval("gate", approval.Request{Message: "go?", Approvers: []string{"alice"}})
}

// MaxRunsRefuse, MaxRunsQueue and MaxRunsReplace allow one live run each and wait for an
// approval; a second start is refused, queued or replaces the first.
var (
	MaxRunsRefuse  = flow.Define("test.maxruns.refuse", gated, flow.MaxRuns(1, core.OverflowRefuse))
	MaxRunsQueue   = flow.Define("test.maxruns.queue", gated, flow.MaxRuns(1, core.OverflowQueue))
	MaxRunsReplace = flow.Define("test.maxruns.replace", gated, flow.MaxRuns(1, core.OverflowReplace))
)
