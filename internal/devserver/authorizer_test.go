package devserver

import (
	"context"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	updatepb "go.temporal.io/api/update/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/api"
	"go.temporal.io/server/common/authorization"
)

func authzArgs(data string) *commonpb.Payloads {
	return &commonpb.Payloads{Payloads: []*commonpb.Payload{{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(data)}}}
}

func authzUpdate(id, name, data string) *workflowservice.UpdateWorkflowExecutionRequest {
	return &workflowservice.UpdateWorkflowExecutionRequest{Namespace: "default",
		WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: id},
		Request:           &updatepb.Request{Input: &updatepb.Input{Name: name, Args: authzArgs(data)}}}
}

func authzSignal(id, name, data string) *workflowservice.SignalWorkflowExecutionRequest {
	return &workflowservice.SignalWorkflowExecutionRequest{Namespace: "default",
		WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: id}, SignalName: name, Input: authzArgs(data)}
}

func authzStart(id, typ string) *workflowservice.StartWorkflowExecutionRequest {
	return &workflowservice.StartWorkflowExecutionRequest{Namespace: "default", WorkflowId: id,
		WorkflowType: &commonpb.WorkflowType{Name: typ}}
}

func TestDecide(t *testing.T) {
	alice := &authorization.Claims{Subject: "alice", AuthType: "jwt"}
	worker := &authorization.Claims{Subject: "w", AuthType: "jwt", Namespaces: map[string]authorization.Role{"default": authorization.RoleWorker}}
	otherNSWorker := &authorization.Claims{Subject: "w2", AuthType: "jwt", Namespaces: map[string]authorization.Role{"other": authorization.RoleWorker}}
	internal := &authorization.Claims{Subject: authorization.InternalPrincipalName, System: authorization.RoleAdmin}
	ws := func(m string) string { return api.WorkflowServicePrefix + m }
	cases := []struct {
		name   string
		claims *authorization.Claims
		method string
		req    any
		refuse string // "" allows; else a piece of the refusal
	}{
		{"health check without token", nil, "/grpc.health.v1.Health/Check", nil, ""},
		{"no token", nil, ws("DescribeWorkflowExecution"), nil, "a token is required"},
		{"token without subject", &authorization.Claims{AuthType: "jwt"}, ws("DescribeWorkflowExecution"), nil, "a token is required"},
		{"person describes", alice, ws("DescribeWorkflowExecution"), nil, ""},
		{"person lists", alice, ws("ListWorkflowExecutions"), nil, ""},
		{"person queries", alice, ws("QueryWorkflow"), nil, ""},
		{"person reads history", alice, ws("GetWorkflowExecutionHistory"), nil, ""},
		{"person polls an update", alice, ws("PollWorkflowExecutionUpdate"), nil, ""},
		{"person system info", alice, ws("GetSystemInfo"), nil, ""},
		{"person votes as herself", alice, ws("UpdateWorkflowExecution"), authzUpdate("release-1", "gateflow.approval", `{"gate":"ship","vote":"approve","by":"alice"}`), ""},
		{"person votes as bob", alice, ws("UpdateWorkflowExecution"), authzUpdate("release-1", "gateflow.approval", `{"gate":"ship","vote":"approve","by":"bob"}`), `by "bob" refused: the token is "alice"'s`},
		{"person answers as bob", alice, ws("UpdateWorkflowExecution"), authzUpdate("r", "gateflow.input", `{"name":"q","data":{},"by":"bob"}`), `by "bob"`},
		{"person raises budget as herself", alice, ws("UpdateWorkflowExecution"), authzUpdate("r", "gateflow.budget", `{"to":"5","by":"alice"}`), ""},
		{"person raises budget as bob", alice, ws("UpdateWorkflowExecution"), authzUpdate("r", "gateflow.budget", `{"to":"5","by":"bob"}`), `by "bob"`},
		{"person pauses as bob", alice, ws("UpdateWorkflowExecution"), authzUpdate("r", "gateflow.pause", `{"action":"pause","by":"bob"}`), `by "bob"`},
		{"decision without by", alice, ws("UpdateWorkflowExecution"), authzUpdate("r", "gateflow.approval", `{"gate":"ship"}`), `has no "by"`},
		{"decision not JSON", alice, ws("UpdateWorkflowExecution"), authzUpdate("r", "gateflow.approval", `nope`), "not a JSON object"},
		{"decision with empty by", alice, ws("UpdateWorkflowExecution"), authzUpdate("r", "gateflow.approval", `{"by":""}`), `has no "by"`},
		{"other update", alice, ws("UpdateWorkflowExecution"), authzUpdate("r", "custom", `{}`), "not one of gateflow's decisions"},
		{"update to an entity", alice, ws("UpdateWorkflowExecution"), authzUpdate("gateflow-ledger/all/2026-12", "gateflow.approval", `{"by":"alice"}`), "only workers may update entity"},
		{"binary decision payload", alice, ws("UpdateWorkflowExecution"), &workflowservice.UpdateWorkflowExecutionRequest{
			Request: &updatepb.Request{Input: &updatepb.Input{Name: "gateflow.approval", Args: &commonpb.Payloads{Payloads: []*commonpb.Payload{{Metadata: map[string][]byte{"encoding": []byte("binary/encrypted")}}}}}}}, "not json/plain"},
		{"decision with no args", alice, ws("UpdateWorkflowExecution"), &workflowservice.UpdateWorkflowExecutionRequest{
			Request: &updatepb.Request{Input: &updatepb.Input{Name: "gateflow.approval"}}}, "no payload"},
		{"signal vote as herself", alice, ws("SignalWorkflowExecution"), authzSignal("release-1", "gateflow.approval", `{"by":"alice"}`), ""},
		{"signal vote as bob", alice, ws("SignalWorkflowExecution"), authzSignal("release-1", "gateflow.approval", `{"by":"bob"}`), `by "bob"`},
		{"signal cancel as bob", alice, ws("SignalWorkflowExecution"), authzSignal("release-1", "gateflow.cancel", `{"by":"bob","reason":"x"}`), `by "bob"`},
		{"envelope as herself", alice, ws("SignalWorkflowExecution"), authzSignal("r", "gateflow.signal", `{"name":"deploy-done","sender":"alice"}`), ""},
		{"envelope as bob", alice, ws("SignalWorkflowExecution"), authzSignal("r", "gateflow.signal", `{"name":"deploy-done","sender":"bob"}`), `sender "bob" refused`},
		{"envelope without sender", alice, ws("SignalWorkflowExecution"), authzSignal("r", "gateflow.signal", `{"name":"deploy-done"}`), ""},
		{"forged child report", alice, ws("SignalWorkflowExecution"), authzSignal("r", "gateflow.child", `{}`), "sent by gateflow's workflows only"},
		{"forged permit", alice, ws("SignalWorkflowExecution"), authzSignal("r", "gateflow.permit", `"g"`), "sent by gateflow's workflows only"},
		{"forged resume", alice, ws("SignalWorkflowExecution"), authzSignal("r", "gateflow.resume", `"hello"`), "sent by gateflow's workflows only"},
		{"by not a string", alice, ws("UpdateWorkflowExecution"), authzUpdate("r", "gateflow.approval", `{"by":1}`), "cannot unmarshal number"},
		// Issue 31: a second key spelled with other capitals (or given twice) must not let
		// the run read another person than the one checked here.
		{"vote with a case-variant by", alice, ws("UpdateWorkflowExecution"), authzUpdate("r", "gateflow.approval", `{"gate":"ship","vote":"approve","by":"alice","By":"bob"}`), `json key "By": not "by": keys are case-sensitive`},
		{"vote with a duplicate by", alice, ws("UpdateWorkflowExecution"), authzUpdate("r", "gateflow.approval", `{"gate":"ship","vote":"approve","by":"alice","by":"bob"}`), `json key "by": duplicate key`},
		{"vote with a case-variant by only", alice, ws("UpdateWorkflowExecution"), authzUpdate("r", "gateflow.approval", `{"gate":"ship","vote":"approve","BY":"alice"}`), `json key "BY"`},
		{"vote with an unknown key", alice, ws("UpdateWorkflowExecution"), authzUpdate("r", "gateflow.approval", `{"gate":"ship","vote":"approve","by":"alice","voter":"bob"}`), `json key "voter": unknown key`},
		{"vote with a forged verified", alice, ws("UpdateWorkflowExecution"), authzUpdate("r", "gateflow.approval", `{"gate":"ship","vote":"approve","by":"alice","verified":{"by":"alice","By":"bob"}}`), `json key "By" in verified`},
		{"answer with a case-variant by", alice, ws("UpdateWorkflowExecution"), authzUpdate("r", "gateflow.input", `{"name":"q","data":{},"by":"alice","bY":"bob"}`), `json key "bY"`},
		{"budget with a case-variant by", alice, ws("UpdateWorkflowExecution"), authzUpdate("r", "gateflow.budget", `{"to":"1000000","by":"alice","By":"bob"}`), `json key "By"`},
		{"pause with a case-variant by", alice, ws("UpdateWorkflowExecution"), authzUpdate("r", "gateflow.pause", `{"action":"pause","by":"alice","By":"bob"}`), `json key "By"`},
		{"cancel with a case-variant by", alice, ws("UpdateWorkflowExecution"), authzUpdate("r", "gateflow.cancel", `{"by":"alice","By":"bob"}`), `json key "By"`},
		{"signal vote with a case-variant by", alice, ws("SignalWorkflowExecution"), authzSignal("r", "gateflow.approval", `{"gate":"ship","vote":"approve","by":"alice","By":"bob"}`), `json key "By"`},
		{"signal cancel with a case-variant by", alice, ws("SignalWorkflowExecution"), authzSignal("r", "gateflow.cancel", `{"by":"alice","By":"bob"}`), `json key "By"`},
		{"envelope with a case-variant sender", alice, ws("SignalWorkflowExecution"), authzSignal("r", "gateflow.signal", `{"name":"deploy-done","sender":"alice","Sender":"bob"}`), `json key "Sender"`},
		{"envelope with a case-variant sender only", alice, ws("SignalWorkflowExecution"), authzSignal("r", "gateflow.signal", `{"name":"deploy-done","SENDER":"bob"}`), `json key "SENDER"`},
		{"envelope with a duplicate sender", alice, ws("SignalWorkflowExecution"), authzSignal("r", "gateflow.signal", `{"name":"deploy-done","sender":"alice","sender":"bob"}`), `duplicate key`},
		{"envelope that is not an object", alice, ws("SignalWorkflowExecution"), authzSignal("r", "gateflow.signal", `null`), "not a JSON object"},
		{"cancel an entity", alice, ws("RequestCancelWorkflowExecution"), &workflowservice.RequestCancelWorkflowExecutionRequest{
			WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: "gateflow-catalog-gateflow"}}, "only workers may cancel entity"},
		{"signal a run", alice, ws("SignalWorkflowExecution"), authzSignal("release-1", "deploy", `{}`), ""},
		{"signal the ledger", alice, ws("SignalWorkflowExecution"), authzSignal("gateflow-ledger/all/2026-12@gateflow", "charge", `{}`), "only workers may signal entity workflow"},
		{"signal the catalog", alice, ws("SignalWorkflowExecution"), authzSignal("gateflow-catalog-gateflow", "gateflow.catalog.publish", `{}`), "only workers"},
		{"signal a mailbox", alice, ws("SignalWorkflowExecution"), authzSignal("gateflow-mailbox/deploy/k@gateflow", "post", `{}`), "only workers"},
		{"signal a semaphore", alice, ws("SignalWorkflowExecution"), authzSignal("gateflow-semaphore/g@gateflow", "acquire", `{}`), "only workers"},
		{"signal control", alice, ws("SignalWorkflowExecution"), authzSignal("gateflow-control@gateflow", "pause", `{}`), "only workers"},
		{"start a run", alice, ws("StartWorkflowExecution"), authzStart("hello-1", "hello"), ""},
		{"start an entity type", alice, ws("StartWorkflowExecution"), authzStart("x", "gateflow.ledger"), "only workers may start entity"},
		{"start an entity id", alice, ws("StartWorkflowExecution"), authzStart("gateflow-catalog-gateflow", "hello"), "only workers may start entity"},
		{"signal with start", alice, ws("SignalWithStartWorkflowExecution"), nil, "for workers only"},
		{"update with start", alice, ws("ExecuteMultiOperation"), nil, "for workers only"},
		{"create a schedule", alice, ws("CreateSchedule"), nil, "for workers only"},
		{"list schedules", alice, ws("ListSchedules"), nil, ""},
		{"cancel a run", alice, ws("RequestCancelWorkflowExecution"), &workflowservice.RequestCancelWorkflowExecutionRequest{
			WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: "release-1"}}, "people cancel run release-1 with the Update gateflow.cancel"},
		{"person cancels as herself", alice, ws("UpdateWorkflowExecution"), authzUpdate("r", "gateflow.cancel", `{"by":"alice","reason":"x"}`), ""},
		{"person cancels as bob", alice, ws("UpdateWorkflowExecution"), authzUpdate("r", "gateflow.cancel", `{"by":"bob"}`), `by "bob"`},
		{"worker cancels", worker, ws("RequestCancelWorkflowExecution"), &workflowservice.RequestCancelWorkflowExecutionRequest{
			WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: "release-1"}}, ""},
		{"terminate", alice, ws("TerminateWorkflowExecution"), nil, "TerminateWorkflowExecution is for workers only"},
		{"reset", alice, ws("ResetWorkflowExecution"), nil, "for workers only"},
		{"delete", alice, ws("DeleteWorkflowExecution"), nil, "for workers only"},
		{"poll tasks", alice, ws("PollWorkflowTaskQueue"), nil, "for workers only"},
		{"operator", alice, "/temporal.api.operatorservice.v1.OperatorService/AddSearchAttributes", nil, "for workers only"},
		{"person lists search attributes (the Web UI needs them)", alice, "/temporal.api.operatorservice.v1.OperatorService/ListSearchAttributes", nil, ""},
		{"operator read", alice, "/temporal.api.operatorservice.v1.OperatorService/ListClusters", nil, "for workers only"},
		{"operator nexus read", alice, "/temporal.api.operatorservice.v1.OperatorService/ListNexusEndpoints", nil, "for workers only"},
		{"no token lists search attributes", nil, "/temporal.api.operatorservice.v1.OperatorService/ListSearchAttributes", nil, "a token is required"},
		{"worker signals the ledger", worker, ws("SignalWorkflowExecution"), authzSignal("gateflow-ledger/all/2026-12@gateflow", "charge", `{}`), ""},
		{"worker terminates", worker, ws("TerminateWorkflowExecution"), nil, ""},
		{"worker polls", worker, ws("PollWorkflowTaskQueue"), nil, ""},
		{"worker of another namespace", otherNSWorker, ws("TerminateWorkflowExecution"), nil, "for workers only"},
		{"server internal", internal, ws("TerminateWorkflowExecution"), nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			target := &authorization.CallTarget{APIName: c.method, Namespace: "default", Request: c.req}
			err := Decide(c.claims, target)
			switch {
			case c.refuse == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.refuse != "" && err == nil:
				t.Fatalf("allowed, want a refusal containing %q", c.refuse)
			case c.refuse != "" && !strings.Contains(err.Error(), c.refuse):
				t.Fatalf("refusal %q does not contain %q", err, c.refuse)
			}
			res, aerr := Authorizer{}.Authorize(context.Background(), c.claims, target)
			if aerr != nil {
				t.Fatal(aerr)
			}
			if (res.Decision == authorization.DecisionAllow) != (c.refuse == "") {
				t.Fatalf("Authorize decision %v disagrees with Decide", res.Decision)
			}
			if res.Decision == authorization.DecisionAllow && c.claims != nil && (res.Principal == nil || res.Principal.Name != c.claims.Subject) {
				t.Fatalf("principal %v, want %s", res.Principal, c.claims.Subject)
			}
		})
	}
}
