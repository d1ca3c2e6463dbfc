package testflows

import (
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/flow"
)

// SoakFlows are the flows of the soak test (soak_test.go, build tag soak).
func SoakFlows() []flow.Definition { return []flow.Definition{Soak} }

// SoakApprovers may decide the soak flow's gate; SoakRequired of them must approve.
var SoakApprovers = []string{"alice", "bob", "carol"}

// SoakRequired is the quorum of the soak flow's gate "ship".
const SoakRequired = 2

// SoakInput is the key a Soak run waits on once its gate is approved.
type SoakInput struct {
	Key string `json:"key"`
}

// Soak opens the gate "ship" (two of alice, bob and carol must approve; one rejection closes
// it), then waits without a deadline for the signal "deploy" with the run's key and returns
// its payload. It can be cancelled at either wait.
var Soak = flow.Define("test.soak", func(ctx *flow.Context, in SoakInput) (Ping, error) {
	if _, err := ctx.Approval("ship", approval.Request{Message: "ship?", Approvers: SoakApprovers, Required: SoakRequired}); err != nil {
		return Ping{}, err
	}
	return flow.WaitSignal[Ping](ctx, "deploy", in.Key, 0)
})
