package entity

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/shopspring/decimal"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/searchattr"
)

// FanoutState is a large fan-out's bookkeeping: the fan-out runner starts one child run
// of Flow per input, at most MaxParallel at once, and keeps their outputs, errors, cost and
// tokens here. Every PerRun children (or when Temporal suggests it) it waits for the
// children in flight and continues as new with this state, so no history grows with the
// number of items: the parent run sees one child (the runner), the runner's histories stay
// bounded, and each item's steps are in the item's own run.
type FanoutState struct {
	Flow      string `json:"flow"`
	TaskQueue string `json:"task_queue"`
	// IDPrefix is the prefix of the items' workflow IDs: "<run>/<name>"; item i's ID is
	// IDPrefix + "/" + Names[i].
	IDPrefix string            `json:"id_prefix"`
	Names    []string          `json:"names"`
	Inputs   []json.RawMessage `json:"inputs"`
	// ParentMemo is the parent info every item gets (depth, guards, cap, creator); the
	// runner names itself as the items' parent, so their reports come to it.
	ParentMemo map[string]any `json:"parent_memo"`
	// CreatedBy, Category and Version are the items' search attributes.
	CreatedBy   string `json:"created_by,omitempty"`
	Category    string `json:"category,omitempty"`
	Version     string `json:"version,omitempty"`
	MaxParallel int    `json:"max_parallel"`
	// Halt stops the fan-out at the first failure (the items in flight are cancelled).
	Halt   bool `json:"halt,omitempty"`
	PerRun int  `json:"per_run"`

	// Next is the first item not started yet.
	Next int `json:"next"`
	// Outputs and Errors are per item: the output of an item that completed, the error of
	// one that did not ("" for none).
	Outputs []json.RawMessage `json:"outputs"`
	Errors  []string          `json:"errors"`
	// CostUSD and the tokens are what the items reported spending.
	CostUSD      decimal.Decimal `json:"cost_usd"`
	InputTokens  int64           `json:"input_tokens"`
	OutputTokens int64           `json:"output_tokens"`
	Halted       bool            `json:"halted,omitempty"`
}

// FanoutResult is what the runner returns: its final state.
type FanoutResult = FanoutState

// DefaultFanoutPerRun is how many children one run of the runner starts before it
// continues as new: about 5 events each keeps a run's history near 5,000 events.
const DefaultFanoutPerRun = 1000

// itemReport is what the runner reads of an item's report (a flow runs.Child).
type itemReport struct {
	ID      string          `json:"id"`
	CostUSD decimal.Decimal `json:"cost_usd"`
	Tokens  struct {
		Input  int64 `json:"input"`
		Output int64 `json:"output"`
	} `json:"tokens"`
}

// fanoutWorkflow runs a large fan-out's items (see FanoutState).
func fanoutWorkflow(ctx workflow.Context, st FanoutState) (FanoutResult, error) {
	n := len(st.Inputs)
	if len(st.Names) != n {
		return st, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("fan-out: %d names for %d inputs", len(st.Names), n), activities.InvalidStepErrorType, nil)
	}
	if len(st.Outputs) != n {
		st.Outputs = make([]json.RawMessage, n)
		st.Errors = make([]string, n)
	}
	perRun := st.PerRun
	if perRun <= 0 {
		perRun = DefaultFanoutPerRun
	}
	width := max(st.MaxParallel, 1)
	me := workflow.GetInfo(ctx).WorkflowExecution.ID
	reports := workflow.GetSignalChannel(ctx, protocol.SignalChildReport)
	counted := map[string]bool{}
	collect := func() {
		for {
			var r itemReport
			if !reports.ReceiveAsync(&r) {
				return
			}
			if counted[r.ID] {
				continue
			}
			counted[r.ID] = true
			st.CostUSD = st.CostUSD.Add(r.CostUSD)
			st.InputTokens += r.Tokens.Input
			st.OutputTokens += r.Tokens.Output
		}
	}
	cctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	sel := workflow.NewSelector(ctx)
	running, started := 0, 0
	start := func(i int) {
		memo := map[string]any{}
		for k, v := range st.ParentMemo {
			memo[k] = v
		}
		memo["parent_id"], memo["parent_run_id"] = me, ""
		sa := []temporal.SearchAttributeUpdate{searchattr.StatusKey.ValueSet("running")}
		if st.CreatedBy != "" {
			sa = append(sa, searchattr.CreatedByKey.ValueSet(st.CreatedBy))
		}
		if st.Category != "" {
			sa = append(sa, searchattr.CategoryKey.ValueSet(st.Category))
		}
		if st.Version != "" {
			sa = append(sa, searchattr.VersionKey.ValueSet(st.Version))
		}
		id := st.IDPrefix + "/" + st.Names[i]
		opts := workflow.ChildWorkflowOptions{
			WorkflowID:            id,
			TaskQueue:             st.TaskQueue,
			ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
			WaitForCancellation:   true,
			Memo:                  map[string]any{protocol.MemoParent: memo},
			TypedSearchAttributes: temporal.NewSearchAttributes(sa...),
			StaticSummary:         fmt.Sprintf("%s: item %s of %s", st.Flow, st.Names[i], st.IDPrefix),
		}
		fut := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(cctx, opts), st.Flow, st.Inputs[i])
		running++
		started++
		sel.AddFuture(fut, func(f workflow.Future) {
			running--
			var out json.RawMessage
			if err := f.Get(ctx, &out); err != nil {
				st.Errors[i] = errorText(err)
				if st.Halt && !st.Halted {
					st.Halted = true
					cancel()
				}
				return
			}
			st.Outputs[i] = out
		})
	}
	for {
		for running < width && st.Next < n && !st.Halted && started < perRun {
			start(st.Next)
			st.Next++
		}
		if running == 0 {
			break
		}
		sel.Select(ctx)
		collect()
		if workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			perRun = started // start no more in this run
		}
	}
	collect()
	if st.Halted {
		for i := st.Next; i < n; i++ {
			st.Errors[i] = "cancelled"
		}
		st.Next = n
	}
	if st.Next < n {
		// The children of this run are done: go on in a new run with the bookkeeping.
		return FanoutResult{}, workflow.NewContinueAsNewError(ctx, protocol.FanoutWorkflowType, st)
	}
	return st, nil
}

// errorText is the most useful line of a child's failure.
func errorText(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Message()
	}
	var ce *temporal.CanceledError
	if errors.As(err, &ce) {
		return "cancelled"
	}
	return err.Error()
}
