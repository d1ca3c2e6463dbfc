package flowctl

import (
	"context"
	"fmt"
	"os"
	"strings"

	commonpb "go.temporal.io/api/common/v1"

	"github.com/gateflow/gateflow/auth"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/internal/connect"
	"go.temporal.io/api/workflowservice/v1"
)

// caller is who flowctl acts for. With a credential (a signing key, an identity token, a
// JWT API key, an mTLS client certificate, a dev login) that credential's name is the
// identity and --as / FLOW_USER cannot name anyone else; without one the typed name is all
// there is, and flowctl says so.
type caller struct {
	name     string // authenticated name; empty: nobody is authenticated
	how      string // e.g. "signing key alice-1", "api key", "dev login"
	conflict error  // two credentials naming different people
}

// resolveCaller works out the caller from flowctl's credentials and the connection
// settings, and makes it the client's identity.
func (a *app) resolveCaller(opts *flow.ClientOptions) error {
	conn, err := connect.Authenticated(connect.Request{Profile: a.profile, Address: a.address, Namespace: a.namespace})
	if err != nil {
		return usageErr("%v", err)
	}
	var c caller
	switch {
	case opts.Key != nil:
		c = caller{name: opts.Key.Owner, how: "signing key " + opts.Key.ID}
	case opts.IdentityToken != "":
		sub, _ := auth.TokenSubject(opts.IdentityToken) // checked when the token was read
		c = caller{name: sub, how: "identity token"}
	case conn.Subject != "":
		c = caller{name: conn.Subject, how: conn.Source}
	}
	if c.name != "" && conn.Subject != "" && conn.Subject != c.name {
		c.conflict = fmt.Errorf("your %s is %s's but your connection (%s) authenticates %s: use one person's credentials",
			c.how, c.name, conn.Source, conn.Subject)
	}
	a.me = c
	if c.name != "" {
		opts.Identity = c.name
	}
	return nil
}

// who is the identity a decision goes out under. Authenticated, it is the credential's name
// and a different --as or FLOW_USER is refused (they are not identities then); otherwise it
// is --as, else the client's default (FLOW_USER, else the OS user), unverified.
func (a *app) who(as string) (string, error) {
	as = strings.TrimSpace(as)
	if a.me.conflict != nil {
		return "", &exitError{code: ExitRefused, err: a.me.conflict}
	}
	if a.me.name == "" {
		if as == "" {
			as = connect.CurrentUser() // the client's default identity
		}
		return as, nil
	}
	if as != "" && as != a.me.name {
		return "", &exitError{code: ExitRefused, err: fmt.Errorf(
			"--as %s: you are authenticated as %s (%s); --as is not an identity then: drop it, or use %s's own credentials", as, a.me.name, a.me.how, as)}
	}
	if u := strings.TrimSpace(os.Getenv("FLOW_USER")); u != "" && u != a.me.name {
		return "", &exitError{code: ExitRefused, err: fmt.Errorf(
			"FLOW_USER=%s: you are authenticated as %s (%s); FLOW_USER is not an identity then: unset it", u, a.me.name, a.me.how)}
	}
	return a.me.name, nil
}

// asWho is how a decision's sender is named in flowctl's replies: "as alice, signing key
// alice-1", or "as alice, unverified" when no credential backs the name (typed with --as
// or FLOW_USER, or the OS user).
func (a *app) asWho(by string) string {
	if a.me.name != "" {
		return "as " + a.me.name + ", " + a.me.how
	}
	return "as " + by + ", unverified"
}

// startedBy is how show names who started a run: the run's creator, checked against the
// principal the server recorded on the run's first event when there is one (a server that
// authenticates callers, e.g. `flow-worker --dev --auth`); typed otherwise.
func (a *app) startedBy(ctx context.Context, run, createdBy string) string {
	if a.tc == nil {
		return createdBy + " (unverified)"
	}
	h, err := a.tc.WorkflowService().GetWorkflowExecutionHistory(ctx, &workflowservice.GetWorkflowExecutionHistoryRequest{
		Namespace: a.namespace, Execution: &commonpb.WorkflowExecution{WorkflowId: run}, MaximumPageSize: 1,
	})
	if err != nil || len(h.GetHistory().GetEvents()) == 0 {
		return createdBy + " (unverified)"
	}
	switch p := h.GetHistory().GetEvents()[0].GetPrincipal().GetName(); {
	case p == "":
		return createdBy + " (unverified)"
	case p == createdBy:
		return createdBy + " (server principal)"
	default:
		return createdBy + " (unverified; the server saw " + p + " start it)"
	}
}
