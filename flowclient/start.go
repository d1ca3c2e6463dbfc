package flowclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/entity"
	"github.com/gateflow/gateflow/internal/startplan"
	"go.temporal.io/api/serviceerror"
)

// Start validates the input and the options and starts a run of the flow name. Checks
// happen in this order, each with one clear error, and a refused start starts nothing:
// the workflow name, that a worker serves it (*core.UnknownWorkflowError, core.ErrNoCatalog), the
// input (*core.InputError), the options (*core.InputError: ID and idempotency key, priority, labels,
// worker tags, start time, max cost and budget policy, max attempts), the monthly quotas
// (*budget.QuotaError), a held concurrency key (*RunExistsError), the flow's limit of live runs (flow.MaxRuns) when it
// refuses what overflows (*MaxRunsError), and an ID in use (*RunExistsError).
//
// A flow with flow.MaxRuns and core.OverflowReplace at its limit has its oldest live runs cancelled
// ("replaced by RUN") once the new run has started; a run that could not be cancelled is
// reported by an error returned with the started run.
//
// Under a monthly quota (flow.WorkerOptions.Quotas) the start reserves the run's possible cost,
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
// core.Run.Existing set, instead of starting another.
//
// input is the run's input: a value to encode as JSON, or JSON itself as json.RawMessage
// or []byte. nil means no input (the handler gets its input type's zero value).
func (c *Client) Start(ctx context.Context, name string, input any, opts core.StartOptions) (run *core.Run, err error) {
	return c.start(ctx, name, input, opts, false)
}

// start is Start, or with plan a plan of the run (Plan).
func (c *Client) start(ctx context.Context, name string, input any, opts core.StartOptions, plan bool) (run *core.Run, err error) {
	if err := startplan.ValidateName(name); err != nil {
		return nil, &core.InputError{Workflow: "start", Err: err}
	}
	cat, err := c.Workflows(ctx)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p, err := startplan.New(cat, c.starter(), name, input, opts, plan, time.Now())
	if err != nil {
		return nil, err
	}
	if opts.IdempotencyKey != "" {
		if run, ok := c.existing(ctx, p.ID, name); ok {
			return run, nil
		}
	}
	if !plan {
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
	if opts.ConcurrencyKey != "" && !plan {
		claimed, cerr := c.claimKey(ctx, p, opts.ConcurrencyKey)
		if cerr != nil {
			return nil, cerr
		}
		if claimed {
			// A start refused from here on gives the claim back.
			defer func() {
				if err != nil && run == nil {
					err = errors.Join(err, entity.ReleaseConcurrency(context.WithoutCancel(ctx), c.tc, c.opts.TaskQueue, p.Exclusive, p.ID))
				}
			}()
		}
	}
	var replaced []string // maxruns.go: the flow's MaxRuns at admission
	if info, _ := cat.Lookup(name); !plan {
		if replaced, err = c.admitMaxRuns(ctx, info, p.MaxRunsGroup); err != nil {
			return nil, err
		}
	}
	if !plan {
		paused, err := c.Paused(ctx)
		if err != nil {
			return nil, fmt.Errorf("start %s: %w", name, err)
		}
		if isPaused(paused, name) {
			p.Hold()
		}
	}
	run, err = c.execute(ctx, p, opts)
	if err == nil && !run.Existing {
		run.Held = p.RunOpts.Paused
	}
	if err != nil || run.Existing || len(replaced) == 0 {
		return run, err
	}
	return run, c.replaceRuns(ctx, run, replaced)
}

// claimKey takes the exclusive concurrency key of the planned run before it starts, in one
// Update of the key's semaphore, so that of concurrent starts with one key only one
// starts; the others are refused with a *RunExistsError naming the holder. It reports
// whether the claim is new (given back if the start then fails). Workers too old to claim
// are answered with the check of the holders that they support.
func (c *Client) claimKey(ctx context.Context, p *startplan.Plan, key string) (bool, error) {
	res, err := entity.ClaimConcurrency(ctx, c.tc, c.opts.TaskQueue, p.Exclusive, p.ID)
	if errors.Is(err, entity.ErrClaimUnsupported) {
		// The semaphore's state as it is now (its Query), not its Memo, which lags.
		var live []string
		if live, err = entity.ConcurrencyRuns(ctx, c.tc, c.opts.TaskQueue, p.Exclusive); err == nil && len(live) > 0 {
			res.Holder = live[0]
		}
	}
	if err != nil {
		return false, fmt.Errorf("start %s: %w", p.Name, err)
	}
	if res.Holder != "" {
		return false, &RunExistsError{ID: res.Holder, Reason: "concurrency key " + key + " is held by run " + res.Holder}
	}
	return res.New, nil
}

// execute starts the planned run. A start whose ID a live run has is refused, unless it
// carries an idempotency key, which returns the existing run.
func (c *Client) execute(ctx context.Context, p *startplan.Plan, opts core.StartOptions) (*core.Run, error) {
	we, err := c.tc.ExecuteWorkflow(ctx, p.Options(), p.Name, p.Input)
	if err != nil {
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		if errors.As(err, &started) {
			if opts.IdempotencyKey != "" {
				if run, ok := c.existing(ctx, p.ID, p.Name); ok {
					return run, nil
				}
			}
			return nil, &RunExistsError{ID: p.ID, RunID: started.RunId}
		}
		if tooBig(err) {
			return nil, &core.InputError{Workflow: p.Name, Err: fmt.Errorf("the start is too big for the Temporal server (%s): keep big inputs in the blob store (flowctl --blob-url, flowclient.WithPayloadStore) or in files the steps read", sizeMessage(err))}
		}
		return nil, fmt.Errorf("start %s: %w", p.Name, err)
	}
	return &core.Run{ID: we.GetID(), RunID: we.GetRunID(), Workflow: p.Name}, nil
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

// existing returns the run with ID id, if there is one.
func (c *Client) existing(ctx context.Context, id, name string) (*core.Run, bool) {
	resp, err := c.tc.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return nil, false
	}
	e := resp.GetWorkflowExecutionInfo().GetExecution()
	return &core.Run{ID: e.GetWorkflowId(), RunID: e.GetRunId(), Workflow: name, Existing: true}, true
}

// FlowRun is a started run of a flow whose output is O (see StartFlow).
type FlowRun[O any] struct {
	*core.Run
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

// TypedFlow is a flow known with its input type I and output type O: a *flow.Flow[I, O]
// is one (the client does not link package flow).
type TypedFlow[I, O any] interface {
	Name() string
	Err() error
	Types() (I, O)
}

// StartFlow starts a run of f with a typed input, as Client.Start starts one by name (the
// same checks, in the same order), and returns it with a typed Result:
//
//	run, err := flowclient.StartFlow(ctx, c, examples.Hello, examples.HelloInput{Name: "Ada"}, core.StartOptions{})
//	out, err := run.Result(ctx) // examples.HelloOutput
func StartFlow[I, O any](ctx context.Context, c *Client, f TypedFlow[I, O], in I, opts core.StartOptions) (*FlowRun[O], error) {
	if err := f.Err(); err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	run, err := c.Start(ctx, f.Name(), in, opts)
	if err != nil {
		return nil, err
	}
	return &FlowRun[O]{Run: run, c: c}, nil
}
