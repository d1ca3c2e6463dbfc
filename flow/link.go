package flow

import (
	"context"
	"time"

	"github.com/gateflow/gateflow/schedule"

	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/internal/flowlink"
)

// init gives package flowclient (through internal/flowlink) the start planning and the
// catalog reading the worker shares with the client.
func init() {
	flowlink.PlanStart = func(workflows any, queue, identity, name string, input any, opts any, plan bool, now time.Time) (*flowlink.Plan, error) {
		o := opts.(StartOptions)
		o.plan = plan
		cat := &catalog{TaskQueue: queue, Workflows: workflows.([]WorkflowInfo)}
		return planStart(cat, clientOptions{TaskQueue: queue, Identity: identity}, name, input, o, now)
	}
	flowlink.ReadCatalog = func(ctx context.Context, tc client.Client, queue string) (*flowlink.Catalog, error) {
		c, err := readCatalog(ctx, tc, queue)
		if err != nil {
			return nil, err
		}
		return &flowlink.Catalog{TaskQueue: c.TaskQueue, MonthlyQuotaUSD: c.MonthlyQuotaUSD, Workflows: c.Workflows,
			Workers: c.Workers, UpdatedAt: c.UpdatedAt}, nil
	}
	flowlink.ValidateName = validateName
	flowlink.NewRunID = newRunID
	flowlink.ScheduleID = func(flow string, n int, s any, queue string) string {
		return temporalScheduleID(flow, n, s.(schedule.Info), queue)
	}
	flowlink.MaxRunsGroup = maxRunsGroup
	flowlink.CheckAnswerSize = checkAnswerSize
	flowlink.MarkWaitingService = markWaitingService
}
