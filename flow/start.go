package flow

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gateflow/gateflow/runs"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/display"
	"github.com/gateflow/gateflow/internal/flowlink"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/searchattr"
	"github.com/gateflow/gateflow/signals"
	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// StartOptions adjust one start.
type StartOptions struct {
	// ID is the run's ID (its Temporal workflow ID). Default: the flow's name and a random
	// suffix. Starting a second run with the ID of a live run is refused.
	ID string
	// CreatedBy records who started the run (FlowCreatedBy). Default: the client's
	// identity.
	CreatedBy string
	// MaxCostUSD caps what the run (and its children) may spend; it wins over the flow's
	// and the worker's default cap.
	MaxCostUSD *decimal.Decimal
	// IdempotencyKey makes the start idempotent: a second start with the same key (for the
	// same workflow) returns the first run instead of starting another.
	IdempotencyKey string
	// Labels are k=v pairs kept on the run (FlowLabels: filter with
	// `FlowLabels = 'team=web'`).
	Labels map[string]string
	// Priority is Temporal's priority key: 1 (highest) to 5 (lowest); 0 means 3.
	Priority int
	// StartAt or Delay hold the run in pending until then (Temporal's start delay).
	StartAt time.Time
	Delay   time.Duration
	// MaxAttempts overrides the flow's number of run attempts.
	MaxAttempts int
	// WorkerTags send the run to workers that have all these tags (WorkerOptions.Tags).
	WorkerTags []string
	// ConcurrencyKey is exclusive: a start is refused while another live run holds the
	// same key. The start claims the key before the run starts, in one Update of the key's
	// semaphore, so of concurrent starts with one key exactly one starts (a claim whose run
	// never starts is dropped within a minute). ConcurrencyLimits queue runs in pending until a permit of each group is
	// free (group → most runs at once); permits come back when a run ends, however it ends.
	ConcurrencyKey    string
	ConcurrencyLimits map[string]int
	// plan runs the handler with every step stubbed (see flowclient.Client.Plan).
	plan bool
	// BudgetPolicy is what the run does when its cap would be exceeded: budget.Stop (the
	// default: the run ends budget_exceeded) or budget.Pause (it waits, up to BudgetPause,
	// for `flowctl budget raise`).
	BudgetPolicy budget.Policy
	BudgetPause  time.Duration
	// Guards tighten the flow's guards for this run: each limit set (non-zero) applies
	// where it is stricter than the one in force (the flow's, the worker's, a parent's);
	// a start cannot loosen a limit. -1 (no limit) is refused here. `flowctl start --file`
	// puts a definition's limits here, since the generic definition flow has none.
	Guards *Guards
}

// planStart checks name's input and opts against the catalog and plans the start: the
// pure part of flowclient.Client.Start, in its documented order.
func planStart(cat *catalog, copts clientOptions, name string, input any, opts StartOptions, now time.Time) (*startPlan, error) {
	info, ok := cat.Lookup(name)
	if !ok {
		return nil, &flowlink.UnknownWorkflowError{Name: name, TaskQueue: copts.TaskQueue, Known: cat.Names()}
	}
	if info.Removed != "" {
		return nil, &flowlink.UnknownWorkflowError{Name: name, TaskQueue: copts.TaskQueue, Removed: info.Removed}
	}
	raw, err := encodeInput(input)
	if err != nil {
		return nil, &flowlink.InputError{Workflow: name, Err: err}
	}
	if err := checkInput(info.InputSchema, raw); err != nil {
		return nil, &flowlink.InputError{Workflow: name, Err: err}
	}
	if err := validateStart(opts, now); err != nil {
		return nil, &flowlink.InputError{Workflow: name, Err: err}
	}
	opts, err = withFlowDefaults(info, opts)
	if err != nil {
		return nil, &flowlink.InputError{Workflow: name, Err: err}
	}
	if opts.BudgetPolicy != "" {
		if _, err := budget.ParsePolicy(string(opts.BudgetPolicy)); err != nil {
			return nil, &flowlink.InputError{Workflow: name, Err: err}
		}
	}
	if err := validateRunID(opts.ID); err != nil {
		return nil, &flowlink.InputError{Workflow: name, Err: err}
	}
	p := &startPlan{Name: name, ID: opts.ID, Input: raw, Now: now}
	if opts.IdempotencyKey != "" {
		p.ID = idempotentRunID(name, opts.IdempotencyKey)
	}
	if p.ID == "" {
		p.ID = newRunID(name)
	}
	p.RunOpts = protocol.RunOptions{BudgetPolicy: opts.BudgetPolicy, BudgetPause: opts.BudgetPause, QuotaChecked: true,
		MaxAttempts: opts.MaxAttempts, Labels: opts.Labels, Plan: opts.plan}
	if g := opts.Guards; g != nil && *g != (Guards{}) {
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
	if p.MaxRunsGroup, err = startGroup(info, raw); err != nil {
		return nil, &flowlink.InputError{Workflow: name, Err: err}
	}
	if info.MaxRunsKey != "" && p.MaxRunsGroup != "" && !opts.plan {
		// The run acquires its key's group as the start gives it (maxruns_key.go).
		if p.RunOpts.Concurrency == nil {
			p.RunOpts.Concurrency = map[string]int{}
		}
		p.RunOpts.Concurrency[p.MaxRunsGroup] = info.MaxRuns
	}
	if opts.MaxCostUSD != nil {
		p.RunOpts.MaxCostUSD = opts.MaxCostUSD.String()
	}
	createdBy := opts.CreatedBy
	if createdBy == "" {
		createdBy = copts.Identity
	}
	delay := opts.Delay
	if !opts.StartAt.IsZero() {
		delay = max(opts.StartAt.Sub(now), 0)
	}
	p.Status = runs.StatusRunning
	if delay > 0 {
		p.Status = runs.StatusPending
	}
	priority := opts.Priority // with the flow's default, clamped to 1..5 (withFlowDefaults)
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
		p.SA = append(p.SA, searchattr.LabelsKey.ValueSet(labelList(opts.Labels)))
	}
	capStr := p.RunOpts.MaxCostUSD
	if capStr == "" {
		capStr = info.MaxCostUSD
	}
	if d, err := budget.ParseUSD(capStr); capStr != "" && err == nil {
		p.SA = append(p.SA, searchattr.MaxCostKey.ValueSet(budget.Float64(d)))
	}
	summary := name
	if info.Description != "" {
		summary += ": " + info.Description
	}
	if opts.plan {
		summary = "plan of " + summary
	}
	p.Workflow = client.StartWorkflowOptions{
		ID:                       p.ID,
		TaskQueue:                protocol.TaggedQueue(copts.TaskQueue, opts.WorkerTags),
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowIDReusePolicy:    reusePolicy(opts),
		StaticSummary:            display.Preview(summary, 200),
		StaticDetails:            fmt.Sprintf("Started by **%s** with gateflow.\n\nInput type `%s`.", createdBy, info.InputType),
		StartDelay:               delay,
		Priority:                 temporal.Priority{PriorityKey: priority},
	}
	return p, nil
}

// withFlowDefaults merges the flow's start defaults (StartDefaults) into the start's
// options: labels are the union, the start's value winning for the same key; worker tags
// the union, sorted; the priority the start's if it gives one, else the flow's, else
// DefaultPriority, clamped to 1..5. A merge with too many labels or tags is refused.
func withFlowDefaults(info WorkflowInfo, opts StartOptions) (StartOptions, error) {
	if len(info.Labels) > 0 {
		labels := maps.Clone(info.Labels)
		maps.Copy(labels, opts.Labels)
		opts.Labels = labels
		if len(labels) > MaxLabels {
			return opts, fmt.Errorf("%d labels with the flow's defaults: at most %d", len(labels), MaxLabels)
		}
	}
	if len(info.WorkerTags) > 0 {
		tags := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(opts.WorkerTags), info.WorkerTags...))))
		opts.WorkerTags = tags
		if len(tags) > protocol.MaxWorkerTags {
			return opts, fmt.Errorf("%d worker tags with the flow's (%s): a worker has at most %d, so no worker could take the run",
				len(tags), strings.Join(tags, ", "), protocol.MaxWorkerTags)
		}
	}
	if opts.Priority == 0 {
		opts.Priority = info.Priority
	}
	if opts.Priority == 0 {
		opts.Priority = DefaultPriority
	}
	opts.Priority = min(max(opts.Priority, MinPriority), MaxPriority)
	return opts, nil
}

// maxRunIDLen bounds a run ID, as Temporal's default limit on workflow IDs does.
const maxRunIDLen = protocol.MaxRunIDLen

// validateRunID checks a run ID a caller chose ("" lets gateflow choose) with
// protocol.CheckRunID: the Temporal client sends it in a request header, so it must be
// printable ASCII.
func validateRunID(id string) error {
	if id == "" {
		return nil
	}
	return protocol.CheckRunID(id)
}

// reusePolicy keeps one run per idempotency key, even after it ended.
func reusePolicy(o StartOptions) enumspb.WorkflowIdReusePolicy {
	if o.IdempotencyKey != "" {
		return enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
	}
	return enumspb.WORKFLOW_ID_REUSE_POLICY_UNSPECIFIED
}

func encodeInput(input any) (json.RawMessage, error) {
	switch v := input.(type) {
	case nil:
		return json.RawMessage("null"), nil
	case json.RawMessage:
		return validJSON(v)
	case []byte:
		return validJSON(v)
	}
	b, err := json.Marshal(input)
	if err != nil {
		return nil, fmt.Errorf("encode input: %w", err)
	}
	return b, nil
}

func validJSON(b []byte) (json.RawMessage, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return json.RawMessage("null"), nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("input is not valid JSON: %w", err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, fmt.Errorf("input is not valid JSON: %w", err)
	}
	return buf.Bytes(), nil
}

// checkInput checks raw against a flow's published input schema (see typeschema.For);
// an empty schema accepts anything.
func checkInput(schema, raw json.RawMessage) error {
	s, err := signals.CompileSchema(schema)
	if err != nil {
		return fmt.Errorf("the published input schema does not compile: %w", err)
	}
	return s.Validate(raw)
}

func newRunID(name string) string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return strings.ReplaceAll(name, "/", "-") + "-" + hex.EncodeToString(b[:])
}

// startPlan is a planned start (flowlink.Plan): planStart makes it without talking to the
// server, so it is table-tested.
type startPlan = flowlink.Plan

// clientOptions are what planStart takes of a client's options: its task queue and the
// identity a run is created by when the start does not say.
type clientOptions struct {
	TaskQueue string
	Identity  string
}
