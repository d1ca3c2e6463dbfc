package testsuite_test

import "github.com/gateflow/gateflow/approval"

func approvalRequest() approval.Request {
	return approval.Request{Message: "go?", Approvers: []string{"alice", "bob"}, Required: 2}
}
