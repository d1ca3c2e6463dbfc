package flow

import (
	"context"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/internal/flowlink"
)

// init gives package flowclient (through internal/flowlink) the start planning and the
// catalog reading the worker shares with the client.
func init() {
	flowlink.PlanStart = func(cat any, queue, identity, name string, input any, opts any, plan bool, now time.Time) (*flowlink.Plan, error) {
		o := opts.(StartOptions)
		o.plan = plan
		return planStart(cat.(*Catalog), clientOptions{TaskQueue: queue, Identity: identity}, name, input, o, now)
	}
	flowlink.ReadCatalog = func(ctx context.Context, tc client.Client, queue string) (any, error) {
		return readCatalog(ctx, tc, queue)
	}
	flowlink.ValidateName = validateName
	flowlink.NewRunID = newRunID
	flowlink.ScheduleID = func(flow string, n int, s any, queue string) string {
		return temporalScheduleID(flow, n, s.(ScheduleInfo), queue)
	}
	flowlink.MaxRunsGroup = maxRunsGroup
	flowlink.CheckAnswerSize = checkAnswerSize
	flowlink.MarkWaitingService = markWaitingService
}
