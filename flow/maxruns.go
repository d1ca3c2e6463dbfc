package flow

import (
	"fmt"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/startplan"
	"go.temporal.io/sdk/workflow"
)

// maxRunsVersion gates the MaxRuns permit of the run wrapper: runs recorded before a flow
// had MaxRuns never wait for it.
const maxRunsVersion = "gateflow.max-runs"

// MaxRuns allows at most n live runs of the flow on a task queue at once; overflow says
// what a start past the limit does: core.OverflowQueue (the default when empty) lets the run
// wait in pending for a permit, core.OverflowRefuse refuses the start with a *MaxRunsError,
// core.OverflowReplace cancels the oldest live run with the reason "replaced by RUN" and
// starts the new run, which waits until the cancelled one has ended.
//
// The limit is the semaphore of the concurrency group "flow:NAME", which every run of
// the flow holds a permit of while it runs, however it was started (flowclient.Client.Start, a
// schedule, a parent's Child step); it composes with a start's ConcurrencyKey and
// ConcurrencyLimits (a run waits for a permit of each). Refusing and replacing are what
// flowclient.Client.Start (and `flowctl start`) decide at admission, counting the runs that hold or
// wait for a permit, which a run does moments after its start; runs started another way
// queue. n must be at least 1. MaxRunsPerKey limits the runs per key of their input
// instead.
func MaxRuns(n int, overflow core.Overflow) Option {
	return func(i *core.WorkflowInfo) error {
		if n < 1 {
			return fmt.Errorf("max runs %d: want at least 1", n)
		}
		if overflow == "" {
			overflow = core.OverflowQueue
		}
		switch overflow {
		case core.OverflowQueue, core.OverflowRefuse, core.OverflowReplace:
		default:
			return fmt.Errorf("max runs: on overflow %q: want %s, %s or %s", overflow, core.OverflowQueue, core.OverflowRefuse, core.OverflowReplace)
		}
		i.MaxRuns, i.OnOverflow, i.MaxRunsKey = n, overflow, ""
		return nil
	}
}

// withMaxRuns adds the flow's MaxRuns group to the concurrency groups a run acquires: the
// flow's, or for MaxRunsPerKey its key's (the starter's, or rendered by the run).
func (p *permitsPart) withMaxRuns(c *Context, limits map[string]int) (map[string]int, error) {
	info := c.run.info
	if info.MaxRuns < 1 || c.run.setup.plan {
		return limits, nil
	}
	if info.MaxRunsKey != "" {
		if _, ok := startplan.StarterGroup(info, limits); ok {
			return limits, nil
		}
	}
	if workflow.GetVersion(c.wctx, maxRunsVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return limits, nil
	}
	group := startplan.MaxRunsGroup(info.Name)
	if info.MaxRunsKey != "" {
		g, err := p.runKeyGroup(c)
		if err != nil {
			return nil, err
		}
		group = g
	}
	out := make(map[string]int, len(limits)+1)
	for g, n := range limits {
		out[g] = n
	}
	out[group] = info.MaxRuns
	return out, nil
}
