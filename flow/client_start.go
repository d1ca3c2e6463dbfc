package flow

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/display"
	"github.com/gateflow/gateflow/internal/entity"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/searchattr"
	"github.com/gateflow/gateflow/signals"
	"github.com/shopspring/decimal"
	"go.temporal.io/api/serviceerror"
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
	// same key. ConcurrencyLimits queue runs in pending until a permit of each group is
	// free (group → most runs at once); permits come back when a run ends, however it ends.
	ConcurrencyKey    string
	ConcurrencyLimits map[string]int
	// plan runs the handler with every step stubbed (see Client.Plan).
	plan bool
	// BudgetPolicy is what the run does when its cap would be exceeded: budget.Stop (the
	// default: the run ends budget_exceeded) or budget.Pause (it waits, up to BudgetPause,
	// for `flowctl budget raise`).
	BudgetPolicy budget.Policy
	BudgetPause  time.Duration
}

// Run identifies a started run.
type Run struct {
	ID       string `json:"id"`
	RunID    string `json:"run_id"`
	Workflow string `json:"workflow"`
	// Existing is set when a start with an idempotency key found the key's run.
	Existing bool `json:"existing,omitempty"`
}

// Start validates the input and the options and starts a run of the flow name. Checks
// happen in this order, each with one clear error, and a refused start starts nothing:
// the workflow name, that a worker serves it (*UnknownWorkflowError, ErrNoCatalog), the
// input (*InputError), the options (*InputError: ID and idempotency key, priority, labels,
// worker tags, start time, max cost and budget policy, max attempts), the monthly quotas
// (*budget.QuotaError), and an ID in use (*RunExistsError).
//
// With an IdempotencyKey a second start with the same key returns the existing run, with
// Run.Existing set, instead of starting another.
//
// input is the run's input: a value to encode as JSON, or JSON itself as json.RawMessage
// or []byte. nil means no input (the handler gets its input type's zero value).
func (c *Client) Start(ctx context.Context, name string, input any, opts StartOptions) (*Run, error) {
	if err := validateName(name); err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	cat, err := c.Workflows(ctx)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	info, ok := cat.Lookup(name)
	if !ok {
		return nil, &UnknownWorkflowError{Name: name, TaskQueue: c.opts.TaskQueue, Known: cat.Names()}
	}
	raw, err := encodeInput(input)
	if err != nil {
		return nil, &InputError{Workflow: name, Err: err}
	}
	if err := checkInput(info.InputSchema, raw); err != nil {
		return nil, &InputError{Workflow: name, Err: err}
	}
	now := time.Now()
	if err := validateStart(opts, now); err != nil {
		return nil, &InputError{Workflow: name, Err: err}
	}
	if opts.BudgetPolicy != "" {
		if _, err := budget.ParsePolicy(string(opts.BudgetPolicy)); err != nil {
			return nil, &InputError{Workflow: name, Err: err}
		}
	}
	id := opts.ID
	if opts.IdempotencyKey != "" {
		id = idempotentRunID(name, opts.IdempotencyKey)
		if run, ok := c.existing(ctx, id, name); ok {
			return run, nil
		}
	}
	if !opts.plan {
		if err := entity.CheckQuotas(ctx, c.tc, c.opts.TaskQueue, cat.quotas().limitFor, name, now); err != nil {
			return nil, err
		}
	}
	if id == "" {
		id = newRunID(name)
	}
	runOpts := protocol.RunOptions{BudgetPolicy: opts.BudgetPolicy, BudgetPause: opts.BudgetPause, QuotaChecked: true,
		MaxAttempts: opts.MaxAttempts, Labels: opts.Labels, Plan: opts.plan}
	if opts.ConcurrencyKey != "" || len(opts.ConcurrencyLimits) > 0 {
		runOpts.Concurrency = map[string]int{}
		for g, n := range opts.ConcurrencyLimits {
			runOpts.Concurrency[g] = n
		}
		if opts.ConcurrencyKey != "" {
			holder, err := entity.ConcurrencyHolder(ctx, c.tc, c.opts.TaskQueue, "key:"+opts.ConcurrencyKey)
			if err != nil {
				return nil, fmt.Errorf("start %s: %w", name, err)
			}
			if holder != "" {
				return nil, &RunExistsError{ID: holder, Reason: "concurrency key " + opts.ConcurrencyKey + " is held by run " + holder}
			}
			runOpts.Concurrency["key:"+opts.ConcurrencyKey] = 1
		}
	}
	if !opts.plan {
		paused, err := c.Paused(ctx)
		if err != nil {
			return nil, fmt.Errorf("start %s: %w", name, err)
		}
		runOpts.Paused = isPaused(paused, name)
	}
	if opts.MaxCostUSD != nil {
		runOpts.MaxCostUSD = opts.MaxCostUSD.String()
	}
	createdBy := opts.CreatedBy
	if createdBy == "" {
		createdBy = c.opts.Identity
	}
	delay := opts.Delay
	if !opts.StartAt.IsZero() {
		delay = max(opts.StartAt.Sub(now), 0)
	}
	status := StatusRunning
	if delay > 0 || runOpts.Paused {
		status = StatusPending
	}
	priority := opts.Priority
	if priority == 0 {
		priority = DefaultPriority
	}
	sa := []temporal.SearchAttributeUpdate{
		searchattr.CreatedByKey.ValueSet(createdBy),
		searchattr.PriorityKey.ValueSet(int64(priority)),
	}
	if !opts.plan {
		sa = append(sa, searchattr.StatusKey.ValueSet(string(status)))
	}
	if info.Category != "" {
		sa = append(sa, searchattr.CategoryKey.ValueSet(info.Category))
	}
	if info.Version != "" {
		sa = append(sa, searchattr.VersionKey.ValueSet(info.Version))
	}
	if len(opts.Labels) > 0 {
		sa = append(sa, searchattr.LabelsKey.ValueSet(labelList(opts.Labels)))
	}
	capStr := runOpts.MaxCostUSD
	if capStr == "" {
		capStr = info.MaxCostUSD
	}
	if d, err := budget.ParseUSD(capStr); capStr != "" && err == nil {
		sa = append(sa, searchattr.MaxCostKey.ValueSet(budget.Float64(d)))
	}
	summary := name
	if info.Description != "" {
		summary += ": " + info.Description
	}
	if opts.plan {
		summary = "plan of " + summary
	}
	we, err := c.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       id,
		TaskQueue:                protocol.TaggedQueue(c.opts.TaskQueue, opts.WorkerTags),
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowIDReusePolicy:    reusePolicy(opts),
		TypedSearchAttributes:    temporal.NewSearchAttributes(sa...),
		StaticSummary:            display.Preview(summary, 200),
		StaticDetails:            fmt.Sprintf("Started by **%s** with gateflow.\n\nInput type `%s`.", createdBy, info.InputType),
		Memo:                     map[string]any{protocol.MemoOptions: runOpts},
		StartDelay:               delay,
		Priority:                 temporal.Priority{PriorityKey: priority},
	}, name, raw)
	if err != nil {
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		if errors.As(err, &started) {
			if opts.IdempotencyKey != "" {
				if run, ok := c.existing(ctx, id, name); ok {
					return run, nil
				}
			}
			return nil, &RunExistsError{ID: id, RunID: started.RunId}
		}
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	return &Run{ID: we.GetID(), RunID: we.GetRunID(), Workflow: name}, nil
}

// reusePolicy keeps one run per idempotency key, even after it ended.
func reusePolicy(o StartOptions) enumspb.WorkflowIdReusePolicy {
	if o.IdempotencyKey != "" {
		return enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
	}
	return enumspb.WORKFLOW_ID_REUSE_POLICY_UNSPECIFIED
}

// existing returns the run with ID id, if there is one.
func (c *Client) existing(ctx context.Context, id, name string) (*Run, bool) {
	resp, err := c.tc.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return nil, false
	}
	e := resp.GetWorkflowExecutionInfo().GetExecution()
	return &Run{ID: e.GetWorkflowId(), RunID: e.GetRunId(), Workflow: name, Existing: true}, true
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
