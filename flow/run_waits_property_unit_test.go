package flow

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/runs"
	"github.com/gateflow/gateflow/signals"
)

// waitSegment is one wait of a branch in waitsPlan: its kind and how many seconds it lasts
// (each ends by its timeout).
type waitSegment struct {
	Kind    string `json:"kind"` // sleep, signal, approval or input
	Seconds int    `json:"seconds"`
}

// waitsPlan runs each branch's waits one after the other, all branches at once.
type waitsPlan struct {
	Branches [][]waitSegment `json:"branches"`
}

// segmentStatus is the run status a segment's wait stands for.
var segmentStatus = map[string]runs.Status{
	"sleep": runs.StatusSleeping, "signal": runs.StatusWaitingSignal,
	"approval": runs.StatusAwaitingApproval, "input": runs.StatusAwaitingInput,
}

// waitsFlow runs a waitsPlan through the run wrapper: sleeps, signal waits, approval gates
// (approved at their deadline) and input requests, each ending at its timeout; a wait that
// times out with an error is ignored, so the branch goes on.
var waitsFlow = Define("unit/waits-plan", func(ctx *Context, in waitsPlan) (string, error) {
	var futures []*Future[struct{}]
	for b, segs := range in.Branches {
		futures = append(futures, ctx.Go(fmt.Sprintf("b%d", b), func(bc *Context) error {
			for j, s := range segs {
				d := time.Duration(s.Seconds) * time.Second
				name := fmt.Sprintf("w%d-%d", b, j)
				switch s.Kind {
				case "sleep":
					_ = bc.Sleep(name, d)
				case "signal":
					_, _ = WaitSignal[string](bc, name, "", d)
				case "approval":
					_, _ = bc.Approval(name, approval.Request{Approvers: []string{"alice"}, Timeout: d, OnTimeout: approval.ApproveOnTimeout})
				case "input":
					_, _ = Input[string](bc, name, signals.InputRequest{Prompt: "?", Timeout: d})
				}
			}
			return nil
		}))
	}
	for _, f := range futures {
		if _, err := f.Get(ctx); err != nil {
			return "", err
		}
	}
	return "", nil
})

// The property of issue 31 item 5 through the run wrapper: random plans of waits in
// random branches, the run's status queried in the middle of every second. It is always
// the highest-precedence status of the waits open at that moment (running when none), and
// State.Waiting lists exactly the waits open then (sleeps are not listed).
func TestRunStatusFollowsOpenWaitsPropertyThroughTheRunner(t *testing.T) {
	kinds := []string{"sleep", "signal", "approval", "input"}
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 5))
		plan := waitsPlan{Branches: make([][]waitSegment, 1+r.IntN(4))}
		end := 0
		for b := range plan.Branches {
			total := 0
			for range 1 + r.IntN(4) {
				s := waitSegment{Kind: kinds[r.IntN(len(kinds))], Seconds: 1 + r.IntN(4)}
				plan.Branches[b] = append(plan.Branches[b], s)
				total += s.Seconds
			}
			end = max(end, total)
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			env := newPeopleEnv(t, waitsFlow)
			env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
			states := make([]*runs.State, end)
			for k := range end {
				states[k] = stateAt(t, env, time.Duration(k)*time.Second+500*time.Millisecond)
			}
			env.ExecuteWorkflow(waitsFlow.Name(), plan)
			require.NoError(t, env.GetWorkflowError())
			for k, st := range states {
				want, waiting := planAt(plan, k)
				require.Equal(t, want, st.Status, "at %d.5s of %+v", k, plan.Branches)
				require.ElementsMatch(t, waiting, st.Waiting, "at %d.5s of %+v", k, plan.Branches)
			}
		})
	}
}

// planAt is the status and the waiting list of a waitsPlan run at k.5 seconds.
func planAt(plan waitsPlan, k int) (runs.Status, []string) {
	var statuses []runs.Status
	var waiting []string
	for b, segs := range plan.Branches {
		at := 0
		for j, s := range segs {
			if k >= at && k < at+s.Seconds {
				statuses = append(statuses, segmentStatus[s.Kind])
				if s.Kind != "sleep" {
					waiting = append(waiting, fmt.Sprintf("%s:w%d-%d", s.Kind, b, j))
				}
			}
			at += s.Seconds
		}
	}
	best := runs.StatusRunning
	for _, s := range statuses {
		if rank[s] < rankOr(best) {
			best = s
		}
	}
	return best, waiting
}

// rankOr is rank's value, past every wait for running.
func rankOr(s runs.Status) int {
	if r, ok := rank[s]; ok {
		return r
	}
	return len(rank)
}
