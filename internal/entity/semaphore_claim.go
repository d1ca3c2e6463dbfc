package entity

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/internal/protocol"
)

// A claim takes a group's only permit for a run before the run is started, in one Update
// of the group's semaphore (Update-with-Start: the semaphore starts if it is not running).
// The semaphore handles its Updates one after another, so of two starts claiming the same
// free exclusive key at once exactly one gets it; the other is told who holds it. This is
// what makes an exclusive concurrency key atomic: a check of the holders followed by a
// start is not.
//
// The claimed run holds the permit from then on; its own acquire, moments after it starts,
// finds the permit held and is granted it again. A claim whose run never starts (the
// starter crashed in between) is dropped by the holder checks after claimGraceChecks
// checks that find no such run; a starter that fails to start the run releases the claim.

// claimGraceChecks is how many holder checks (reclaimEvery apart) keep a claimed run that
// the server does not know yet: its starter may still be starting it.
const claimGraceChecks = 12

// ClaimResult is the answer to a claim: Holder is the live run that holds (or waits for)
// the group's permit when it is not the claiming run; New says the permit is the run's by
// a claim its run has not taken up yet (false when the run acquired it itself, or when
// Holder is set): a starter that then fails to start the run gives it back.
type ClaimResult struct {
	Holder string `json:"holder,omitempty"`
	New    bool   `json:"new,omitempty"`
}

// claim is the semaphore's Update handler for a claim of the permit of a limit-1 group by
// m.Run. Runs listed as holding or waiting are checked (an activity) before the permit is
// refused for them; the decision is taken after the check, on the state as it is then,
// with no wait in between, so concurrent claims cannot both win.
func (s *semaphoreRun) claim(ctx workflow.Context, m protocol.SemaphoreMessage) (ClaimResult, error) {
	st := s.st
	if m.Limit > 0 {
		st.Limit = m.Limit
	}
	if contains(st.Holders, m.Run) || contains(st.Waiting, m.Run) {
		// Already the run's: a semaphore this claim started holds it from its input.
		_, claimed := st.Claims[m.Run]
		return ClaimResult{New: claimed}, nil
	}
	if others := s.others(m.Run); len(others) > 0 {
		// A run claimed now may not have started yet: the check finds no such run. Its
		// claim protects it through this check even if the run takes the claim up (and so
		// leaves Claims) while the check is under way.
		claimedBefore := map[string]bool{}
		for _, r := range others {
			if _, ok := st.Claims[r]; ok {
				claimedBefore[r] = true
			}
		}
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second,
			RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3}})
		var closed []string
		if err := workflow.ExecuteActivity(actx, protocol.SemaphoreCheckActivity, others).Get(ctx, &closed); err != nil {
			return ClaimResult{}, fmt.Errorf("check the runs of concurrency group %s: %w", st.Group, err)
		}
		for _, r := range closed {
			if _, claimed := st.Claims[r]; claimed || claimedBefore[r] {
				continue // claimed a moment ago: its run is being started
			}
			st.Drop(r)
			st.Waiting = without(st.Waiting, r)
		}
		if live := s.others(m.Run); len(live) > 0 {
			return ClaimResult{Holder: live[0]}, nil
		}
	}
	if len(st.Holders) >= max(st.Limit, 1) {
		return ClaimResult{Holder: st.Holders[0]}, nil
	}
	st.Holders = append(st.Holders, m.Run)
	if st.Claims == nil {
		st.Claims = map[string]int{}
	}
	st.Claims[m.Run] = 0
	return ClaimResult{New: true}, workflow.UpsertMemo(ctx, map[string]any{protocol.MemoSemaphore: st})
}

// others are the runs other than run that hold or wait for the permit.
func (s *semaphoreRun) others(run string) []string {
	var out []string
	for _, r := range append(append([]string(nil), s.st.Holders...), s.st.Waiting...) {
		if r != run {
			out = append(out, r)
		}
	}
	return out
}

// ErrClaimUnsupported says the workers serving the semaphore predate claims: the caller
// falls back to checking the holders (ConcurrencyHolder).
var ErrClaimUnsupported = errors.New("the workers on this task queue cannot claim a concurrency key (older gateflow)")

// ClaimConcurrency claims the only permit of the exclusive group on queue for run, which
// is about to be started (see the claim comment above). It returns the live holder when
// another run has the permit. A claim the caller does not follow with a started run must
// be given back with ReleaseConcurrency.
func ClaimConcurrency(ctx context.Context, tc client.Client, queue, group, run string) (ClaimResult, error) {
	id := protocol.SemaphoreID(group, queue)
	m := protocol.SemaphoreMessage{Group: group, Run: run, Limit: 1}
	var last error
	for try := 0; try < 3; try++ {
		start := tc.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
			ID: id, TaskQueue: queue, StaticSummary: "gateflow concurrency group " + group,
			WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		}, protocol.SemaphoreWorkflowType, SemaphoreState{Group: group, Limit: 1, Holders: []string{run}, Claims: map[string]int{run: 0}})
		h, err := tc.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
			StartWorkflowOperation: start,
			UpdateOptions: client.UpdateWorkflowOptions{
				UpdateName: protocol.SemaphoreClaim, Args: []any{m}, WaitForStage: client.WorkflowUpdateStageCompleted,
			},
		})
		if err == nil {
			var res ClaimResult
			if err = h.Get(ctx, &res); err == nil {
				return res, nil
			}
		}
		if strings.Contains(err.Error(), "unknown update") {
			return ClaimResult{}, ErrClaimUnsupported
		}
		// A semaphore that was ending as the claim arrived aborts it: claim again.
		last = err
		if ctx.Err() != nil || !strings.Contains(err.Error(), "completed") {
			break
		}
	}
	return ClaimResult{}, fmt.Errorf("claim concurrency group %s: %w", group, last)
}

// ReleaseConcurrency gives back the permit of group on queue that run claimed or holds.
func ReleaseConcurrency(ctx context.Context, tc client.Client, queue, group, run string) error {
	err := tc.SignalWorkflow(ctx, protocol.SemaphoreID(group, queue), "", protocol.SemaphoreRelease,
		protocol.SemaphoreMessage{Group: group, Run: run})
	if err != nil && !protocol.IsNotFound(err) {
		return fmt.Errorf("release concurrency group %s: %w", group, err)
	}
	return nil
}
