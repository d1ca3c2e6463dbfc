package flowclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gateflow/gateflow/runs"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/gateflow/gateflow/internal/history"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/searchattr"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
)

// queryTimeout bounds the state query of a running run (a run whose worker is down cannot
// answer).
const queryTimeout = 5 * time.Second

// Describe returns a run's status, steps and, once it ended, its result or error (and the
// output a run that did not complete returned with its error, in Output).
func (c *Client) Describe(ctx context.Context, id string) (*runs.Description, error) {
	if strings.TrimSpace(id) == "" {
		return nil, errors.New("describe: run ID is empty")
	}
	resp, err := c.tc.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return nil, runError("describe", id, err)
	}
	info := resp.GetWorkflowExecutionInfo()
	d := &runs.Description{
		ID:             info.GetExecution().GetWorkflowId(),
		RunID:          info.GetExecution().GetRunId(),
		Workflow:       info.GetType().GetName(),
		TemporalStatus: temporalStatusName(info.GetStatus()),
		TaskQueue:      info.GetTaskQueue(),
		StartTime:      info.GetStartTime().AsTime(),
	}
	if info.GetCloseTime() != nil {
		t := info.GetCloseTime().AsTime()
		d.CloseTime = &t
	}
	saStatus := keywordAttr(info.GetSearchAttributes(), searchattr.Status)
	d.CreatedBy = keywordAttr(info.GetSearchAttributes(), searchattr.CreatedBy)

	running := protocol.IsOpen(info.GetStatus())
	if running {
		d.Live = liveOutputs(resp)
	}
	delayed := running && info.GetExecutionTime() != nil && info.GetExecutionTime().AsTime().After(time.Now())
	var st runs.State
	if ok, err := protocol.DecodeMemo(info.GetMemo(), protocol.MemoState, &st); err == nil && ok {
		d.State = &st
	} else if delayed {
		d.StateError = "the run has not started yet: it starts at " + info.GetExecutionTime().AsTime().UTC().Format(time.RFC3339)
	} else if running || info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		if s, err := c.queryState(ctx, d.ID, d.RunID); err == nil {
			d.State = s
		} else {
			d.StateError = err.Error()
		}
	}
	recorded := runs.Status(saStatus)
	if d.State != nil && running {
		recorded = d.State.Status // the query is ahead of the search attribute
	}
	d.Status = deriveStatus(info.GetStatus(), recorded, d.State)
	if running {
		protocol.MarkWaitingService(d.State, resp.GetPendingActivities())
	}

	if !running {
		c.fillOutcome(ctx, d, info.GetStatus())
		if d.State != nil && info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
			d.Output = d.State.Output
		}
		if d.State != nil && !d.State.Status.Terminal() {
			// Temporal closed the run (terminated, timed out) before the wrapper recorded an
			// end: the state it last answered still says what it waited for, which it no
			// longer does.
			d.State.Status, d.State.Waiting = d.Status, nil
			for i := range d.State.Steps {
				if s := &d.State.Steps[i]; s.Status == runs.StepRunning || s.Status == runs.StepWaitingCapacity {
					s.Status, s.Error = runs.StepCancelled, "the run was closed by Temporal ("+temporalStatusName(info.GetStatus())+")"
				}
			}
			if d.State.Error == "" {
				d.State.Error = "closed by Temporal (" + temporalStatusName(info.GetStatus()) + ") before the run recorded an end: " + d.Error
			}
		}
	}
	return d, nil
}

func (c *Client) queryState(ctx context.Context, id, runID string) (*runs.State, error) {
	qctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	v, err := c.tc.QueryWorkflow(qctx, id, runID, protocol.QueryState)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", protocol.QueryState, err)
	}
	var st runs.State
	if err := v.Get(&st); err != nil {
		return nil, fmt.Errorf("decode %s: %w", protocol.QueryState, err)
	}
	return &st, nil
}

// fillOutcome reads a closed run's result or failure.
func (c *Client) fillOutcome(ctx context.Context, d *runs.Description, s enumspb.WorkflowExecutionStatus) {
	run := c.tc.GetWorkflow(ctx, d.ID, d.RunID)
	var raw json.RawMessage
	err := run.Get(ctx, &raw)
	switch {
	case err == nil && s == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		d.Result = raw
	case err != nil:
		d.Error = err.Error()
		if d.State != nil && d.State.Error != "" {
			d.Error = d.State.Error
		}
	}
}

// deriveStatus is a run's gateflow status: what the run wrapper recorded, unless Temporal
// closed the run without the wrapper (terminated, timed out, cancelled before it ran).
func deriveStatus(ts enumspb.WorkflowExecutionStatus, recorded runs.Status, st *runs.State) runs.Status {
	if recorded == "" && st != nil {
		recorded = st.Status
	}
	switch ts {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED,
		enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		// A continued-as-new execution is one link of a chain that goes on under its ID.
		if recorded == "" || recorded.Terminal() {
			return runs.StatusRunning
		}
		return recorded
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		if recorded.Terminal() {
			return recorded
		}
		return runs.StatusCompleted
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return runs.StatusCancelled
	case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
		if recorded.Terminal() && recorded != runs.StatusCompleted && recorded != runs.StatusWarning {
			return recorded
		}
		return runs.StatusFailed
	}
	// terminated or timed out: the wrapper did not get to record an end.
	return runs.StatusFailed
}

func temporalStatusName(s enumspb.WorkflowExecutionStatus) string {
	return s.String()
}

func keywordAttr(sa *commonpb.SearchAttributes, name string) string {
	p, ok := sa.GetIndexedFields()[name]
	if !ok {
		return ""
	}
	var s string
	if err := converter.GetDefaultDataConverter().FromPayload(p, &s); err != nil {
		return ""
	}
	return s
}

func runError(op, id string, err error) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return &RunNotFoundError{ID: id}
	}
	return fmt.Errorf("%s %s: %w", op, id, err)
}

// Wait blocks until the run ends (or ctx is done) and describes it.
func (c *Client) Wait(ctx context.Context, id string) (*runs.Description, error) {
	for {
		err := c.tc.GetWorkflow(ctx, id, "").Get(ctx, nil)
		var nf *serviceerror.NotFound
		var ended *temporal.WorkflowExecutionError
		switch {
		case err == nil, errors.As(err, &ended):
			return c.Describe(ctx, id) // the run ended, whatever its outcome
		case errors.As(err, &nf):
			return nil, &RunNotFoundError{ID: id}
		case ctx.Err() != nil:
			return nil, fmt.Errorf("wait for %s: %w", id, ctx.Err())
		case !transient(err):
			return nil, fmt.Errorf("wait for %s: %w", id, err)
		}
		// The server did not answer the long poll (busy, restarting): the run has not
		// ended, so ask again rather than describe a run still going as its end.
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for %s: %w", id, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// transient reports whether err is the server failing to answer for now (unavailable,
// out of time for the call, overloaded), so the call may be made again.
func transient(err error) bool {
	var unavailable *serviceerror.Unavailable
	var deadline *serviceerror.DeadlineExceeded
	var exhausted *serviceerror.ResourceExhausted
	var internal *serviceerror.Internal
	return errors.As(err, &unavailable) || errors.As(err, &deadline) || errors.As(err, &exhausted) ||
		errors.As(err, &internal) || errors.Is(err, context.DeadlineExceeded)
}

// ListOptions filter List.
type ListOptions struct {
	// Workflow keeps runs of this flow only.
	Workflow string
	// Status keeps runs with this gateflow status only.
	Status runs.Status
	// Label keeps runs with this label ("k=v"); CreatedBy runs started by this person.
	Label     string
	CreatedBy string
	// WaitingFor keeps runs waiting for this ("approval:ship", "input:notes", or a prefix
	// such as "approval:" for any approval).
	WaitingFor string
	// Limit is the most runs returned, newest first. Default 20.
	Limit int
	// PageToken continues a listing where the previous page ended (see ListPage).
	PageToken []byte
}

// List returns recent gateflow runs, newest first.
func (c *Client) List(ctx context.Context, opts ListOptions) ([]runs.Summary, error) {
	found, _, err := c.ListPage(ctx, opts)
	return found, err
}

// ListPage returns one page of runs (at most opts.Limit) and the token of the next page
// (nil after the last).
func (c *Client) ListPage(ctx context.Context, opts ListOptions) ([]runs.Summary, []byte, error) {
	limit := opts.Limit
	if limit <= 0 {
		limit = 20
	}
	query := listQuery(opts)
	var out []runs.Summary
	token := opts.PageToken
	for len(out) < limit {
		resp, err := c.tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			PageSize: int32(min(limit-len(out), c.opts.PageSize)), NextPageToken: token, Query: query,
		})
		if err != nil {
			return nil, nil, fmt.Errorf("list runs: %w", err)
		}
		for _, e := range resp.GetExecutions() {
			if opts.WaitingFor != "" && !waitingMatches(e.GetSearchAttributes(), opts.WaitingFor) {
				continue
			}
			recorded := runs.Status(keywordAttr(e.GetSearchAttributes(), searchattr.Status))
			s := runs.Summary{
				ID:        e.GetExecution().GetWorkflowId(),
				RunID:     e.GetExecution().GetRunId(),
				Workflow:  e.GetType().GetName(),
				Status:    deriveStatus(e.GetStatus(), recorded, nil),
				CreatedBy: keywordAttr(e.GetSearchAttributes(), searchattr.CreatedBy),
				StartTime: e.GetStartTime().AsTime(),
			}
			if e.GetCloseTime() != nil {
				t := e.GetCloseTime().AsTime()
				s.CloseTime = &t
			}
			out = append(out, s)
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			break
		}
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out, token, nil
}

// waitingMatches reports whether a run's FlowWaiting has what (exactly, or as a prefix
// ending in ":").
func waitingMatches(sa *commonpb.SearchAttributes, what string) bool {
	p, ok := sa.GetIndexedFields()[searchattr.Waiting]
	if !ok {
		return false
	}
	var list []string
	if err := converter.GetDefaultDataConverter().FromPayload(p, &list); err != nil {
		return false
	}
	for _, w := range list {
		if w == what || (strings.HasSuffix(what, ":") && strings.HasPrefix(w, what)) {
			return true
		}
	}
	return false
}

// listQuery builds the visibility query of List: gateflow runs only (they carry
// FlowStatus), filtered by flow and status.
func listQuery(opts ListOptions) string {
	q := []string{fmt.Sprintf("%s IS NOT NULL", searchattr.Status)}
	if opts.Workflow != "" {
		q = append(q, fmt.Sprintf("WorkflowType = %s", quote(opts.Workflow)))
	}
	if opts.Status != "" {
		q = append(q, fmt.Sprintf("%s = %s", searchattr.Status, quote(string(opts.Status))))
	}
	if opts.Label != "" {
		q = append(q, fmt.Sprintf("%s = %s", searchattr.Labels, quote(opts.Label)))
	}
	if opts.CreatedBy != "" {
		q = append(q, fmt.Sprintf("%s = %s", searchattr.CreatedBy, quote(opts.CreatedBy)))
	}
	if opts.WaitingFor != "" && !strings.HasSuffix(opts.WaitingFor, ":") {
		q = append(q, fmt.Sprintf("%s = %s", searchattr.Waiting, quote(opts.WaitingFor)))
	} else if opts.WaitingFor != "" {
		q = append(q, fmt.Sprintf("%s IS NOT NULL", searchattr.Waiting))
	}
	return strings.Join(q, " AND ")
}

func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}

// History is the Temporal history of a run (its latest execution) as indented JSON, as
// `flowctl history` exports it and testsuite.Replay reads it.
func (c *Client) History(ctx context.Context, id string) ([]byte, error) {
	b, err := history.JSON(ctx, c.tc, id)
	if err != nil && protocol.IsNotFound(err) {
		return nil, &RunNotFoundError{ID: id}
	}
	return b, err
}
