package entity

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/gateflow/gateflow/internal/protocol"
)

// claimed is the state of a semaphore that a claim for run started (ClaimConcurrency's
// start input).
func claimed(run string) SemaphoreState {
	return SemaphoreState{Group: "deploys", Limit: 1, Holders: []string{run}, Claims: map[string]int{run: 0}}
}

// claimAt sends a claim Update for run after d; the answer (or error) is stored in got.
func (s *semaphoreEnv) claimAt(d time.Duration, run string, got *claimAnswer) {
	s.RegisterDelayedCallback(func() {
		s.UpdateWorkflow(protocol.SemaphoreClaim, run+"@"+d.String(), &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) { got.err = err },
			OnComplete: func(v any, err error) {
				got.done = true
				if err != nil {
					got.err = err
					return
				}
				got.res, _ = v.(ClaimResult)
			},
		}, protocol.SemaphoreMessage{Group: "deploys", Run: run, Limit: 1})
	}, d)
}

type claimAnswer struct {
	res  ClaimResult
	err  error
	done bool
}

func TestSemaphoreClaimRefusesOthersAndGrantsTheClaimedRun(t *testing.T) {
	s := newSemaphoreEnvOf(t, semaphoreWorkflow, nil)
	var other, again, late claimAnswer
	s.claimAt(time.Second, "run-2", &other)
	signalAt(s.TestWorkflowEnvironment, 2*time.Second, protocol.SemaphoreAcquire, acquire("run-1", 1))
	s.claimAt(3*time.Second, "run-1", &again)
	s.claimAt(4*time.Second, "run-3", &late)
	signalAt(s.TestWorkflowEnvironment, 30*time.Second, protocol.SemaphoreRelease, release("run-1"))
	ended := s.run(t, claimed("run-1"))

	require.True(t, other.done, "the claim was answered")
	require.NoError(t, other.err)
	assert.Equal(t, ClaimResult{Holder: "run-1"}, other.res, "run-1's claim holds the key")
	assert.Equal(t, ClaimResult{}, again.res, "run-1 acquired it itself: its claim is over")
	assert.Equal(t, ClaimResult{Holder: "run-1"}, late.res)
	assert.Equal(t, []permit{{To: "run-1", Group: "deploys", At: 2 * time.Second}}, s.permits.all(),
		"the claimed run's own acquire is granted at once, nobody else's")
	assert.Equal(t, 30*time.Second, ended, "it ends once the holder released")
}

func TestSemaphoreClaimOfARunThatNeverStartsIsDropped(t *testing.T) {
	// The server does not know run-ghost: its starter crashed after claiming.
	s := newSemaphoreEnvOf(t, semaphoreWorkflow, func(holders []string) []string { return holders })
	ended := s.run(t, claimed("run-ghost"))
	checks := len(s.checks.all())
	assert.Equal(t, claimGraceChecks+1, checks, "kept for the grace checks, dropped at the next")
	assert.Equal(t, time.Duration(claimGraceChecks+1)*reclaimEvery, ended)
	assert.Empty(t, s.permits.all())
}

func TestSemaphoreClaimsRacingForAFreedKeyGetItOnce(t *testing.T) {
	// run-old holds the key but has closed; two starts claim it in the same moment. Each
	// claim checks run-old (an activity, so the two interleave); only one may win.
	s := newSemaphoreEnvOf(t, semaphoreWorkflow, func(holders []string) []string {
		var closed []string
		for _, h := range holders {
			if h == "run-old" {
				closed = append(closed, h)
			}
		}
		return closed
	})
	var a, b claimAnswer
	s.claimAt(time.Second, "run-a", &a)
	s.claimAt(time.Second, "run-b", &b)
	signalAt(s.TestWorkflowEnvironment, 20*time.Second, protocol.SemaphoreRelease, release("run-a"))
	signalAt(s.TestWorkflowEnvironment, 20*time.Second, protocol.SemaphoreRelease, release("run-b"))
	s.run(t, SemaphoreState{Group: "deploys", Limit: 1, Holders: []string{"run-old"}})

	require.True(t, a.done && b.done, "both claims were answered")
	require.NoError(t, a.err)
	require.NoError(t, b.err)
	wins := 0
	for _, r := range []ClaimResult{a.res, b.res} {
		if r.New {
			wins++
		} else {
			assert.Contains(t, []string{"run-a", "run-b"}, r.Holder, "the loser is told the winner")
		}
	}
	assert.Equal(t, 1, wins, "a: %+v, b: %+v", a.res, b.res)
}

func TestSemaphoreClaimedRunTakingItsClaimUpDuringAHolderCheckKeepsIt(t *testing.T) {
	// run-1 is claimed but not started yet when run-2's claim checks it: the server does
	// not know run-1, so the check (5 s long here) reports it closed. Meanwhile run-1
	// starts and acquires, taking its claim up. The stale answer must not drop run-1: a
	// second start would win the key (the race make test found in session 7).
	s := newSemaphoreEnvOf(t, semaphoreWorkflow, func(holders []string) []string { return holders })
	s.checkCall.After(5 * time.Second)
	var second claimAnswer
	s.claimAt(time.Second, "run-2", &second)
	signalAt(s.TestWorkflowEnvironment, 3*time.Second, protocol.SemaphoreAcquire, acquire("run-1", 1))
	signalAt(s.TestWorkflowEnvironment, 30*time.Second, protocol.SemaphoreRelease, release("run-1"))
	s.run(t, claimed("run-1"))

	require.True(t, second.done, "the claim was answered")
	require.NoError(t, second.err)
	require.NotEmpty(t, s.checks.all(), "run-2's claim checked run-1")
	assert.Equal(t, []string{"run-1"}, s.checks.all()[0])
	assert.Equal(t, ClaimResult{Holder: "run-1"}, second.res, "run-1 keeps the key it claimed")
	assert.Equal(t, []permit{{To: "run-1", Group: "deploys", At: 3 * time.Second}}, s.permits.all(), "only run-1 got the permit")
}
