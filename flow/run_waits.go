package flow

import (
	"slices"
	"strings"

	"github.com/gateflow/gateflow/runs"
)

// waitPrecedence orders the statuses of what a run can wait for, highest first. A run that
// waits for several things at once (a branch at an approval gate while another sleeps or
// waits for a signal) shows the first of them, whichever wait began last: paused (someone
// stopped the whole run), then awaiting_approval, awaiting_input, awaiting_gate,
// waiting_signal, budget_paused, waiting_capacity, sleeping and pending (a permit, or its
// paused workflow type). A run that waits for nothing is running.
var waitPrecedence = []runs.Status{
	runs.StatusPaused,
	runs.StatusAwaitingApproval,
	runs.StatusAwaitingInput,
	runs.StatusAwaitingGate,
	runs.StatusWaitingSignal,
	runs.StatusBudgetPaused,
	runs.StatusWaitingCapacity,
	runs.StatusSleeping,
	runs.StatusPending,
}

// statusOfWaits is the status of a run that waits for all of statuses at once (the status
// of each open wait, runs.Wait.Status, and sleeping for a sleep): the highest by
// waitPrecedence, running when there is none.
func statusOfWaits(statuses []runs.Status) runs.Status {
	best := len(waitPrecedence)
	for _, s := range statuses {
		if i := slices.Index(waitPrecedence, s); i >= 0 && i < best {
			best = i
		}
	}
	if best == len(waitPrecedence) {
		return runs.StatusRunning
	}
	return waitPrecedence[best]
}

// openWaits is what a run waits for now, across its branches: how many of its coroutines
// wait for each wait (two branches may wait for the same signal: the run waits for it
// until both have it), and how many sleep. It is pure bookkeeping, free of Temporal.
type openWaits struct {
	counts map[runs.Wait]int
	sleeps int
}

// open records one more wait for w.
func (o *openWaits) open(w runs.Wait) {
	if o.counts == nil {
		o.counts = map[runs.Wait]int{}
	}
	o.counts[w]++
}

// close records that one wait for w ended; closing a wait that is not open does nothing.
func (o *openWaits) close(w runs.Wait) {
	switch n := o.counts[w]; {
	case n > 1:
		o.counts[w] = n - 1
	case n == 1:
		delete(o.counts, w)
	}
}

// clear forgets every wait for w however often it was opened (a run that ends is paused
// no more).
func (o *openWaits) clear(w runs.Wait) { delete(o.counts, w) }

// sleep records a sleep beginning (delta 1) or ending (delta -1).
func (o *openWaits) sleep(delta int) { o.sleeps = max(o.sleeps+delta, 0) }

// list is the distinct open waits, sorted by their String form (State.Waiting and the
// FlowWaiting search attribute). Sleeps are not waits for anyone: they are not listed.
func (o *openWaits) list() []runs.Wait {
	out := make([]runs.Wait, 0, len(o.counts))
	for w := range o.counts {
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b runs.Wait) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// status is the run's status by waitPrecedence over what is open.
func (o *openWaits) status() runs.Status {
	statuses := make([]runs.Status, 0, len(o.counts)+1)
	for w := range o.counts {
		statuses = append(statuses, w.Status())
	}
	if o.sleeps > 0 {
		statuses = append(statuses, runs.StatusSleeping)
	}
	return statusOfWaits(statuses)
}
