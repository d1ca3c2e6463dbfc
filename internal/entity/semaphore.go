package entity

import (
	"context"
	"errors"
	"sort"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/internal/protocol"
)

// SemaphoreState is a concurrency group's semaphore: at most Limit holders, the rest
// waiting first come first served. It is in the semaphore's Memo for clients and its
// input across continue-as-new.
type SemaphoreState struct {
	Group   string   `json:"group"`
	Limit   int      `json:"limit"`
	Holders []string `json:"holders"`
	Waiting []string `json:"waiting"`
	// Claims are the holders that a start claimed before starting the run (see
	// ClaimConcurrency), each with the number of holder checks that have not found its run
	// yet; a run's own acquire ends its claim.
	Claims map[string]int `json:"claims,omitempty"`
}

// Acquire asks for a permit for run (limit > 0 updates the group's limit). It reports
// whether run holds one already (its grant was lost: the caller grants it again); a run
// not yet waiting joins the queue.
func (s *SemaphoreState) Acquire(run string, limit int) (held bool) {
	if limit > 0 {
		s.Limit = limit
	}
	delete(s.Claims, run)
	if contains(s.Holders, run) {
		return true
	}
	if !contains(s.Waiting, run) {
		s.Waiting = append(s.Waiting, run)
	}
	return false
}

// Release gives run's permit back, or takes it out of the queue.
func (s *SemaphoreState) Release(run string) {
	s.Holders = without(s.Holders, run)
	s.Waiting = without(s.Waiting, run)
	delete(s.Claims, run)
}

// Next moves the first waiting run to the holders when a permit is free (a limit below 1
// counts as 1) and returns it.
func (s *SemaphoreState) Next() (string, bool) {
	if len(s.Waiting) == 0 || len(s.Holders) >= max(s.Limit, 1) {
		return "", false
	}
	run := s.Waiting[0]
	s.Waiting = s.Waiting[1:]
	s.Holders = append(s.Holders, run)
	return run, true
}

// Drop takes run's permit away: its grant could not be delivered, or its run has closed.
func (s *SemaphoreState) Drop(run string) {
	s.Holders = without(s.Holders, run)
	delete(s.Claims, run)
}

// Reclaim drops the holders whose runs a check found closed or unknown, but keeps, for
// claimGraceChecks checks, a claimed run the server does not know yet.
func (s *SemaphoreState) Reclaim(closed []string) {
	for _, r := range closed {
		if n, ok := s.Claims[r]; ok && n < claimGraceChecks {
			s.Claims[r] = n + 1
			continue
		}
		s.Drop(r)
	}
}

// Idle reports whether nobody holds or waits.
func (s *SemaphoreState) Idle() bool { return len(s.Holders) == 0 && len(s.Waiting) == 0 }

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func without(list []string, s string) []string {
	for i, v := range list {
		if v == s {
			return append(list[:i:i], list[i+1:]...)
		}
	}
	return list
}

const (
	semaphoreMaxSeen = 500
	// reclaimEvery is how often a semaphore with holders checks that they still run.
	reclaimEvery = 5 * time.Second
)

// semaphoreQuery reads a semaphore's state as it is now (its Memo lags behind a grant).
const semaphoreQuery = "gateflow.semaphore.state"

// semaphoreRun is a running semaphore: its state and a channel its Update handlers wake
// the main loop with when they have changed the state.
type semaphoreRun struct {
	st   *SemaphoreState
	wake workflow.Channel
}

// semaphoreWorkflow grants the permits of one group; it ends when idle.
func semaphoreWorkflow(ctx workflow.Context, st SemaphoreState) error {
	if err := workflow.SetQueryHandler(ctx, semaphoreQuery, func() (SemaphoreState, error) { return st, nil }); err != nil {
		return err
	}
	s := &semaphoreRun{st: &st, wake: workflow.NewBufferedChannel(ctx, 1)}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, protocol.SemaphoreClaim,
		func(ctx workflow.Context, m protocol.SemaphoreMessage) (ClaimResult, error) {
			defer s.wake.SendAsync(true)
			return s.claim(ctx, m)
		}, workflow.UpdateHandlerOptions{Description: "claim the only permit of this group for a run about to start (flowclient's exclusive concurrency keys)"}); err != nil {
		return err
	}
	acquire := workflow.GetSignalChannel(ctx, protocol.SemaphoreAcquire)
	release := workflow.GetSignalChannel(ctx, protocol.SemaphoreRelease)
	permit := func(run string) error {
		return workflow.SignalExternalWorkflow(ctx, run, "", protocol.SignalPermit, st.Group).Get(ctx, nil)
	}
	grant := func() {
		for {
			run, ok := st.Next()
			if !ok {
				return
			}
			if err := permit(run); err != nil {
				st.Drop(run) // the run is gone
			}
		}
	}
	for n := 0; ; n++ {
		// Idle first: a semaphore that continued as new while idle would wait for ever.
		// (A semaphore started by a signal has that signal pending in its first task.)
		quiet := acquire.Len() == 0 && release.Len() == 0 && workflow.AllHandlersFinished(ctx)
		if st.Idle() && quiet {
			return nil
		}
		if n >= semaphoreMaxSeen && quiet {
			return workflow.NewContinueAsNewError(ctx, protocol.SemaphoreWorkflowType, st)
		}
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(acquire, func(c workflow.ReceiveChannel, _ bool) {
			var m protocol.SemaphoreMessage
			c.Receive(ctx, &m)
			if st.Acquire(m.Run, m.Limit) {
				if err := permit(m.Run); err != nil {
					st.Drop(m.Run) // the run is gone
				}
			}
		})
		sel.AddReceive(release, func(c workflow.ReceiveChannel, _ bool) {
			var m protocol.SemaphoreMessage
			c.Receive(ctx, &m)
			st.Release(m.Run)
		})
		sel.AddReceive(s.wake, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil) })
		tctx, cancel := workflow.WithCancel(ctx)
		if len(st.Holders) > 0 {
			sel.AddFuture(workflow.NewTimerWithOptions(tctx, reclaimEvery, workflow.TimerOptions{Summary: "check holders"}), func(workflow.Future) {
				actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second,
					RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3}})
				var closed []string
				err := workflow.ExecuteActivity(actx, protocol.SemaphoreCheckActivity, st.Holders).Get(ctx, &closed)
				if err != nil {
					workflow.GetLogger(ctx).Warn("check the holders of a concurrency group", "group", st.Group, "error", err)
				}
				st.Reclaim(closed)
			})
		}
		sel.Select(ctx)
		cancel()
		grant()
		if err := workflow.UpsertMemo(ctx, map[string]any{protocol.MemoSemaphore: st}); err != nil {
			return err
		}
	}
}

// semaphoreActivities talk to semaphores and check holders.
type semaphoreActivities struct{ queue string }

func (s semaphoreActivities) signal(ctx context.Context, signal string, m protocol.SemaphoreMessage) error {
	id := protocol.SemaphoreID(m.Group, s.queue)
	_, err := activity.GetClient(ctx).SignalWithStartWorkflow(ctx, id, signal, m, client.StartWorkflowOptions{
		ID: id, TaskQueue: s.queue, StaticSummary: "gateflow concurrency group " + m.Group,
	}, protocol.SemaphoreWorkflowType, SemaphoreState{Group: m.Group, Limit: m.Limit})
	return err
}

// check returns the holders whose runs have closed (or are unknown).
func (s semaphoreActivities) check(ctx context.Context, holders []string) ([]string, error) {
	var closed []string
	for _, h := range holders {
		d, err := activity.GetClient(ctx).DescribeWorkflowExecution(ctx, h, "")
		if err != nil {
			if protocol.IsNotFound(err) {
				closed = append(closed, h)
			}
			continue
		}
		if !protocol.IsOpen(d.GetWorkflowExecutionInfo().GetStatus()) {
			closed = append(closed, h)
		}
	}
	return closed, nil
}

// ConcurrencyHolder is the live run that holds (or waits for) the permit of group on
// queue, if any: an exclusive concurrency key is taken while it has one.
func ConcurrencyHolder(ctx context.Context, tc client.Client, queue, group string) (string, error) {
	resp, err := tc.DescribeWorkflowExecution(ctx, protocol.SemaphoreID(group, queue), "")
	if err != nil {
		if protocol.IsNotFound(err) {
			return "", nil
		}
		return "", err
	}
	if !protocol.IsOpen(resp.GetWorkflowExecutionInfo().GetStatus()) {
		return "", nil
	}
	var st SemaphoreState
	if _, err := protocol.DecodeMemo(resp.GetWorkflowExecutionInfo().GetMemo(), protocol.MemoSemaphore, &st); err != nil {
		return "", err
	}
	holders := append(append([]string(nil), st.Holders...), st.Waiting...)
	sort.Strings(holders)
	for _, h := range holders {
		if d, err := tc.DescribeWorkflowExecution(ctx, h, ""); err == nil && protocol.IsOpen(d.GetWorkflowExecutionInfo().GetStatus()) {
			return h, nil
		}
	}
	return "", nil
}

// ConcurrencyRuns are the live runs that hold or wait for a permit of group on queue:
// the holders first, then the waiting runs, each in the order the semaphore took them
// (oldest first). Runs the semaphore still lists but that have closed are left out.
func ConcurrencyRuns(ctx context.Context, tc client.Client, queue, group string) ([]string, error) {
	resp, err := tc.DescribeWorkflowExecution(ctx, protocol.SemaphoreID(group, queue), "")
	if err != nil {
		if protocol.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	if !protocol.IsOpen(resp.GetWorkflowExecutionInfo().GetStatus()) {
		return nil, nil
	}
	// The Query answers with the state as it is; the Memo (a semaphore whose worker is
	// older) is upserted only once a grant has been delivered.
	var st SemaphoreState
	v, qerr := tc.QueryWorkflow(ctx, protocol.SemaphoreID(group, queue), "", semaphoreQuery)
	if qerr == nil {
		qerr = v.Get(&st)
	}
	if qerr != nil {
		if _, err := protocol.DecodeMemo(resp.GetWorkflowExecutionInfo().GetMemo(), protocol.MemoSemaphore, &st); err != nil {
			return nil, errors.Join(qerr, err)
		}
	}
	var live []string
	for _, r := range append(append([]string(nil), st.Holders...), st.Waiting...) {
		d, err := tc.DescribeWorkflowExecution(ctx, r, "")
		switch {
		case err != nil && protocol.IsNotFound(err):
		case err != nil:
			return nil, err
		case protocol.IsOpen(d.GetWorkflowExecutionInfo().GetStatus()) && !contains(live, r):
			live = append(live, r)
		}
	}
	return live, nil
}
