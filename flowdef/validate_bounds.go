package flowdef

import "math"

// WorkerGuards are the run limits of the worker a definition is validated for (the
// steps and fan-out of flow.Guards): a bound written in a definition that a run could
// never reach under them is an error. Zero fields mean DefaultWorkerGuards'; a negative
// one means no limit.
type WorkerGuards struct {
	// MaxSteps is how many nodes a run may execute (flow.Guards.MaxSteps).
	MaxSteps int
	// MaxFanOut is how many branches or items one node may run (flow.Guards.MaxFanOut).
	MaxFanOut int
}

// DefaultWorkerGuards are flow.DefaultGuards' steps and fan-out, what Validate assumes
// when not told the worker's (WithWorkerGuards): flowctl validate and start --file.
var DefaultWorkerGuards = WorkerGuards{MaxSteps: 10_000, MaxFanOut: 50}

// WithWorkerGuards sets the worker's guards the definition's bounds are checked against
// (default DefaultWorkerGuards).
func WithWorkerGuards(g WorkerGuards) Option {
	return func(o *options) {
		if g.MaxSteps != 0 {
			o.guards.MaxSteps = g.MaxSteps
		}
		if g.MaxFanOut != 0 {
			o.guards.MaxFanOut = g.MaxFanOut
		}
	}
}

// bound is one limit in force for a definition and where it comes from.
type bound struct {
	n    int64 // <= 0: no limit
	from string
}

// bounds are the limits a definition's runs have: its own limits when written, else the
// worker's guards.
type bounds struct {
	steps, fanOut bound
}

// boundsOf computes the limits in force for def under the worker's guards g.
func boundsOf(def *Definition, g WorkerGuards) bounds {
	b := bounds{
		steps:  bound{int64(g.MaxSteps), "the worker's steps guard"},
		fanOut: bound{int64(g.MaxFanOut), "the worker's fan-out guard"},
	}
	l := def.Limits
	if l == nil {
		return b
	}
	if l.Steps > 0 {
		b.steps = bound{int64(l.Steps), "limits.steps"}
	}
	if l.FanOut > 0 {
		b.fanOut = bound{int64(l.FanOut), "limits.fan_out"}
	}
	return b
}

// over reports a value over a bound: field names the written field.
func (k *check) over(p Pos, lb, field string, v int64, b bound, hint string) {
	if b.n > 0 && v > b.n {
		k.add(p, hint, "%s: %s is %d, over the limit of %d (%s)", lb, field, v, b.n, b.from)
	}
}

// checkBounds refuses the bounds of node n that no run could reach: more loop iterations
// than steps, more parallel branches or items in flight than the fan-out, a retry count
// over what Temporal takes.
func (k *check) checkBounds(n *Node, lb string) {
	b := k.bounds
	if l := n.Loop; l != nil {
		k.over(l.Fields.At("max_iterations", l.Pos), lb, "max_iterations", int64(l.MaxIterations), b.steps,
			"each iteration counts as steps: lower max_iterations, or raise limits.steps if the worker allows it")
	}
	if n.Kind == KindParallel {
		k.over(n.Fields.At("parallel", n.Pos), lb, "the branch count", int64(len(n.Parallel)), b.fanOut,
			"split the branches over several parallel nodes, or raise limits.fan_out if the worker allows it")
	}
	if fe := n.Foreach; fe != nil {
		k.over(fe.Fields.At("max_parallel", fe.Pos), lb, "max_parallel", int64(fe.MaxParallel), b.fanOut,
			"a foreach runs at most the fan-out limit of items: lower max_parallel")
	}
	if r := n.Retry; r != nil && r.MaxAttempts > math.MaxInt32 {
		k.add(r.Fields.At("max_attempts", r.Pos), "retry a bounded number of times, e.g. 5", "%s: retry.max_attempts is %d, over the limit of %d", lb, r.MaxAttempts, math.MaxInt32)
	}
}
