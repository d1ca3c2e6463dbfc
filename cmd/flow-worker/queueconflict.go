package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
)

// conflictInterval is how often flow-worker looks again for workers that share its task
// queue with other flows (one that starts later).
const conflictInterval = 30 * time.Second

// queueConflict describes a conflict on queue: other workers poll it (pollers that are
// not this process) while its catalog lists flows this worker does not serve (served),
// so the tasks of those flows that reach this worker fail with "unable to find workflow
// type". It returns "" when there is none.
func queueConflict(ctx context.Context, tc client.Client, queue string, served []string) (string, error) {
	resp, err := tc.DescribeTaskQueue(ctx, queue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	if err != nil {
		return "", fmt.Errorf("describe task queue %s: %w", queue, err)
	}
	self := fmt.Sprintf("%d@", os.Getpid())
	var others []string
	for _, p := range resp.GetPollers() {
		if id := p.GetIdentity(); id != "" && !strings.HasPrefix(id, self) && !slices.Contains(others, id) {
			others = append(others, id)
		}
	}
	if len(others) == 0 {
		return "", nil
	}
	cat, err := flowclient.New(tc, flowclient.Options{TaskQueue: queue}).Workflows(ctx)
	if errors.Is(err, core.ErrNoCatalog) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var missing []string
	for _, w := range cat.Workflows {
		if w.Removed == "" && !slices.Contains(served, w.Name) {
			missing = append(missing, w.Name)
		}
	}
	if len(missing) == 0 {
		return "", nil
	}
	slices.Sort(others)
	worker := "worker " + others[0]
	if len(others) > 1 {
		worker = "workers " + strings.Join(others, ", ")
	}
	return fmt.Sprintf("task queue %s is also served by %s with flows %s that this worker does not serve: "+
		"their tasks will fail here (unable to find workflow type); give this worker (or theirs) its own --task-queue",
		queue, worker, strings.Join(missing, ", ")), nil
}

// watchQueueConflicts logs each conflict queueConflict finds on w's task queue once: at
// once, then every conflictInterval until ctx ends.
func watchQueueConflicts(ctx context.Context, tc client.Client, w *flow.Worker, stderr io.Writer) {
	seen := map[string]bool{}
	for {
		var served []string
		for _, f := range w.Flows() {
			served = append(served, f.Name)
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		msg, err := queueConflict(cctx, tc, w.TaskQueue(), served)
		cancel()
		if err == nil && msg != "" && !seen[msg] {
			seen[msg] = true
			fmt.Fprintln(stderr, "flow-worker: warning:", msg)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(conflictInterval):
		}
	}
}
