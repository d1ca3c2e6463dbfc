package flowlink

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/flowdef"
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

// Catalog is a task queue's catalog as package flow reads it (flowclient.Catalog).
type Catalog struct {
	TaskQueue       string
	MonthlyQuotaUSD string
	// Workflows is a []flow.WorkflowInfo.
	Workflows any
	Workers   *RegistryInfo
	UpdatedAt time.Time
}

// RegistryInfo (flowclient.RegistryInfo) is what a worker publishes of its registries in the catalog of its task
// queue, so that clients validate declarative definitions (package flowdef) against what
// the workers serve. The latest worker to start on the queue publishes it: the workers
// of a task queue are expected to have the same registrations.
type RegistryInfo struct {
	// Actions are the names of the activities registered with Worker.RegisterActivity,
	// sorted, without the built-in ones (flowdef.BuiltinActions).
	Actions []string `json:"actions,omitempty"`
	// Fallback is true when the workers take every unknown action name
	// (Worker.RegisterFallbackAction).
	Fallback bool `json:"fallback,omitempty"`
	// ItemProviders are the names of WorkerOptions.ItemProviders, sorted.
	ItemProviders []string `json:"item_providers,omitempty"`
	// GateTypes are the types of WorkerOptions.GateResolvers, sorted, without the built-in
	// ones (flowdef.BuiltinGateResolvers).
	GateTypes []string `json:"gate_types,omitempty"`
	// Services are the names of WorkerOptions.Services, sorted; never nil in a worker's
	// entry (empty: none declared), nil in entries of older workers (not known).
	Services []string `json:"services"`
	// PublishedBy is the identity of the worker that published it.
	PublishedBy string    `json:"published_by,omitempty"`
	PublishedAt time.Time `json:"published_at"`
}

// StaticRegistry is what definitions are validated against on a task queue whose
// workers published workers (nil: none did) and serve flows: the built-in actions and
// gate resolvers and those of the workers, their item providers and services.
func StaticRegistry(workers *RegistryInfo, flows []string) *flowdef.StaticRegistry {
	r := &flowdef.StaticRegistry{
		Actions:   slices.Clone(flowdef.BuiltinActions),
		GateTypes: slices.Clone(flowdef.BuiltinGateResolvers),
	}
	if workers != nil {
		r.Actions = append(r.Actions, workers.Actions...)
		r.Fallback = workers.Fallback
		r.ItemProviders = slices.Clone(workers.ItemProviders)
		r.GateTypes = append(r.GateTypes, workers.GateTypes...)
		r.Services = slices.Clone(workers.Services)
	}
	r.GoFlows = flows
	return r
}

// UnknownWorkflowError is flowclient.UnknownWorkflowError as package flow makes it.
type UnknownWorkflowError struct {
	Name      string
	TaskQueue string
	Known     []string
	// Removed is set when the flow is known but served no more for new runs (its
	// WorkflowInfo.Removed).
	Removed string
}

// Error implements error.
func (e *UnknownWorkflowError) Error() string {
	if e.Removed != "" {
		return fmt.Sprintf("workflow %q on task queue %s is not served for new runs: %s", e.Name, e.TaskQueue, e.Removed)
	}
	known := "none"
	if len(e.Known) > 0 {
		known = strings.Join(e.Known, ", ")
	}
	return fmt.Sprintf("unknown workflow %q on task queue %s (known: %s)", e.Name, e.TaskQueue, known)
}

// InputError is flowclient.InputError as package flow makes it.
type InputError struct {
	Workflow string
	Err      error
}

// Error implements error.
func (e *InputError) Error() string { return fmt.Sprintf("bad input for %s: %v", e.Workflow, e.Err) }

// Unwrap returns the cause.
func (e *InputError) Unwrap() error { return e.Err }

// Set by package flow (flow/link.go).
var (
	// PlanStart checks name's input and opts (a flow.StartOptions; plan makes the start a
	// plan) against the catalog's entries workflows (a []flow.WorkflowInfo) and plans the
	// start on queue, created by identity unless opts say who.
	PlanStart func(workflows any, queue, identity, name string, input any, opts any, plan bool, now time.Time) (*Plan, error)
	// ReadCatalog reads the catalog of the task queue.
	ReadCatalog func(ctx context.Context, tc client.Client, queue string) (*Catalog, error)
	// ValidateName checks a flow name.
	ValidateName func(name string) error
	// NewRunID is a new random run ID for a run of the flow name.
	NewRunID func(name string) string
	// ScheduleID is the Temporal schedule ID of the n-th schedule of flow (s is a
	// schedule.Info) on queue.
	ScheduleID func(flow string, n int, s any, queue string) string
	// MaxRunsGroup is the concurrency group whose permits count the live runs of flow name.
	MaxRunsGroup func(name string) string
	// CheckAnswerSize refuses an answer over signals.MaxAnswerBytesLimit.
	CheckAnswerSize func(data []byte) error
	// MarkWaitingService marks the running steps of st whose activity waits for an open
	// circuit breaker.
	MarkWaitingService func(st *runs.State, pending []*workflowpb.PendingActivityInfo)
)
