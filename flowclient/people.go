package flowclient

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/decisions"
	"github.com/gateflow/gateflow/internal/entity"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/searchattr"
	"github.com/gateflow/gateflow/signals"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/temporal"
)

// refusal turns an Update's rejection into a RefusedError; other errors are wrapped.
func (c *Client) refusal(ctx context.Context, run, what string, err error) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		// Temporal answers NotFound for a run that has ended, too.
		if d, derr := c.tc.DescribeWorkflowExecution(ctx, run, ""); derr == nil {
			st := temporalStatusName(d.GetWorkflowExecutionInfo().GetStatus())
			return &RefusedError{Run: run, What: what, Reason: "the run has ended (" + st + ")"}
		}
		return &RunNotFoundError{ID: run}
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return &RefusedError{Run: run, What: what, Reason: app.Message()}
	}
	var fp *serviceerror.FailedPrecondition
	if errors.As(err, &fp) {
		return &RefusedError{Run: run, What: what, Reason: "the run has ended"}
	}
	return fmt.Errorf("%s on run %s: %w", what, run, err)
}

// Vote sends a vote to the gate v.Gate of run as the Update gateflow.approval and returns
// how the gate stands. A refused vote (not allowed, gate closed, malformed) returns a
// *RefusedError and leaves no trace. An empty v.By is the client's identity.
func (c *Client) Vote(ctx context.Context, run string, v approval.Vote) (approval.VoteResult, error) {
	v.By = c.who(v.By)
	what := "vote on " + v.Gate
	if err := v.Validate(); err != nil {
		return approval.VoteResult{}, &RefusedError{Run: run, What: what, Reason: err.Error()}
	}
	d, derr := decisions.Vote(c.opts.Namespace, run, v)
	proof, err := c.proof(ctx, run, what, d, derr)
	if err != nil {
		return approval.VoteResult{}, err
	}
	v.Proof, v.Verified = proof, nil
	var res approval.VoteResult
	err = c.update(ctx, run, what, protocol.UpdateApproval, v, &res)
	return res, err
}

// AnswerRequest asks Client.Answer to answer a run's human input request.
type AnswerRequest struct {
	// Run is the run's ID; Name the input request's step name.
	Run  string
	Name string
	// Data is the answer as JSON; it must fit the request's schema and the handler's type.
	Data json.RawMessage
	// By is who answers; empty means the client's identity.
	By string
}

// Answer answers the input request r.Name of run r.Run with the Update gateflow.input. An
// answer that does not fit the request's schema, comes from someone not assigned, or
// arrives when the run does not wait for it, returns a *RefusedError and leaves no trace.
func (c *Client) Answer(ctx context.Context, r AnswerRequest) (signals.InputAnswer, error) {
	r.By = c.who(r.By)
	if !json.Valid(r.Data) {
		return signals.InputAnswer{}, &core.InputError{Workflow: r.Name, Err: errors.New("the answer is not valid JSON")}
	}
	if err := protocol.CheckAnswerSize(r.Data); err != nil {
		return signals.InputAnswer{}, &core.InputError{Workflow: "input " + r.Name, Err: err}
	}
	a := protocol.InputAnswer{Name: r.Name, Data: r.Data, By: r.By}
	d, derr := decisions.Answer(c.opts.Namespace, r.Run, a)
	proof, err := c.proof(ctx, r.Run, "input "+r.Name, d, derr)
	if err != nil {
		return signals.InputAnswer{}, err
	}
	a.Proof = proof
	var ans signals.InputAnswer
	err = c.update(ctx, r.Run, "input "+r.Name, protocol.UpdateInput, a, &ans)
	return ans, err
}

// Signal sends e to run, or, with no run and a key, to the mailboxes of (e.Name, e.Key)
// as SignalKey does. An empty ID gets a random one (so a retried command should pass its
// own ID to be delivered once); an empty sender is the client's identity.
func (c *Client) Signal(ctx context.Context, run string, e signals.Envelope) (signals.Envelope, error) {
	if run == "" {
		e, _, err := c.SignalKey(ctx, e)
		return e, err
	}
	if err := protocol.CheckRunID(run); err != nil {
		return e, &core.InputError{Workflow: "signal " + e.Name, Err: err}
	}
	e, err := c.envelope(e)
	if err != nil {
		return e, err
	}
	if err := c.tc.SignalWorkflow(ctx, run, "", protocol.SignalName, e); err != nil {
		return e, c.refusal(ctx, run, "signal "+e.Name, err)
	}
	return e, nil
}

// SignalKey sends e to the mailboxes of (e.Name, e.Key), which deliver it to every run
// waiting on that key and keep it for runs that start waiting later. Mailboxes are served
// per task queue: it goes to the mailbox of every task queue of the namespace where runs
// wait on the key (or signals for it are kept), and to the client's own queue's when that
// has workers or no queue had one; so it reaches waiting runs whatever queue they are on,
// and a run that starts waiting later gets it on the client's queue. It returns the
// envelope sent and the task queues it went to, sorted.
func (c *Client) SignalKey(ctx context.Context, e signals.Envelope) (signals.Envelope, []string, error) {
	e, err := c.envelope(e)
	if err != nil {
		return e, nil, err
	}
	if e.Key == "" {
		return e, nil, &core.InputError{Workflow: "signal " + e.Name, Err: errors.New("a signal needs a run (--run) or a key (--key)")}
	}
	queues, err := entity.PostMailboxes(ctx, c.tc, c.opts.TaskQueue, e)
	if err != nil {
		return e, queues, fmt.Errorf("signal %s/%s: %w", e.Name, e.Key, err)
	}
	return e, queues, nil
}

// envelope completes e for sending (an ID, the sender, a null payload, the time) and
// checks it.
func (c *Client) envelope(e signals.Envelope) (signals.Envelope, error) {
	if e.Sender == "" {
		e.Sender = c.opts.Identity
	}
	if e.ID == "" {
		var b [12]byte
		_, _ = rand.Read(b[:])
		e.ID = "sig-" + hex.EncodeToString(b[:])
	}
	if len(e.Payload) == 0 {
		e.Payload = json.RawMessage("null")
	}
	e.SentAt = time.Now().UTC()
	if err := e.Validate(); err != nil {
		return e, &core.InputError{Workflow: "signal " + e.Name, Err: err}
	}
	return e, nil
}

// approvalsQuery is the visibility query of the runs Approvals reads: running gateflow
// runs that wait for something (FlowWaiting). The runs among them with an approval:GATE
// wait are kept whatever their status: a branch's gate stays open while the handler
// sleeps or waits for a signal, and a paused run keeps its gates open.
var approvalsQuery = fmt.Sprintf("%s IS NOT NULL AND %s IS NOT NULL AND ExecutionStatus = 'Running'", searchattr.Status, searchattr.Waiting)

// Approvals lists every open approval gate across runs (runs whose FlowWaiting has an
// approval:GATE, whatever their status), with who may decide and the deadline. It reads
// every page of the listing (Options.PageSize runs at a time).
func (c *Client) Approvals(ctx context.Context) ([]runs.PendingGate, error) {
	var out []runs.PendingGate
	var token []byte
	for {
		resp, err := c.tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: approvalsQuery, PageSize: int32(c.opts.PageSize), NextPageToken: token,
		})
		if err != nil {
			return nil, fmt.Errorf("list runs awaiting approval: %w", err)
		}
		for _, e := range resp.GetExecutions() {
			if !waitingMatches(e.GetSearchAttributes(), string(runs.ForApproval)+":") {
				continue
			}
			out = append(out, c.openGates(ctx, e.GetExecution().GetWorkflowId(), e.GetType().GetName())...)
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return out, nil
		}
	}
}

// openGates is the open approval gates of the run id, read from its state; a run whose
// state cannot be read (its worker is down or does not answer) is one entry saying so,
// rather than being left out.
func (c *Client) openGates(ctx context.Context, id, workflow string) []runs.PendingGate {
	st, err := c.queryState(ctx, id, "")
	if err != nil {
		return []runs.PendingGate{{Run: id, Workflow: workflow, Unknown: err.Error()}}
	}
	var out []runs.PendingGate
	for _, g := range st.Gates {
		if g.Closed() {
			continue
		}
		pg := runs.PendingGate{
			Run: id, Workflow: st.Workflow, Gate: g.Name, Message: g.Request.Message,
			Approvers: g.Request.Approvers, Pending: g.Pending(), Approvals: len(g.Approvals()),
			Required: g.Request.Required, OpenedAt: g.OpenedAt, Deadline: g.Deadline,
			OnTimeout: string(g.Request.OnTimeout), Voted: voted(g),
		}
		if tc := g.Request.Tool; tc != nil {
			pg.Tool, pg.Arguments, pg.Reason = tc.Name, tc.Arguments, tc.Reason
		}
		out = append(out, pg)
	}
	return out
}

// voted lists who has voted on g and how, in order ("alice approve").
func voted(g *approval.Gate) []string {
	var out []string
	for _, v := range g.Votes {
		out = append(out, v.By+" "+string(v.Kind))
	}
	return out
}
