// Package flowlink carries the parts of package flow that package flowclient needs and
// that are not public API: the start planning and the catalog reading the worker shares
// with the client (triggered, once and scheduled starts are planned as Client.Start plans
// them), and a few checks. Package flow sets the functions when it is initialised;
// flowclient imports flow, so they are set before flowclient uses them. Parameters typed
// any carry flow's types (flowlink cannot import flow, which imports it).
package flowlink

import (
	"context"
	"encoding/json"
	"time"

	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/searchattr"
	"github.com/gateflow/gateflow/runs"
)

// Plan is everything a start decided before it starts the run: the run's ID, input,
// options for the run wrapper and for Temporal. PlanStart makes it without talking to the
// server, so it is table-tested.
type Plan struct {
	Name    string
	ID      string
	Input   json.RawMessage
	Now     time.Time
	RunOpts protocol.RunOptions
	// Exclusive is the semaphore group of the start's concurrency key, if it has one.
	Exclusive string
	// MaxRunsGroup is the group of the flow's MaxRuns (flow/maxruns_key.go), if it has one.
	MaxRunsGroup string
	Workflow     client.StartWorkflowOptions
	Status       runs.Status
	SA           []temporal.SearchAttributeUpdate
}

// Hold marks the run as held in pending because its workflow type is paused.
func (p *Plan) Hold() {
	p.RunOpts.Paused = true
	p.Status = runs.StatusPending
}

// Options are the Temporal start options of the plan, with its status and memo.
func (p *Plan) Options() client.StartWorkflowOptions {
	o := p.Workflow
	sa := p.SA
	if !p.RunOpts.Plan {
		sa = append(append([]temporal.SearchAttributeUpdate(nil), sa...), searchattr.StatusKey.ValueSet(string(p.Status)))
	}
	o.TypedSearchAttributes = temporal.NewSearchAttributes(sa...)
	o.Memo = map[string]any{protocol.MemoOptions: p.RunOpts}
	// Without it the SDK answers a start whose ID a live run holds with that run, as if it
	// had started (whatever its flow): the start is refused instead (RunExistsError).
	o.WorkflowExecutionErrorWhenAlreadyStarted = true
	return o
}

// Set by package flow (flow/link.go).
var (
	// PlanStart checks name's input and opts (a flow.StartOptions; plan makes the start a
	// plan) against cat (a *flow.Catalog) and plans the start on queue, created by identity
	// unless opts say who.
	PlanStart func(cat any, queue, identity, name string, input any, opts any, plan bool, now time.Time) (*Plan, error)
	// ReadCatalog reads the catalog (a *flow.Catalog) of the task queue.
	ReadCatalog func(ctx context.Context, tc client.Client, queue string) (any, error)
	// ValidateName checks a flow name.
	ValidateName func(name string) error
	// NewRunID is a new random run ID for a run of the flow name.
	NewRunID func(name string) string
	// ScheduleID is the Temporal schedule ID of the n-th schedule of flow (s is a
	// flow.ScheduleInfo) on queue.
	ScheduleID func(flow string, n int, s any, queue string) string
	// MaxRunsGroup is the concurrency group whose permits count the live runs of flow name.
	MaxRunsGroup func(name string) string
	// CheckAnswerSize refuses an answer over signals.MaxAnswerBytesLimit.
	CheckAnswerSize func(data []byte) error
	// MarkWaitingService marks the running steps of st whose activity waits for an open
	// circuit breaker.
	MarkWaitingService func(st *runs.State, pending []*workflowpb.PendingActivityInfo)
)
