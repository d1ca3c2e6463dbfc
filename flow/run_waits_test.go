package flow

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/runs"
)

var (
	wApproval = runs.Wait{Kind: runs.ForApproval, Name: "ship"}
	wInput    = runs.Wait{Kind: runs.ForInput, Name: "notes"}
	wGate     = runs.Wait{Kind: runs.ForGate, Name: "checks", Key: "http"}
	wSignal   = runs.Wait{Kind: runs.ForSignal, Name: "deployed"}
	wBudget   = runs.Wait{Kind: runs.ForBudget}
	wPause    = runs.Wait{Kind: runs.ForResume}
	wCapacity = runs.Wait{Kind: runs.ForCapacity, Name: "summarize"}
	wPermit   = runs.Wait{Kind: runs.ForPermit, Name: "deploys"}
	wTypeHold = runs.Wait{Kind: runs.ForResume, Name: "release"}
)

func TestStatusOfWaits(t *testing.T) {
	s := func(w runs.Wait) runs.Status { return w.Status() }
	for _, tc := range []struct {
		name  string
		waits []runs.Status
		want  runs.Status
	}{
		{"nothing: running", nil, runs.StatusRunning},
		{"a sleep", []runs.Status{runs.StatusSleeping}, runs.StatusSleeping},
		{"approval over a sleep (the issue)", []runs.Status{s(wApproval), runs.StatusSleeping}, runs.StatusAwaitingApproval},
		{"approval over a signal (the issue)", []runs.Status{s(wSignal), s(wApproval)}, runs.StatusAwaitingApproval},
		{"paused over an approval", []runs.Status{s(wApproval), s(wPause)}, runs.StatusPaused},
		{"input over a gate", []runs.Status{s(wGate), s(wInput)}, runs.StatusAwaitingInput},
		{"gate over a signal", []runs.Status{s(wSignal), s(wGate)}, runs.StatusAwaitingGate},
		{"signal over budget", []runs.Status{s(wBudget), s(wSignal)}, runs.StatusWaitingSignal},
		{"budget over capacity", []runs.Status{s(wCapacity), s(wBudget)}, runs.StatusBudgetPaused},
		{"capacity over a sleep", []runs.Status{runs.StatusSleeping, s(wCapacity)}, runs.StatusWaitingCapacity},
		{"a sleep over a permit", []runs.Status{s(wPermit), runs.StatusSleeping}, runs.StatusSleeping},
		{"a permit", []runs.Status{s(wPermit)}, runs.StatusPending},
		{"a held workflow type", []runs.Status{s(wTypeHold)}, runs.StatusPending},
		{"a status that is no wait's counts for nothing", []runs.Status{runs.StatusCompleted}, runs.StatusRunning},
		{"all at once", []runs.Status{runs.StatusSleeping, s(wPermit), s(wCapacity), s(wBudget), s(wSignal), s(wGate), s(wInput), s(wApproval), s(wPause)}, runs.StatusPaused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, statusOfWaits(tc.waits))
			rev := slices.Clone(tc.waits)
			slices.Reverse(rev)
			assert.Equal(t, tc.want, statusOfWaits(rev), "the order the waits began in does not matter")
		})
	}
}

func TestOpenWaitsCountsEachBranch(t *testing.T) {
	var o openWaits
	o.open(wSignal)
	o.open(wSignal) // two branches wait for the same signal
	o.open(wApproval)
	assert.Equal(t, runs.StatusAwaitingApproval, o.status())
	assert.Equal(t, []runs.Wait{wApproval, wSignal}, o.list())
	o.close(wApproval)
	o.close(wSignal)
	assert.Equal(t, runs.StatusWaitingSignal, o.status(), "the other branch still waits for the signal")
	assert.Equal(t, []runs.Wait{wSignal}, o.list())
	o.close(wSignal)
	o.close(wSignal) // closing what is not open changes nothing
	assert.Equal(t, runs.StatusRunning, o.status())
	assert.Empty(t, o.list())
	o.sleep(1)
	o.sleep(1)
	o.sleep(-1)
	assert.Equal(t, runs.StatusSleeping, o.status(), "one sleep still runs")
	assert.Empty(t, o.list(), "a sleep is not a wait for anyone")
	o.sleep(-1)
	o.sleep(-1)
	assert.Equal(t, runs.StatusRunning, o.status())
	o.open(wPause)
	o.open(wPause)
	o.clear(wPause)
	assert.Equal(t, runs.StatusRunning, o.status(), "clear forgets every count")
}

// rank is the documented precedence, written out again independently of waitPrecedence:
// lower is shown first.
var rank = map[runs.Status]int{
	runs.StatusPaused: 0, runs.StatusAwaitingApproval: 1, runs.StatusAwaitingInput: 2, runs.StatusAwaitingGate: 3,
	runs.StatusWaitingSignal: 4, runs.StatusBudgetPaused: 5, runs.StatusWaitingCapacity: 6, runs.StatusSleeping: 7,
	runs.StatusPending: 8,
}

// sleepWait stands for a sleep in the model of TestOpenWaitsPropertyRandomInterleavings.
var sleepWait = runs.Wait{Kind: "sleep"}

// The property of issue 31 item 5: over random interleavings of waits beginning and ending
// in branches, the run's status is always the highest-precedence status among the waits
// open right now (running when none), and its waiting list is exactly the distinct open
// waits — whatever began or ended last.
func TestOpenWaitsPropertyRandomInterleavings(t *testing.T) {
	kinds := []runs.Wait{wApproval, wInput, wGate, wSignal, wBudget, wPause, wCapacity, wPermit, wTypeHold, sleepWait,
		{Kind: runs.ForApproval, Name: "deploy"}, {Kind: runs.ForSignal, Name: "deployed", Key: "v2"}}
	for seed := range uint64(2000) {
		r := rand.New(rand.NewPCG(seed, 31))
		branches := make([][]runs.Wait, 1+r.IntN(6)) // each branch's stack of open waits
		var o openWaits
		for op := range 20 + r.IntN(80) {
			b := r.IntN(len(branches))
			if n := len(branches[b]); n > 0 && r.IntN(2) == 0 {
				w := branches[b][n-1]
				branches[b] = branches[b][:n-1]
				if w == sleepWait {
					o.sleep(-1)
				} else {
					o.close(w)
				}
			} else {
				w := kinds[r.IntN(len(kinds))]
				branches[b] = append(branches[b], w)
				if w == sleepWait {
					o.sleep(1)
				} else {
					o.open(w)
				}
			}
			want, wantList := model(branches)
			require.Equal(t, want, o.status(), "seed %d op %d: open %v", seed, op, branches)
			require.Equal(t, wantList, fmt.Sprint(waitStrings(o.list())), "seed %d op %d", seed, op)
		}
	}
}

// model is the status and the waiting list of a run whose branches hold these waits.
func model(branches [][]runs.Wait) (runs.Status, string) {
	want, best := runs.StatusRunning, len(rank)
	set := map[string]bool{}
	for _, b := range branches {
		for _, w := range b {
			s := runs.StatusSleeping
			if w != sleepWait {
				s = w.Status()
				set[w.String()] = true
			}
			if rank[s] < best {
				want, best = s, rank[s]
			}
		}
	}
	list := make([]string, 0, len(set))
	for w := range set {
		list = append(list, w)
	}
	slices.Sort(list)
	return want, fmt.Sprint(list)
}
