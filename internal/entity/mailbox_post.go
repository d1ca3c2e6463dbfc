package entity

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/signals"
)

// PostMailboxes posts e to the mailboxes of (e.Name, e.Key) on every task queue of the
// namespace: a mailbox is served by its queue's workers, and the runs waiting on a key may
// be on any queue. It goes to each queue with a catalog (gateflow workers) whose mailbox
// of the key is running (it has waiting runs or kept signals), and to queue, the sender's
// own, when that has workers too or no mailbox ran anywhere (the mailbox there keeps it
// for runs that start waiting later). It returns the queues it went to, sorted; on an
// error, those it had reached.
func PostMailboxes(ctx context.Context, tc client.Client, queue string, e signals.Envelope) ([]string, error) {
	queues, err := catalogQueues(ctx, tc)
	if err != nil {
		return nil, err
	}
	var to []string
	for _, q := range queues {
		if q == queue {
			continue
		}
		running, err := mailboxRunning(ctx, tc, protocol.MailboxID(q, e.Name, e.Key))
		if err != nil {
			return nil, err
		}
		if running {
			to = append(to, q)
		}
	}
	if len(to) == 0 || slices.Contains(queues, queue) {
		to = append(to, queue)
	}
	slices.Sort(to)
	var sent []string
	for _, q := range to {
		if err := SignalMailbox(ctx, tc, q, e.Name, e.Key, protocol.MailboxPost, e); err != nil {
			return sent, fmt.Errorf("the mailbox on task queue %s: %w", q, err)
		}
		sent = append(sent, q)
	}
	return sent, nil
}

// catalogQueues lists the task queues with a running catalog, sorted.
func catalogQueues(ctx context.Context, tc client.Client) ([]string, error) {
	var out []string
	req := &workflowservice.ListWorkflowExecutionsRequest{
		Query:    fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running'", protocol.CatalogWorkflowType),
		PageSize: 1000,
	}
	for {
		resp, err := tc.ListWorkflow(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("list the task queues of the namespace: %w", err)
		}
		for _, ex := range resp.GetExecutions() {
			if q, ok := protocol.CatalogQueue(ex.GetExecution().GetWorkflowId()); ok {
				out = append(out, q)
			}
		}
		if len(resp.GetNextPageToken()) == 0 {
			break
		}
		req.NextPageToken = resp.GetNextPageToken()
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// mailboxRunning reports whether the mailbox workflow id is running.
func mailboxRunning(ctx context.Context, tc client.Client, id string) (bool, error) {
	d, err := tc.DescribeWorkflowExecution(ctx, id, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("describe mailbox %s: %w", id, err)
	}
	return d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil
}

// KeptSignal looks for a signal with e's name, key and ID in the mailboxes of every task
// queue of the namespace (and queue's): the task queue of the first mailbox that keeps it,
// or "" when none does. A mailbox delivers a repeated ID once, so such a signal need not
// be posted again. Mailboxes whose workers cannot answer (older, or down) are skipped.
func KeptSignal(ctx context.Context, tc client.Client, queue string, e signals.Envelope) (string, error) {
	queues, err := catalogQueues(ctx, tc)
	if err != nil {
		return "", err
	}
	if !slices.Contains(queues, queue) {
		queues = append(queues, queue)
	}
	for _, q := range queues {
		id := protocol.MailboxID(q, e.Name, e.Key)
		if running, err := mailboxRunning(ctx, tc, id); err != nil || !running {
			continue
		}
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		v, err := tc.QueryWorkflow(qctx, id, "", protocol.QueryMailboxKept)
		var kept []signals.Envelope
		if err == nil {
			err = v.Get(&kept)
		}
		cancel()
		if err != nil {
			continue
		}
		for _, k := range kept {
			if k.ID == e.ID {
				return q, nil
			}
		}
	}
	return "", nil
}
