package startplan

import (
	"encoding/json"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/display"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/searchattr"
	"github.com/gateflow/gateflow/runs"
)

// Starter is who plans a start: the task queue the run starts on and the identity a run
// is created by when the start does not say (a client's options, or a worker starting a
// triggered or once run).
type Starter struct {
	TaskQueue string
	Identity  string
}

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

// New checks name's input and opts against the catalog and plans the start by st: the
// pure part of flowclient.Client.Start, in its documented order, which the worker's own
// starts (once, triggered) share. plan makes the start a plan (flowclient.Client.Plan):
// the run's handler runs with every step stubbed.
func New(cat *core.Catalog, st Starter, name string, input any, opts core.StartOptions, plan bool, now time.Time) (*Plan, error) {
	info, raw, opts, err := admit(cat, st, name, input, opts, now)
	if err != nil {
		return nil, err
	}
	p := &Plan{Name: name, ID: opts.ID, Input: raw, Now: now}
	if opts.IdempotencyKey != "" {
		p.ID = idempotentRunID(name, opts.IdempotencyKey)
	}
	if p.ID == "" {
		p.ID = NewRunID(name)
	}
	if err := p.setRunOptions(info, opts, plan); err != nil {
		return nil, &core.InputError{Workflow: name, Err: err}
	}
	p.setStartOptions(info, st, opts, plan)
	return p, nil
}

// admit is the checks of a start, in their documented order: the flow is served, the
// input fits its schema, the options are valid, with the flow's defaults too. It returns
// the flow's entry, the input as compact JSON and the options with the flow's defaults.
func admit(cat *core.Catalog, st Starter, name string, input any, opts core.StartOptions, now time.Time) (core.WorkflowInfo, json.RawMessage, core.StartOptions, error) {
	info, ok := cat.Lookup(name)
	if !ok {
		return info, nil, opts, &core.UnknownWorkflowError{Name: name, TaskQueue: st.TaskQueue, Known: cat.Names()}
	}
	if info.Removed != "" {
		return info, nil, opts, &core.UnknownWorkflowError{Name: name, TaskQueue: st.TaskQueue, Removed: info.Removed}
	}
	raw, err := EncodeInput(input)
	if err == nil {
		err = CheckInput(info.InputSchema, raw)
	}
	if err == nil {
		err = ValidateStart(opts, now)
	}
	if err == nil {
		opts, err = WithFlowDefaults(info, opts)
	}
	if err == nil && opts.BudgetPolicy != "" {
		_, err = budget.ParsePolicy(string(opts.BudgetPolicy))
	}
	if err == nil {
		err = validateRunID(opts.ID)
	}
	if err != nil {
		return info, nil, opts, &core.InputError{Workflow: name, Err: err}
	}
	return info, raw, opts, nil
}

// setRunOptions fills the options the run wrapper reads (its memo): budget, attempts,
// labels, guards, concurrency groups (the start's and its MaxRuns key's) and the cap.
func (p *Plan) setRunOptions(info core.WorkflowInfo, opts core.StartOptions, plan bool) error {
	p.RunOpts = protocol.RunOptions{BudgetPolicy: opts.BudgetPolicy, BudgetPause: opts.BudgetPause, QuotaChecked: true,
		MaxAttempts: opts.MaxAttempts, Labels: opts.Labels, Plan: plan}
	if g := opts.Guards; g != nil && *g != (runs.Guards{}) {
		p.RunOpts.Guards = &protocol.GuardLimits{MaxChildDepth: g.MaxChildDepth, MaxFanOut: g.MaxFanOut,
			MaxTokens: g.MaxTokens, MaxWallTime: g.MaxWallTime, MaxSteps: g.MaxSteps}
	}
	if opts.ConcurrencyKey != "" || len(opts.ConcurrencyLimits) > 0 {
		p.RunOpts.Concurrency = map[string]int{}
		for g, n := range opts.ConcurrencyLimits {
			p.RunOpts.Concurrency[g] = n
		}
		if opts.ConcurrencyKey != "" {
			p.Exclusive = "key:" + opts.ConcurrencyKey
			p.RunOpts.Concurrency[p.Exclusive] = 1
		}
	}
	var err error
	if p.MaxRunsGroup, err = StartGroup(info, p.Input); err != nil {
		return err
	}
	if info.MaxRunsKey != "" && p.MaxRunsGroup != "" && !plan {
		// The run acquires its key's group as the start gives it (maxruns_key.go).
		if p.RunOpts.Concurrency == nil {
			p.RunOpts.Concurrency = map[string]int{}
		}
		p.RunOpts.Concurrency[p.MaxRunsGroup] = info.MaxRuns
	}
	if opts.MaxCostUSD != nil {
		p.RunOpts.MaxCostUSD = opts.MaxCostUSD.String()
	}
	return nil
}

// setStartOptions fills what Temporal is asked for: the status, the search attributes
// and the workflow's start options.
func (p *Plan) setStartOptions(info core.WorkflowInfo, st Starter, opts core.StartOptions, plan bool) {
	createdBy := opts.CreatedBy
	if createdBy == "" {
		createdBy = st.Identity
	}
	delay := opts.Delay
	if !opts.StartAt.IsZero() {
		delay = max(opts.StartAt.Sub(p.Now), 0)
	}
	p.Status = runs.StatusRunning
	if delay > 0 {
		p.Status = runs.StatusPending
	}
	priority := opts.Priority // with the flow's default, clamped to 1..5 (WithFlowDefaults)
	p.SA = []temporal.SearchAttributeUpdate{
		searchattr.CreatedByKey.ValueSet(createdBy),
		searchattr.PriorityKey.ValueSet(int64(priority)),
	}
	if info.Category != "" {
		p.SA = append(p.SA, searchattr.CategoryKey.ValueSet(info.Category))
	}
	if info.Version != "" {
		p.SA = append(p.SA, searchattr.VersionKey.ValueSet(info.Version))
	}
	if len(opts.Labels) > 0 {
		p.SA = append(p.SA, searchattr.LabelsKey.ValueSet(LabelList(opts.Labels)))
	}
	capStr := p.RunOpts.MaxCostUSD
	if capStr == "" {
		capStr = info.MaxCostUSD
	}
	if d, err := budget.ParseUSD(capStr); capStr != "" && err == nil {
		p.SA = append(p.SA, searchattr.MaxCostKey.ValueSet(budget.Float64(d)))
	}
	summary := p.Name
	if info.Description != "" {
		summary += ": " + info.Description
	}
	if plan {
		summary = "plan of " + summary
	}
	p.Workflow = client.StartWorkflowOptions{
		ID:                       p.ID,
		TaskQueue:                protocol.TaggedQueue(st.TaskQueue, opts.WorkerTags),
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowIDReusePolicy:    reusePolicy(opts),
		StaticSummary:            display.Preview(summary, 200),
		StaticDetails:            fmt.Sprintf("Started by **%s** with gateflow.\n\nInput type `%s`.", createdBy, info.InputType),
		StartDelay:               delay,
		Priority:                 temporal.Priority{PriorityKey: priority},
	}
}
