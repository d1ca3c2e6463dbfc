package flowclient

import (
	"github.com/gateflow/gateflow/artifacts"

	"regexp"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/gateflow/gateflow/activities"
)

// paidAttemptSuffix is the "@N" a cost-bearing step's later attempts add to its activity ID
// (run_paid.go).
var paidAttemptSuffix = regexp.MustCompile(`@[0-9]+$`)

// liveOutputs reads the live output the run's running shell and agent steps heartbeat from
// the pending activities of a description, by the step's activity ID (runs.Step.ActivityID).
// A detail that does not decode (another kind of heartbeat) is left out.
func liveOutputs(resp *workflowservice.DescribeWorkflowExecutionResponse) map[string]artifacts.LiveOutput {
	var out map[string]artifacts.LiveOutput
	dc := converter.GetDefaultDataConverter()
	for _, pa := range resp.GetPendingActivities() {
		typ := pa.GetActivityType().GetName()
		if typ != activities.ShellActivity && typ != activities.AgentActivity {
			continue
		}
		ps := pa.GetHeartbeatDetails().GetPayloads()
		if len(ps) == 0 {
			continue
		}
		var lo artifacts.LiveOutput
		if err := dc.FromPayload(ps[0], &lo); err != nil {
			continue
		}
		id := pa.GetActivityId()
		if typ == activities.AgentActivity {
			id = paidAttemptSuffix.ReplaceAllString(id, "")
		}
		if out == nil {
			out = map[string]artifacts.LiveOutput{}
		}
		out[id] = lo
	}
	return out
}
