package entity

import (
	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/protocol"
)

// WorkflowRegistry is what workflows are registered on: a Temporal worker, a test
// environment or a replayer.
type WorkflowRegistry interface {
	RegisterWorkflowWithOptions(w any, options workflow.RegisterOptions)
}

// ActivityRegistry is what activities are registered on: a Temporal worker or a test
// environment.
type ActivityRegistry interface {
	RegisterActivityWithOptions(a any, options activity.RegisterOptions)
}

// Workflows are the entity workflows by workflow type. It is the one table of reserved
// names: RegisterWorkflows registers these, and no flow may take one of the names.
var Workflows = []struct {
	Type string
	Func any
}{
	{protocol.CatalogWorkflowType, catalogWorkflow},
	{protocol.MailboxWorkflowType, mailboxWorkflow},
	{protocol.LedgerWorkflowType, ledgerWorkflow},
	{protocol.ControlWorkflowType, controlWorkflow},
	{protocol.SemaphoreWorkflowType, semaphoreWorkflow},
	{protocol.FanoutWorkflowType, fanoutWorkflow},
}

// Reserved reports whether name is the workflow type of an entity.
func Reserved(name string) bool {
	for _, w := range Workflows {
		if w.Type == name {
			return true
		}
	}
	return false
}

// RegisterWorkflows registers every entity workflow on r.
func RegisterWorkflows(r WorkflowRegistry) {
	for _, w := range Workflows {
		r.RegisterWorkflowWithOptions(w.Func, workflow.RegisterOptions{Name: w.Type})
	}
}

// QuotaLimit returns the monthly quota of a scope, and whether one is set.
type QuotaLimit func(budget.Scope) (decimal.Decimal, bool)

// RegisterActivities registers the activities runs use to reach the entities of queue:
// ledger charges, quota checks, reservations and releases (against limit), mailbox subscriptions and posts, holds while
// paused, and semaphore messages and holder checks.
func RegisterActivities(r ActivityRegistry, queue string, limit QuotaLimit) {
	qa := quotaActivities{queue: queue, limit: limit}
	r.RegisterActivityWithOptions(qa.charge, activity.RegisterOptions{Name: protocol.QuotaChargeActivity})
	r.RegisterActivityWithOptions(qa.check, activity.RegisterOptions{Name: protocol.QuotaCheckActivity})
	r.RegisterActivityWithOptions(qa.reserve, activity.RegisterOptions{Name: protocol.QuotaReserveActivity})
	r.RegisterActivityWithOptions(qa.release, activity.RegisterOptions{Name: protocol.QuotaReleaseActivity})
	mb := mailboxActivities{queue: queue}
	r.RegisterActivityWithOptions(mb.subscribe, activity.RegisterOptions{Name: protocol.MailboxSubscribeActivity})
	r.RegisterActivityWithOptions(mb.unsubscribe, activity.RegisterOptions{Name: protocol.MailboxUnsubscribeActivity})
	r.RegisterActivityWithOptions(mb.post, activity.RegisterOptions{Name: protocol.MailboxPostActivity})
	r.RegisterActivityWithOptions(controlActivities{}.hold, activity.RegisterOptions{Name: protocol.ControlHoldActivity})
	sa := semaphoreActivities{queue: queue}
	r.RegisterActivityWithOptions(sa.signal, activity.RegisterOptions{Name: protocol.SemaphoreSignalActivity})
	r.RegisterActivityWithOptions(sa.check, activity.RegisterOptions{Name: protocol.SemaphoreCheckActivity})
}
