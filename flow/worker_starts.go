package flow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/startplan"
)

// errorTriggerRefused is the application error type of a triggered start the catalog
// refuses (the flow is not served, or its input type does not accept the output).
const errorTriggerRefused = "TriggerRefused"

// ensureOnce starts the once start (Once) of each of flows (the worker's) that has one,
// unless a run with its ID exists, running or closed.
func (w *Worker) ensureOnce(ctx context.Context, flows []Definition) error {
	var cat *core.Catalog
	for _, f := range flows {
		info := f.Info()
		if info.Once == nil {
			continue
		}
		if cat == nil {
			var err error
			if cat, err = startplan.ReadCatalog(ctx, w.client, w.opts.TaskQueue); err != nil {
				return fmt.Errorf("once start of %s: %w", info.Name, err)
			}
		}
		id := protocol.OnceID(info.Name, w.opts.TaskQueue)
		if _, err := startUnique(ctx, w.client, cat, w.opts.TaskQueue, info.Name, id, info.Once.Input, "once"); err != nil {
			return fmt.Errorf("once start of %s: %w", info.Name, err)
		}
	}
	return nil
}

// triggerStartActivity is the activity protocol.TriggerStartActivity: it starts the triggered
// run req describes, once (see OnRunOf), and returns it. A start the catalog refuses is
// not retried.
func triggerStartActivity(ctx context.Context, req protocol.TriggerStart) (*core.Run, error) {
	tc := activity.GetClient(ctx)
	if tc == nil {
		// A test environment without a server: there is nothing to start (testsuite
		// users mock the activity to see what would start).
		return nil, temporal.NewNonRetryableApplicationError("start "+req.Flow+": no Temporal client (a test environment)", errorTriggerRefused, nil)
	}
	queue := protocol.BaseQueue(activity.GetInfo(ctx).TaskQueue)
	cat, err := startplan.ReadCatalog(ctx, tc, queue)
	if err != nil {
		return nil, err
	}
	run, err := startUnique(ctx, tc, cat, queue, req.Flow, req.ID, req.Input, "trigger")
	var ierr *core.InputError
	var uerr *core.UnknownWorkflowError
	if errors.As(err, &ierr) || errors.As(err, &uerr) {
		msg := fmt.Sprintf("start %s, triggered by run %s of %s (%s): %v", req.Flow, req.ByID, req.ByFlow, req.Outcome, err)
		return nil, temporal.NewNonRetryableApplicationError(msg, errorTriggerRefused, nil)
	}
	return run, err
}

// startUnique starts a run of name with the workflow ID id and input, as flowclient.Client.Start
// plans it (the catalog's checks, the flow's start defaults, the options memo) but without
// reserving the monthly quotas (the run checks them itself), unless a run with that ID
// exists, running or closed: then it returns that run, with Existing set when it knows.
func startUnique(ctx context.Context, tc client.Client, cat *core.Catalog, queue, name, id string, input json.RawMessage, createdBy string) (*core.Run, error) {
	p, err := startplan.New(cat, startplan.Starter{TaskQueue: queue, Identity: createdBy}, name, input,
		core.StartOptions{ID: id, CreatedBy: createdBy}, false, time.Now())
	if err != nil {
		return nil, err
	}
	p.RunOpts.QuotaChecked = false
	o := p.Options()
	o.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
	o.WorkflowIDConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING
	o.WorkflowExecutionErrorWhenAlreadyStarted = false // the existing run is the answer
	we, err := tc.ExecuteWorkflow(ctx, o, name, p.Input)
	if err != nil {
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		if errors.As(err, &started) {
			return &core.Run{ID: id, RunID: started.RunId, Workflow: name, Existing: true}, nil
		}
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	return &core.Run{ID: we.GetID(), RunID: we.GetRunID(), Workflow: name}, nil
}
