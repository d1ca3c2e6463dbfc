package flowclient

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/mocks"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// describeClosed describes a closed run whose Memo holds st, with the Temporal status ts
// and the result or error run.Get gives.
func describeClosed(t *testing.T, st runs.State, ts enumspb.WorkflowExecutionStatus, result []byte, runErr error) *runs.Description {
	t.Helper()
	tc := &mocks.Client{}
	p, err := converter.GetDefaultDataConverter().ToPayload(st)
	require.NoError(t, err)
	now := time.Now()
	tc.On("DescribeWorkflowExecution", mock.Anything, "run-1", "").Return(&workflowservice.DescribeWorkflowExecutionResponse{
		WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{
			Execution: &commonpb.WorkflowExecution{WorkflowId: "run-1", RunId: "r1"},
			Type:      &commonpb.WorkflowType{Name: st.Workflow},
			Status:    ts,
			StartTime: timestamppb.New(now.Add(-time.Minute)),
			CloseTime: timestamppb.New(now),
			Memo:      &commonpb.Memo{Fields: map[string]*commonpb.Payload{protocol.MemoState: p}},
		},
	}, nil)
	run := &mocks.WorkflowRun{}
	run.On("Get", mock.Anything, mock.Anything).Return(func(_ context.Context, v any) error {
		if runErr != nil {
			return runErr
		}
		*(v.(*json.RawMessage)) = result
		return nil
	})
	tc.On("GetWorkflow", mock.Anything, "run-1", "r1").Return(run)
	d, err := New(tc, Options{TaskQueue: "q", Identity: "me"}).Describe(context.Background(), "run-1")
	require.NoError(t, err)
	return d
}

// TestDescribeOutputsOfClosedRuns: Describe gives a failed run's output from the state in
// its Memo (the state flow.TestFailedHandlerOutputIsKept records), and a completed run's
// output as its Result.
func TestDescribeOutputsOfClosedRuns(t *testing.T) {
	st := runs.State{Workflow: "unit/failed-output", Status: runs.StatusFailed, Error: "step b: exit code 1: work-fails",
		Output: json.RawMessage(`{"built":["a"],"failed":"b"}`)}
	// Describe returns it for the failed run, from the state in the Memo.
	desc := describeClosed(t, st, enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, nil, errors.New("workflow execution error: step b: exit code 1: work-fails"))
	assert.Equal(t, runs.StatusFailed, desc.Status)
	assert.JSONEq(t, `{"built":["a"],"failed":"b"}`, string(desc.Output))
	assert.Empty(t, desc.Result, "Result stays the completed result")
	assert.Equal(t, st.Error, desc.Error)

	// A completed run's output is its Result.
	st.Status, st.Error = runs.StatusCompleted, ""
	desc = describeClosed(t, st, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, []byte(`{"built":["a"]}`), nil)
	assert.JSONEq(t, `{"built":["a"]}`, string(desc.Result))
	assert.Empty(t, desc.Output)
}
