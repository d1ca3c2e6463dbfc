package flowclient

import (
	"context"
	"fmt"
	"time"

	"github.com/gateflow/gateflow/schedule"

	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/internal/flowlink"
)

// The parts of package flow the client shares with the worker (internal/flowlink).
var (
	validateName       = flowlink.ValidateName
	newRunID           = flowlink.NewRunID
	maxRunsGroup       = flowlink.MaxRunsGroup
	checkAnswerSize    = flowlink.CheckAnswerSize
	markWaitingService = flowlink.MarkWaitingService
)

// startPlan is a planned start: the run's ID, input and options (see planStart).
type startPlan = flowlink.Plan

// planStart checks name's input and opts against the catalog and plans the start, as the
// worker plans its triggered and once starts; plan makes the start a plan (Client.Plan).
func planStart(cat *Catalog, copts Options, name string, input any, opts flow.StartOptions, plan bool, now time.Time) (*startPlan, error) {
	p, err := flowlink.PlanStart(cat.Workflows, copts.TaskQueue, copts.Identity, name, input, opts, plan, now)
	switch e := err.(type) {
	case *flowlink.InputError:
		return nil, (*InputError)(e)
	case *flowlink.UnknownWorkflowError:
		return nil, (*UnknownWorkflowError)(e)
	}
	return p, err
}

// readCatalog reads the catalog of the task queue.
func readCatalog(ctx context.Context, tc client.Client, taskQueue string) (*Catalog, error) {
	c, err := flowlink.ReadCatalog(ctx, tc, taskQueue)
	if err != nil {
		return nil, err
	}
	workflows, ok := c.Workflows.([]flow.WorkflowInfo)
	if !ok {
		return nil, fmt.Errorf("read catalog of %s: its entries are a %T", taskQueue, c.Workflows)
	}
	return &Catalog{TaskQueue: c.TaskQueue, MonthlyQuotaUSD: c.MonthlyQuotaUSD, Workflows: workflows,
		Workers: (*RegistryInfo)(c.Workers), UpdatedAt: c.UpdatedAt}, nil
}

// temporalScheduleID is the Temporal schedule ID of the n-th schedule s of the flow name
// on queue.
func temporalScheduleID(name string, n int, s schedule.Info, queue string) string {
	return flowlink.ScheduleID(name, n, s, queue)
}
