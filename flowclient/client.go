package flowclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gateflow/gateflow/auth"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/connect"
	"github.com/gateflow/gateflow/internal/startplan"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// Options configure a Client.
type Options struct {
	// TaskQueue is where runs are started and whose catalog is read. Default
	// core.DefaultTaskQueue.
	TaskQueue string
	// Identity is recorded as the creator of runs started without core.StartOptions.CreatedBy.
	// Default: FLOW_USER, else the OS user (the key's owner when Key is set).
	Identity string
	// Key signs the decisions the client sends (votes and answers), for runs whose worker
	// verifies them (flow.WorkerOptions.Auth). A decision's identity must then be the key's
	// owner. Nil: decisions go unsigned, and such runs refuse them when proofs are
	// required.
	Key *auth.Key
	// IdentityToken is a token of the organisation's identity provider (OIDC), sent as the
	// proof of the client's decisions when there is no Key; runs whose worker trusts the
	// provider (auth.Policy.Issuer) check that its subject is the decision's identity.
	IdentityToken string
	// Namespace is the Temporal namespace of the client, which signed decisions name.
	// Default "default".
	Namespace string
	// DecisionTimeout bounds how long a decision (Vote, Answer, RaiseBudget, PauseRun,
	// Cancel) waits for the run's answer; past it the decision is submitted but not yet
	// validated (a *PendingError, matching core.ErrNotValidated), or, when the server holds
	// no trace of it, a *NotDeliveredError. Default 30 seconds.
	DecisionTimeout time.Duration
	// PageSize is how many runs one request of a listing reads from the server (Approvals
	// reads page after page to the end; List asks for at most this many at once). Default
	// 1000, the most the server returns.
	PageSize int
}

// maxPageSize is the most executions one visibility request returns.
const maxPageSize = 1000

// Client starts and inspects gateflow runs. It wraps a Temporal client.
type Client struct {
	tc   client.Client
	opts Options
}

// New wraps a Temporal client in a Client.
func New(c client.Client, opts Options) *Client {
	if opts.TaskQueue == "" {
		opts.TaskQueue = core.DefaultTaskQueue
	}
	if opts.Identity == "" {
		opts.Identity = connect.CurrentUser()
		if opts.Key != nil {
			opts.Identity = opts.Key.Owner
		} else if sub, err := auth.TokenSubject(opts.IdentityToken); err == nil {
			opts.Identity = sub
		}
	}
	if opts.Namespace == "" {
		opts.Namespace = "default"
	}
	if opts.PageSize <= 0 || opts.PageSize > maxPageSize {
		opts.PageSize = maxPageSize
	}
	if opts.DecisionTimeout <= 0 {
		opts.DecisionTimeout = 30 * time.Second
	}
	return &Client{tc: c, opts: opts}
}

// Temporal returns the wrapped Temporal client.
func (c *Client) Temporal() client.Client { return c.tc }

// TaskQueue is the client's task queue.
func (c *Client) TaskQueue() string { return c.opts.TaskQueue }

// who is by, or the client's identity when by is empty.
// proof is the proof of decision d (what, on run), signed with the client's key, or the
// client's identity token; empty with neither. A signed decision binds the run's first run
// ID as well as its workflow ID, read from the server first, so the proof is worthless on
// a later run that reuses the workflow ID. Nobody signs for someone else: a decision by
// another identity than the key's owner is a *RefusedError before anything is sent; an
// unknown run a *RunNotFoundError.
func (c *Client) proof(ctx context.Context, run, what string, d auth.Decision, err error) (string, error) {
	if c.opts.Key == nil && c.opts.IdentityToken == "" {
		return "", nil
	}
	refused := func(err error) error { return &RefusedError{Run: run, What: what, Reason: err.Error()} }
	if err != nil {
		return "", refused(err)
	}
	if c.opts.Key == nil {
		if sub, serr := auth.TokenSubject(c.opts.IdentityToken); serr == nil && sub != d.By {
			return "", refused(fmt.Errorf("the identity token is %s's; it cannot prove a decision by %s", sub, d.By))
		}
		return c.opts.IdentityToken, nil
	}
	if d.By != c.opts.Key.Owner {
		return "", refused(fmt.Errorf("the signing key %s belongs to %s; it cannot sign for %s", c.opts.Key.ID, c.opts.Key.Owner, d.By))
	}
	desc, err := c.tc.DescribeWorkflowExecution(ctx, run, "")
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return "", &RunNotFoundError{ID: run}
		}
		return "", fmt.Errorf("%s on run %s: read the run to sign for: %w", what, run, err)
	}
	d.FirstRunID = desc.GetWorkflowExecutionInfo().GetFirstRunId()
	if d.FirstRunID == "" { // servers name it; keep the run itself otherwise
		d.FirstRunID = desc.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	}
	tok, err := auth.Sign(*c.opts.Key, d, auth.SignOptions{})
	if err != nil {
		return "", refused(err)
	}
	return tok, nil
}

func (c *Client) who(by string) string {
	if by == "" {
		return c.opts.Identity
	}
	return by
}

// starter is who plans the client's starts (startplan.New): its task queue and identity.
func (c *Client) starter() startplan.Starter {
	return startplan.Starter{TaskQueue: c.opts.TaskQueue, Identity: c.opts.Identity}
}
