package flowclient

import (
	"github.com/gateflow/gateflow/artifacts"

	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/gateflow/gateflow/activities"
)

func TestLiveOutputs(t *testing.T) {
	dc := converter.GetDefaultDataConverter()
	details := func(v any) *commonpb.Payloads {
		p, err := dc.ToPayloads(v)
		require.NoError(t, err)
		return p
	}
	shell := artifacts.LiveOutput{Attempt: 2, Lines: []artifacts.LiveLine{{Seq: 1, Stream: "stdout", Text: "hi"}}}
	agent := artifacts.LiveOutput{Attempt: 1, Progress: "waiting for provider p (model m), 3s"}
	resp := &workflowservice.DescribeWorkflowExecutionResponse{PendingActivities: []*workflow.PendingActivityInfo{
		{ActivityId: "build", ActivityType: &commonpb.ActivityType{Name: activities.ShellActivity}, HeartbeatDetails: details(shell)},
		{ActivityId: "review@3", ActivityType: &commonpb.ActivityType{Name: activities.AgentActivity}, HeartbeatDetails: details(agent)},
		{ActivityId: "quiet", ActivityType: &commonpb.ActivityType{Name: activities.ShellActivity}},
		{ActivityId: "bad", ActivityType: &commonpb.ActivityType{Name: activities.ShellActivity}, HeartbeatDetails: details("text")},
		{ActivityId: "gate#poll-1", ActivityType: &commonpb.ActivityType{Name: "gateflow.gate-poll"}, HeartbeatDetails: details(shell)},
	}}
	got := liveOutputs(resp)
	assert.Equal(t, map[string]artifacts.LiveOutput{"build": shell, "review": agent}, got)
	assert.Nil(t, liveOutputs(&workflowservice.DescribeWorkflowExecutionResponse{}))
}
