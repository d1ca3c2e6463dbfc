package flow

import (
	"context"
	"fmt"
	"sort"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Concurrency: a semaphore entity workflow per group and task queue grants permits to runs
// (StartOptions.ConcurrencyLimits, ConcurrencyKey). A run waits in pending for its permits
// and releases them when it ends however it ends; the permit of a run that was terminated
// (and so could not release it) is reclaimed when the semaphore sees the run closed.
const (
	// SemaphoreWorkflowType is the semaphore entity workflow's type.
	SemaphoreWorkflowType = "gateflow.semaphore"
	// MemoSemaphore is the Memo key of a semaphore's SemaphoreState.
	MemoSemaphore = "gateflow.semaphore"
	// SignalPermit grants a run its permit of a group.
	SignalPermit     = "gateflow.permit"
	semAcquire       = "acquire"
	semRelease       = "release"
	semaphoreCall    = "gateflow.semaphore.signal"
	semaphoreCheck   = "gateflow.semaphore.check"
	semaphoreMaxSeen = 500
	// reclaimEvery is how often a semaphore with holders checks that they still run.
	reclaimEvery = 5 * time.Second
)

// SemaphoreID is the ID of a concurrency group's semaphore on a task queue.
func SemaphoreID(group, queue string) string { return "gateflow-semaphore/" + group + "@" + queue }

// SemaphoreState is a semaphore's state, in its Memo for clients and its input across
// continue-as-new.
type SemaphoreState struct {
	Group   string   `json:"group"`
	Limit   int      `json:"limit"`
	Holders []string `json:"holders"`
	Waiting []string `json:"waiting"`
}

type semMessage struct {
	Group string `json:"group"`
	Run   string `json:"run"`
	Limit int    `json:"limit"`
}

func remove(list []string, s string) ([]string, bool) {
	for i, v := range list {
		if v == s {
			return append(list[:i:i], list[i+1:]...), true
		}
	}
	return list, false
}

// semaphoreWorkflow grants at most Limit permits of one group, first come first served.
func semaphoreWorkflow(ctx workflow.Context, st SemaphoreState) error {
	acquire := workflow.GetSignalChannel(ctx, semAcquire)
	release := workflow.GetSignalChannel(ctx, semRelease)
	grant := func() {
		for len(st.Waiting) > 0 && len(st.Holders) < max(st.Limit, 1) {
			run := st.Waiting[0]
			st.Waiting = st.Waiting[1:]
			st.Holders = append(st.Holders, run)
			if err := workflow.SignalExternalWorkflow(ctx, run, "", SignalPermit, st.Group).Get(ctx, nil); err != nil {
				st.Holders, _ = remove(st.Holders, run) // the run is gone
			}
		}
	}
	for n := 0; ; n++ {
		if n >= semaphoreMaxSeen && acquire.Len() == 0 && release.Len() == 0 {
			return workflow.NewContinueAsNewError(ctx, SemaphoreWorkflowType, st)
		}
		if len(st.Holders) == 0 && len(st.Waiting) == 0 && acquire.Len() == 0 && release.Len() == 0 && n > 0 {
			return nil
		}
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(acquire, func(c workflow.ReceiveChannel, _ bool) {
			var m semMessage
			c.Receive(ctx, &m)
			if m.Limit > 0 {
				st.Limit = m.Limit
			}
			if _, held := remove(append([]string(nil), st.Holders...), m.Run); held {
				_ = workflow.SignalExternalWorkflow(ctx, m.Run, "", SignalPermit, st.Group).Get(ctx, nil)
				return
			}
			if _, waiting := remove(append([]string(nil), st.Waiting...), m.Run); !waiting {
				st.Waiting = append(st.Waiting, m.Run)
			}
		})
		sel.AddReceive(release, func(c workflow.ReceiveChannel, _ bool) {
			var m semMessage
			c.Receive(ctx, &m)
			st.Holders, _ = remove(st.Holders, m.Run)
			st.Waiting, _ = remove(st.Waiting, m.Run)
		})
		tctx, cancel := workflow.WithCancel(ctx)
		if len(st.Holders) > 0 {
			sel.AddFuture(workflow.NewTimerWithOptions(tctx, reclaimEvery, workflow.TimerOptions{Summary: "check holders"}), func(workflow.Future) {
				actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second,
					RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3}})
				var closed []string
				if err := workflow.ExecuteActivity(actx, semaphoreCheck, st.Holders).Get(ctx, &closed); err == nil {
					for _, r := range closed {
						st.Holders, _ = remove(st.Holders, r)
					}
				}
			})
		}
		sel.Select(ctx)
		cancel()
		grant()
		if err := workflow.UpsertMemo(ctx, map[string]any{MemoSemaphore: st}); err != nil {
			return err
		}
	}
}

// semaphoreActivities talk to semaphores and check holders.
type semaphoreActivities struct{ queue string }

func (s semaphoreActivities) signal(ctx context.Context, signal string, m semMessage) error {
	id := SemaphoreID(m.Group, s.queue)
	_, err := activity.GetClient(ctx).SignalWithStartWorkflow(ctx, id, signal, m, client.StartWorkflowOptions{
		ID: id, TaskQueue: s.queue, StaticSummary: "gateflow concurrency group " + m.Group,
	}, SemaphoreWorkflowType, SemaphoreState{Group: m.Group, Limit: m.Limit})
	return err
}

// check returns the holders whose runs have closed.
func (s semaphoreActivities) check(ctx context.Context, holders []string) ([]string, error) {
	var closed []string
	for _, h := range holders {
		d, err := activity.GetClient(ctx).DescribeWorkflowExecution(ctx, h, "")
		if err != nil {
			if isNotFound(err) {
				closed = append(closed, h)
			}
			continue
		}
		if !isOpen(d.GetWorkflowExecutionInfo().GetStatus()) {
			closed = append(closed, h)
		}
	}
	return closed, nil
}

// acquirePermits waits in pending for a permit of every concurrency group of the run.
func (rt *runner) acquirePermits(c *Context, limits map[string]int) error {
	if len(limits) == 0 {
		return nil
	}
	granted := map[string]bool{}
	ch := workflow.GetSignalChannel(c.wctx, SignalPermit)
	workflow.Go(c.wctx, func(gctx workflow.Context) {
		for {
			var g string
			ch.Receive(gctx, &g)
			granted[g] = true
		}
	})
	groups := sortedKeys(limits)
	rt.permits = groups
	actx := workflow.WithActivityOptions(c.wctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second,
		Summary: "acquire concurrency permits", RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 10}})
	for _, g := range groups {
		if err := workflow.ExecuteActivity(actx, semaphoreCall, semAcquire, semMessage{Group: g, Run: c.RunID(), Limit: limits[g]}).Get(c.wctx, nil); err != nil {
			return fmt.Errorf("acquire a permit of %s: %w", g, err)
		}
	}
	for _, g := range groups {
		if granted[g] {
			continue
		}
		c.wait("permit:"+g, StatusPending)
		err := workflow.Await(c.wctx, func() bool { return granted[g] })
		c.unwait("permit:" + g)
		if err != nil {
			return err
		}
	}
	return nil
}

// releasePermits gives the run's permits back (on a disconnected context: also after a
// cancellation).
func (rt *runner) releasePermits(wctx workflow.Context) {
	if len(rt.permits) == 0 {
		return
	}
	dctx, _ := workflow.NewDisconnectedContext(wctx)
	actx := workflow.WithActivityOptions(dctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second,
		Summary: "release concurrency permits", RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 10}})
	id := workflow.GetInfo(wctx).WorkflowExecution.ID
	for _, g := range rt.permits {
		_ = workflow.ExecuteActivity(actx, semaphoreCall, semRelease, semMessage{Group: g, Run: id}).Get(dctx, nil)
	}
	rt.permits = nil
}

// concurrencyHolder is who holds an exclusive key's permit, if anyone.
func (c *Client) concurrencyHolder(ctx context.Context, key string) (string, error) {
	resp, err := c.tc.DescribeWorkflowExecution(ctx, SemaphoreID(key, c.opts.TaskQueue), "")
	if err != nil {
		if isNotFound(err) {
			return "", nil
		}
		return "", err
	}
	if !isOpen(resp.GetWorkflowExecutionInfo().GetStatus()) {
		return "", nil
	}
	var st SemaphoreState
	if _, err := decodeMemo(resp.GetWorkflowExecutionInfo().GetMemo(), MemoSemaphore, &st); err != nil {
		return "", err
	}
	holders := append(append([]string(nil), st.Holders...), st.Waiting...)
	sort.Strings(holders)
	for _, h := range holders {
		if d, err := c.tc.DescribeWorkflowExecution(ctx, h, ""); err == nil && isOpen(d.GetWorkflowExecutionInfo().GetStatus()) {
			return h, nil
		}
	}
	return "", nil
}
