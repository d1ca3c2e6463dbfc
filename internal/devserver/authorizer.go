package devserver

import (
	"context"
	"fmt"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/api"
	"go.temporal.io/server/common/authorization"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/decisions"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/signals"
)

// Authorizer is gateflow's Temporal Authorizer: the rules of who may call what on a
// gateflow server whose callers carry tokens (Temporal's JWT claim mapper turns a token
// into authorization.Claims before Authorize sees them).
//
//   - A caller without claims or without a subject is refused, except for health checks.
//   - Workers — claims with Temporal's worker or admin role, cluster-wide or on the
//     namespace; the server's own internal calls carry the system admin role — may call
//     everything.
//   - People (any other subject) may call the read-only APIs (describe, list, query,
//     history, poll an Update's result) and the operator API's ListSearchAttributes (the
//     Web UI reads them); start runs that are not gateflow's entity
//     workflows; send gateflow's decision Updates (gateflow.approval, gateflow.input,
//     gateflow.budget, gateflow.pause, gateflow.cancel) and the run Signals
//     gateflow.approval and gateflow.cancel only with "by" equal to their own subject
//     (and a gateflow.signal envelope only with their own "sender", or none), the payload
//     read as the run reads it, strictly: a payload with an unknown, duplicate or
//     case-variant key is refused (package decisions);
//     signal other run Signals. Everything else — Temporal's own cancellation request
//     (it names no one; people cancel with the Update), signalling or starting an entity
//     workflow (catalog, control, ledger, mailbox, semaphore, fan-out), other Updates,
//     terminate, reset, delete, the worker APIs, the operator and admin APIs — is refused
//     with the rule that failed.
//
// The rules are pure: Decide has no server behind it and is table-tested.
type Authorizer struct{}

var _ authorization.Authorizer = Authorizer{}

// Authorize implements authorization.Authorizer.
func (a Authorizer) Authorize(_ context.Context, claims *authorization.Claims, target *authorization.CallTarget) (authorization.Result, error) {
	if err := Decide(claims, target); err != nil {
		return authorization.Result{Decision: authorization.DecisionDeny, Reason: err.Error()}, nil
	}
	r := authorization.Result{Decision: authorization.DecisionAllow}
	if claims != nil && claims.Subject != "" {
		r.Principal = &commonpb.Principal{Type: claims.AuthType, Name: claims.Subject}
	}
	return r, nil
}

// workerSignals are the run Signals only gateflow's own workflows send (a child's report,
// a permit, a resume); a person sending one would forge it.
var workerSignals = map[string]bool{
	protocol.SignalChildReport: true,
	protocol.SignalPermit:      true,
	protocol.SignalResume:      true,
}

// entityTypes are the workflow types of gateflow's entity workflows.
var entityTypes = map[string]bool{
	protocol.CatalogWorkflowType:   true,
	protocol.ControlWorkflowType:   true,
	protocol.SemaphoreWorkflowType: true,
	protocol.MailboxWorkflowType:   true,
	protocol.LedgerWorkflowType:    true,
	protocol.FanoutWorkflowType:    true,
}

// entityIDPrefixes begin the workflow IDs of gateflow's entity workflows.
var entityIDPrefixes = []string{
	protocol.CatalogID(""),
	"gateflow-control@",
	"gateflow-semaphore/",
	signals.MailboxIDPrefix,
	budget.LedgerIDPrefix,
}

// personWrites are the write APIs people may call, with the check each needs.
var personWrites = map[string]func(sub string, req any) error{
	"StartWorkflowExecution":         checkStart,
	"SignalWorkflowExecution":        checkSignal,
	"UpdateWorkflowExecution":        checkUpdate,
	"RequestCancelWorkflowExecution": checkCancel,
}

// IsWorker says whether claims are a worker principal on namespace: Temporal's worker or
// admin role, cluster-wide or on the namespace.
func IsWorker(claims *authorization.Claims, namespace string) bool {
	if claims == nil {
		return false
	}
	role := claims.System
	if namespace != "" {
		role |= claims.Namespaces[namespace]
	}
	return role&(authorization.RoleWorker|authorization.RoleAdmin) != 0
}

// Decide is nil when claims may make the call target names, else the rule that refuses it.
func Decide(claims *authorization.Claims, target *authorization.CallTarget) error {
	if authorization.IsHealthCheckAPI(target.APIName) {
		return nil
	}
	if claims == nil || claims.Subject == "" {
		return fmt.Errorf("gateflow: a token is required (no credentials, or a token without a subject)")
	}
	if IsWorker(claims, target.Namespace) {
		return nil
	}
	method := api.MethodName(target.APIName)
	md := api.GetMethodMetadata(target.APIName)
	if md.Access == api.AccessReadOnly && strings.HasPrefix(target.APIName, api.WorkflowServicePrefix) {
		return nil
	}
	if target.APIName == api.OperatorServicePrefix+"ListSearchAttributes" {
		return nil // the Web UI reads them to show and filter runs
	}
	check, ok := personWrites[method]
	if !ok || !strings.HasPrefix(target.APIName, api.WorkflowServicePrefix) {
		return fmt.Errorf("gateflow: %s is for workers only; %q is a person", method, claims.Subject)
	}
	return check(claims.Subject, target.Request)
}

func isEntityID(id string) bool {
	for _, p := range entityIDPrefixes {
		if strings.HasPrefix(id, p) {
			return true
		}
	}
	return false
}

func checkStart(_ string, req any) error {
	r, ok := req.(*workflowservice.StartWorkflowExecutionRequest)
	if !ok {
		return fmt.Errorf("gateflow: unexpected start request %T", req)
	}
	if entityTypes[r.GetWorkflowType().GetName()] || isEntityID(r.GetWorkflowId()) {
		return fmt.Errorf("gateflow: only workers may start entity workflow %s (%s)", r.GetWorkflowId(), r.GetWorkflowType().GetName())
	}
	return nil
}

func checkSignal(sub string, req any) error {
	r, ok := req.(*workflowservice.SignalWorkflowExecutionRequest)
	if !ok {
		return fmt.Errorf("gateflow: unexpected signal request %T", req)
	}
	id := r.GetWorkflowExecution().GetWorkflowId()
	if isEntityID(id) {
		return fmt.Errorf("gateflow: only workers may signal entity workflow %s", id)
	}
	name := r.GetSignalName()
	if workerSignals[name] {
		return fmt.Errorf("gateflow: Signal %s is sent by gateflow's workflows only", name)
	}
	if !decisions.IsClaimSignal(name) {
		return nil
	}
	return checkClaim(sub, "Signal "+name, r.GetInput(), func(data []byte) (decisions.Claim, bool, error) {
		return decisions.SignalClaim(name, data)
	})
}

func checkCancel(_ string, req any) error {
	r, ok := req.(*workflowservice.RequestCancelWorkflowExecutionRequest)
	if !ok {
		return fmt.Errorf("gateflow: unexpected cancel request %T", req)
	}
	id := r.GetWorkflowExecution().GetWorkflowId()
	if isEntityID(id) {
		return fmt.Errorf("gateflow: only workers may cancel entity workflow %s", id)
	}
	// Temporal's request names no one, so the run could not check who cancels it.
	return fmt.Errorf("gateflow: people cancel run %s with the Update %s (flowctl cancel), which the run checks; RequestCancelWorkflowExecution names no one", id, protocol.UpdateCancel)
}

func checkUpdate(sub string, req any) error {
	r, ok := req.(*workflowservice.UpdateWorkflowExecutionRequest)
	if !ok {
		return fmt.Errorf("gateflow: unexpected update request %T", req)
	}
	id := r.GetWorkflowExecution().GetWorkflowId()
	name := r.GetRequest().GetInput().GetName()
	if isEntityID(id) {
		return fmt.Errorf("gateflow: only workers may update entity workflow %s", id)
	}
	if !decisions.IsDecisionUpdate(name) {
		return fmt.Errorf("gateflow: Update %q is not one of gateflow's decisions; people may send only those", name)
	}
	return checkClaim(sub, "Update "+name, r.GetRequest().GetInput().GetArgs(), func(data []byte) (decisions.Claim, bool, error) {
		return decisions.UpdateClaim(name, data)
	})
}

// checkClaim refuses a message whose first argument claims someone other than sub. The
// argument is read by read (package decisions) exactly as the run decodes it — strictly,
// so a payload with an unknown, duplicate or case-variant key ({"by":"mallory",
// "By":"alice"}) is refused before its claim is compared: the server and the run never
// read two different people from the same bytes.
func checkClaim(sub, what string, args *commonpb.Payloads, read func([]byte) (decisions.Claim, bool, error)) error {
	ps := args.GetPayloads()
	if len(ps) == 0 {
		return fmt.Errorf("gateflow: %s has no payload naming who decides", what)
	}
	if enc := string(ps[0].GetMetadata()["encoding"]); enc != "json/plain" {
		return fmt.Errorf("gateflow: %s payload is encoded %q, not json/plain; the server cannot read who decides", what, enc)
	}
	c, _, err := read(ps[0].GetData())
	if err != nil {
		return fmt.Errorf("gateflow: %s refused: %w", what, err)
	}
	switch {
	case c.By == "" && !c.Required:
		return nil
	case c.By == "":
		return fmt.Errorf("gateflow: %s payload has no %q", what, c.Field)
	case c.By != sub:
		return fmt.Errorf("gateflow: %s %s %q refused: the token is %q's; people act only as themselves", what, c.Field, c.By, sub)
	}
	return nil
}
