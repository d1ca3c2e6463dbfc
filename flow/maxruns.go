package flow

import (
	"fmt"

	"go.temporal.io/sdk/workflow"
)

// Overflow is what a start does when its flow already has MaxRuns live runs.
type Overflow string

const (
	// OverflowQueue starts the run, which waits in pending (FlowWaiting
	// "permit:flow:NAME") until one of the live runs ends.
	OverflowQueue Overflow = "queue"
	// OverflowRefuse refuses the start with a *MaxRunsError; nothing starts.
	OverflowRefuse Overflow = "refuse"
	// OverflowReplace cancels the oldest live run (its error says "replaced by RUN") and
	// starts the run, which waits in pending until the cancelled run has ended.
	OverflowReplace Overflow = "replace"
)

// maxRunsVersion gates the MaxRuns permit of the run wrapper: runs recorded before a flow
// had MaxRuns never wait for it.
const maxRunsVersion = "gateflow.max-runs"

// MaxRuns allows at most n live runs of the flow on a task queue at once; overflow says
// what a start past the limit does: OverflowQueue (the default when empty) lets the run
// wait in pending for a permit, OverflowRefuse refuses the start with a *MaxRunsError,
// OverflowReplace cancels the oldest live run with the reason "replaced by RUN" and
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
func MaxRuns(n int, overflow Overflow) Option {
	return func(i *WorkflowInfo) error {
		if n < 1 {
			return fmt.Errorf("max runs %d: want at least 1", n)
		}
		if overflow == "" {
			overflow = OverflowQueue
		}
		switch overflow {
		case OverflowQueue, OverflowRefuse, OverflowReplace:
		default:
			return fmt.Errorf("max runs: on overflow %q: want %s, %s or %s", overflow, OverflowQueue, OverflowRefuse, OverflowReplace)
		}
		i.MaxRuns, i.OnOverflow, i.MaxRunsKey = n, overflow, ""
		return nil
	}
}

// maxRunsGroup is the concurrency group whose permits count the live runs of flow name.
func maxRunsGroup(name string) string { return "flow:" + name }

// withMaxRuns adds the flow's MaxRuns group to the concurrency groups a run acquires: the
// flow's, or for MaxRunsPerKey its key's (the starter's, or rendered by the run).
func (p *permitsPart) withMaxRuns(c *Context, limits map[string]int) (map[string]int, error) {
	info := c.run.info
	if info.MaxRuns < 1 || c.run.setup.plan {
		return limits, nil
	}
	if info.MaxRunsKey != "" {
		if _, ok := starterGroup(info, limits); ok {
			return limits, nil
		}
	}
	if workflow.GetVersion(c.wctx, maxRunsVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return limits, nil
	}
	group := maxRunsGroup(info.Name)
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
