package flow

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gateflow/gateflow/runs"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

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
	// Guards tighten the flow's guards for this run: each limit set (non-zero) applies
	// where it is stricter than the one in force (the flow's, the worker's, a parent's);
	// a start cannot loosen a limit. -1 (no limit) is refused here. `flowctl start --file`
	// puts a definition's limits here, since the generic definition flow has none.
	Guards *Guards
}

// Run identifies a started run.
type Run struct {
	ID       string `json:"id"`
	RunID    string `json:"run_id"`
	Workflow string `json:"workflow"`
	// Existing is set when a start with an idempotency key found the key's run.
	Existing bool `json:"existing,omitempty"`
	// Held is set when the flow's workflow type is paused: the run waits in pending until
	// the type is resumed (Client.Resume, flowctl resume).
	Held bool `json:"held,omitempty"`
}

// Start validates the input and the options and starts a run of the flow name. Checks
// happen in this order, each with one clear error, and a refused start starts nothing:
// the workflow name, that a worker serves it (*UnknownWorkflowError, ErrNoCatalog), the
// input (*InputError), the options (*InputError: ID and idempotency key, priority, labels,
// worker tags, start time, max cost and budget policy, max attempts), the monthly quotas
// (*budget.QuotaError), a held concurrency key (*RunExistsError), the flow's MaxRuns when it
// refuses what overflows (*MaxRunsError), and an ID in use (*RunExistsError).
//
// A flow with MaxRuns and OverflowReplace at its limit has its oldest live runs cancelled
// ("replaced by RUN") once the new run has started; a run that could not be cancelled is
// reported by an error returned with the started run.
//
// Under a monthly quota (WorkerOptions.Quotas) the start reserves the run's possible cost,
// its cap (the start's MaxCostUSD, else the flow's, else the worker's default), in the
// month's ledger of each scope with a quota, overall and the workflow's, atomically per
// ledger: a run whose cap does not fit (spent + reserved + cap > quota) is refused with a
// *budget.QuotaError giving both figures, so concurrent starts cannot take the month over.
// A run without a cap is admitted while spent + reserved is below the quota and reserves
// nothing. The run's charges draw on its reservation and the run releases what is left
// when it ends, however it ends; a reservation a run never releases (a terminated run) is
// dropped after budget.DefaultReservationTTL. A start refused after its reservation (an ID
// in use, a held concurrency key) releases it.
//
// With an IdempotencyKey a second start with the same key returns the existing run, with
// Run.Existing set, instead of starting another.
//
// input is the run's input: a value to encode as JSON, or JSON itself as json.RawMessage
// or []byte. nil means no input (the handler gets its input type's zero value).
func (c *Client) Start(ctx context.Context, name string, input any, opts StartOptions) (run *Run, err error) {
	if err := validateName(name); err != nil {
		return nil, &InputError{Workflow: "start", Err: err}
	}
	cat, err := c.Workflows(ctx)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p, err := planStart(cat, c.opts, name, input, opts, time.Now())
	if err != nil {
		return nil, err
	}
	if opts.IdempotencyKey != "" {
		if run, ok := c.existing(ctx, p.id, name); ok {
			return run, nil
		}
	}
	if !opts.plan {
		hold, rerr := c.reserveQuotas(ctx, cat, p)
		if rerr != nil {
			return nil, rerr
		}
		// err is the named result: a start refused from here on gives the reservation back
		// (a started run whose replaced runs could not all be cancelled keeps it).
		defer func() {
			if (err != nil && run == nil) || (run != nil && run.Existing) {
				err = errors.Join(err, hold.release(ctx, c))
			}
		}()
	}
	if opts.ConcurrencyKey != "" {
		holder, err := entity.ConcurrencyHolder(ctx, c.tc, c.opts.TaskQueue, p.exclusive)
		if err != nil {
			return nil, fmt.Errorf("start %s: %w", name, err)
		}
		if holder != "" {
			return nil, &RunExistsError{ID: holder, Reason: "concurrency key " + opts.ConcurrencyKey + " is held by run " + holder}
		}
	}
	var replaced []string // maxruns.go: the flow's MaxRuns at admission
	if info, _ := cat.Lookup(name); !opts.plan {
		if replaced, err = c.admitMaxRuns(ctx, info, p.maxRunsGroup); err != nil {
			return nil, err
		}
	}
	if !opts.plan {
		paused, err := c.Paused(ctx)
		if err != nil {
			return nil, fmt.Errorf("start %s: %w", name, err)
		}
		if isPaused(paused, name) {
			p.hold()
		}
	}
	run, err = c.execute(ctx, p, opts)
	if err == nil && !run.Existing {
		run.Held = p.runOpts.Paused
	}
	if err != nil || run.Existing || len(replaced) == 0 {
		return run, err
	}
	return run, c.replaceRuns(ctx, run, replaced)
}

// startPlan is everything a start decided before it starts the run: the run's ID, input,
// options for the run wrapper and for Temporal. planStart makes it without talking to the
// server, so it is table-tested.
type startPlan struct {
	name    string
	id      string
	input   json.RawMessage
	now     time.Time
	runOpts protocol.RunOptions
	// exclusive is the semaphore group of the start's concurrency key, if it has one.
	exclusive string
	// maxRunsGroup is the group of the flow's MaxRuns (maxruns_key.go), if it has one.
	maxRunsGroup string
	workflow     client.StartWorkflowOptions
	status       runs.Status
	sa           []temporal.SearchAttributeUpdate
}

// planStart checks name's input and opts against the catalog and plans the start: the
// pure part of Client.Start, in its documented order.
func planStart(cat *Catalog, copts ClientOptions, name string, input any, opts StartOptions, now time.Time) (*startPlan, error) {
	info, ok := cat.Lookup(name)
	if !ok {
		return nil, &UnknownWorkflowError{Name: name, TaskQueue: copts.TaskQueue, Known: cat.Names()}
	}
	if info.Removed != "" {
		return nil, &UnknownWorkflowError{Name: name, TaskQueue: copts.TaskQueue, Removed: info.Removed}
	}
	raw, err := encodeInput(input)
	if err != nil {
		return nil, &InputError{Workflow: name, Err: err}
	}
	if err := checkInput(info.InputSchema, raw); err != nil {
		return nil, &InputError{Workflow: name, Err: err}
	}
	if err := validateStart(opts, now); err != nil {
		return nil, &InputError{Workflow: name, Err: err}
	}
	opts, err = withFlowDefaults(info, opts)
	if err != nil {
		return nil, &InputError{Workflow: name, Err: err}
	}
	if opts.BudgetPolicy != "" {
		if _, err := budget.ParsePolicy(string(opts.BudgetPolicy)); err != nil {
			return nil, &InputError{Workflow: name, Err: err}
		}
	}
	if err := validateRunID(opts.ID); err != nil {
		return nil, &InputError{Workflow: name, Err: err}
	}
	p := &startPlan{name: name, id: opts.ID, input: raw, now: now}
	if opts.IdempotencyKey != "" {
		p.id = idempotentRunID(name, opts.IdempotencyKey)
	}
	if p.id == "" {
		p.id = newRunID(name)
	}
	p.runOpts = protocol.RunOptions{BudgetPolicy: opts.BudgetPolicy, BudgetPause: opts.BudgetPause, QuotaChecked: true,
		MaxAttempts: opts.MaxAttempts, Labels: opts.Labels, Plan: opts.plan}
	if g := opts.Guards; g != nil && *g != (Guards{}) {
		p.runOpts.Guards = &protocol.GuardLimits{MaxChildDepth: g.MaxChildDepth, MaxFanOut: g.MaxFanOut,
			MaxTokens: g.MaxTokens, MaxWallTime: g.MaxWallTime, MaxSteps: g.MaxSteps}
	}
	if opts.ConcurrencyKey != "" || len(opts.ConcurrencyLimits) > 0 {
		p.runOpts.Concurrency = map[string]int{}
		for g, n := range opts.ConcurrencyLimits {
			p.runOpts.Concurrency[g] = n
		}
		if opts.ConcurrencyKey != "" {
			p.exclusive = "key:" + opts.ConcurrencyKey
			p.runOpts.Concurrency[p.exclusive] = 1
		}
	}
	if p.maxRunsGroup, err = startGroup(info, raw); err != nil {
		return nil, &InputError{Workflow: name, Err: err}
	}
	if info.MaxRunsKey != "" && p.maxRunsGroup != "" && !opts.plan {
		// The run acquires its key's group as the start gives it (maxruns_key.go).
		if p.runOpts.Concurrency == nil {
			p.runOpts.Concurrency = map[string]int{}
		}
		p.runOpts.Concurrency[p.maxRunsGroup] = info.MaxRuns
	}
	if opts.MaxCostUSD != nil {
		p.runOpts.MaxCostUSD = opts.MaxCostUSD.String()
	}
	createdBy := opts.CreatedBy
	if createdBy == "" {
		createdBy = copts.Identity
	}
	delay := opts.Delay
	if !opts.StartAt.IsZero() {
		delay = max(opts.StartAt.Sub(now), 0)
	}
	p.status = runs.StatusRunning
	if delay > 0 {
		p.status = runs.StatusPending
	}
	priority := opts.Priority // with the flow's default, clamped to 1..5 (withFlowDefaults)
	p.sa = []temporal.SearchAttributeUpdate{
		searchattr.CreatedByKey.ValueSet(createdBy),
		searchattr.PriorityKey.ValueSet(int64(priority)),
	}
	if info.Category != "" {
		p.sa = append(p.sa, searchattr.CategoryKey.ValueSet(info.Category))
	}
	if info.Version != "" {
		p.sa = append(p.sa, searchattr.VersionKey.ValueSet(info.Version))
	}
	if len(opts.Labels) > 0 {
		p.sa = append(p.sa, searchattr.LabelsKey.ValueSet(labelList(opts.Labels)))
	}
	capStr := p.runOpts.MaxCostUSD
	if capStr == "" {
		capStr = info.MaxCostUSD
	}
	if d, err := budget.ParseUSD(capStr); capStr != "" && err == nil {
		p.sa = append(p.sa, searchattr.MaxCostKey.ValueSet(budget.Float64(d)))
	}
	summary := name
	if info.Description != "" {
		summary += ": " + info.Description
	}
	if opts.plan {
		summary = "plan of " + summary
	}
	p.workflow = client.StartWorkflowOptions{
		ID:                       p.id,
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

// hold marks the run as held in pending because its workflow type is paused.
func (p *startPlan) hold() {
	p.runOpts.Paused = true
	p.status = runs.StatusPending
}

// options are the Temporal start options of the plan, with its status and memo.
func (p *startPlan) options() client.StartWorkflowOptions {
	o := p.workflow
	sa := p.sa
	if !p.runOpts.Plan {
		sa = append(append([]temporal.SearchAttributeUpdate(nil), sa...), searchattr.StatusKey.ValueSet(string(p.status)))
	}
	o.TypedSearchAttributes = temporal.NewSearchAttributes(sa...)
	o.Memo = map[string]any{protocol.MemoOptions: p.runOpts}
	// Without it the SDK answers a start whose ID a live run holds with that run, as if it
	// had started (whatever its flow): the start is refused instead (RunExistsError).
	o.WorkflowExecutionErrorWhenAlreadyStarted = true
	return o
}

// execute starts the planned run. A start whose ID a live run has is refused, unless it
// carries an idempotency key, which returns the existing run.
func (c *Client) execute(ctx context.Context, p *startPlan, opts StartOptions) (*Run, error) {
	we, err := c.tc.ExecuteWorkflow(ctx, p.options(), p.name, p.input)
	if err != nil {
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		if errors.As(err, &started) {
			if opts.IdempotencyKey != "" {
				if run, ok := c.existing(ctx, p.id, p.name); ok {
					return run, nil
				}
			}
			return nil, &RunExistsError{ID: p.id, RunID: started.RunId}
		}
		if tooBig(err) {
			return nil, &InputError{Workflow: p.name, Err: fmt.Errorf("the start is too big for the Temporal server (%s): keep big inputs in the blob store (flowctl --blob-url, flow.WithPayloadStore) or in files the steps read", sizeMessage(err))}
		}
		return nil, fmt.Errorf("start %s: %w", p.name, err)
	}
	return &Run{ID: we.GetID(), RunID: we.GetRunID(), Workflow: p.name}, nil
}

// tooBig reports the server's (or the transport's) refusal of a request over its size
// limits.
func tooBig(err error) bool {
	var inv *serviceerror.InvalidArgument
	var exh *serviceerror.ResourceExhausted
	switch {
	case errors.As(err, &inv):
		return strings.Contains(inv.Message, "size exceeds limit")
	case errors.As(err, &exh):
		return strings.Contains(exh.Message, "larger than max") || strings.Contains(exh.Message, "exceeds")
	case status.Code(err) == codes.ResourceExhausted:
		m := status.Convert(err).Message()
		return strings.Contains(m, "larger than max") || strings.Contains(m, "exceeds")
	}
	return false
}

// sizeMessage is the server's words for a size refusal.
func sizeMessage(err error) string {
	var inv *serviceerror.InvalidArgument
	var exh *serviceerror.ResourceExhausted
	switch {
	case errors.As(err, &inv):
		return inv.Message
	case errors.As(err, &exh):
		return exh.Message
	}
	return status.Convert(err).Message()
}

// maxRunIDLen bounds a run ID, as Temporal's default limit on workflow IDs does.
const maxRunIDLen = 1000

// validateRunID checks a run ID a caller chose ("" lets gateflow choose): the Temporal
// client sends it in a request header, so it must be printable ASCII.
func validateRunID(id string) error {
	if len(id) > maxRunIDLen {
		return fmt.Errorf("run ID is %d bytes; at most %d", len(id), maxRunIDLen)
	}
	for _, r := range id {
		if r < 0x20 || r > 0x7e {
			return fmt.Errorf("run ID %q: use printable ASCII characters only (letters, digits, punctuation, spaces)", id)
		}
	}
	if id != "" && strings.TrimSpace(id) == "" {
		return fmt.Errorf("run ID %q is blank", id)
	}
	return nil
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

// FlowRun is a started run of a flow whose output is O (see StartFlow).
type FlowRun[O any] struct {
	*Run
	c *Client
}

// Result waits for the run to end and returns its output. A run that did not complete
// returns its failure (a *temporal.WorkflowExecutionError: errors.As finds the
// application error inside, whose type says budget exceeded, rejected, ...).
func (r *FlowRun[O]) Result(ctx context.Context) (O, error) {
	var out O
	if err := r.c.tc.GetWorkflow(ctx, r.ID, r.RunID).Get(ctx, &out); err != nil {
		return out, fmt.Errorf("run %s: %w", r.ID, err)
	}
	return out, nil
}

// StartFlow starts a run of f with a typed input, as Client.Start starts one by name (the
// same checks, in the same order), and returns it with a typed Result:
//
//	run, err := flow.StartFlow(ctx, c, examples.Hello, examples.HelloInput{Name: "Ada"}, flow.StartOptions{})
//	out, err := run.Result(ctx) // examples.HelloOutput
func StartFlow[I, O any](ctx context.Context, c *Client, f *Flow[I, O], in I, opts StartOptions) (*FlowRun[O], error) {
	if err := f.Err(); err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	run, err := c.Start(ctx, f.Name(), in, opts)
	if err != nil {
		return nil, err
	}
	return &FlowRun[O]{Run: run, c: c}, nil
}
