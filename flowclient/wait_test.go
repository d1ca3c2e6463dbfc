package flowclient

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/mocks"

	"github.com/gateflow/gateflow/runs"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// TestWaitAsksAgainWhenTheServerDoesNotAnswer: a long poll the server drops (unavailable,
// out of time) is not the run's end: Wait asks again and describes the run once it has
// ended. It used to describe the run still running as if it had ended.
func TestWaitAsksAgainWhenTheServerDoesNotAnswer(t *testing.T) {
	tc := &mocks.Client{}
	run := &mocks.WorkflowRun{}
	gets := 0
	run.On("Get", mock.Anything, mock.Anything).Return(func(context.Context, any) error {
		gets++
		switch gets {
		case 1:
			return serviceerror.NewUnavailable("busy")
		case 2:
			return serviceerror.NewDeadlineExceeded("long poll expired")
		}
		return nil
	})
	tc.On("GetWorkflow", mock.Anything, "run-1", "").Return(run)
	closed := &mocks.WorkflowRun{}
	closed.On("Get", mock.Anything, mock.Anything).Return(nil)
	tc.On("GetWorkflow", mock.Anything, "run-1", "r1").Return(closed)
	status := enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
	tc.On("DescribeWorkflowExecution", mock.Anything, "run-1", "").Return(func(context.Context, string, string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
		return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{
			Execution: &commonpb.WorkflowExecution{WorkflowId: "run-1", RunId: "r1"},
			Type:      &commonpb.WorkflowType{Name: "hello"},
			Status:    status,
			StartTime: timestamppb.New(time.Now()),
		}}, nil
	})
	status = enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
	d, err := New(tc, Options{TaskQueue: "q", Identity: "me"}).Wait(context.Background(), "run-1")
	require.NoError(t, err)
	assert.Equal(t, 3, gets, "asked again twice")
	assert.Equal(t, "run-1", d.ID)
	assert.Equal(t, runs.StatusCompleted, d.Status, "described once it ended")

	other := &mocks.Client{}
	denied := &mocks.WorkflowRun{}
	denied.On("Get", mock.Anything, mock.Anything).Return(serviceerror.NewPermissionDenied("no", ""))
	other.On("GetWorkflow", mock.Anything, "run-2", "").Return(denied)
	_, err = New(other, Options{TaskQueue: "q", Identity: "me"}).Wait(context.Background(), "run-2")
	assert.ErrorContains(t, err, "wait for run-2: no", "a refusal is an error, not the run's end")
}
