package integration

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gateflow/gateflow/internal/devserver"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	updatepb "go.temporal.io/api/update/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
)

func updateOf(n int) *workflowservice.UpdateWorkflowExecutionRequest {
	return &workflowservice.UpdateWorkflowExecutionRequest{Request: &updatepb.Request{Input: &updatepb.Input{
		Name: "gateflow.input", Args: &commonpb.Payloads{Payloads: []*commonpb.Payload{{Data: []byte(strings.Repeat("x", n))}}}}}}
}

func TestLimitUpdatesRefusesAnUpdateOverTheBlobLimit(t *testing.T) {
	calls := 0
	handler := func(context.Context, any) (any, error) { calls++; return "ok", nil }
	info := &grpc.UnaryServerInfo{FullMethod: "/temporal.api.workflowservice.v1.WorkflowService/UpdateWorkflowExecution"}

	if _, err := devserver.LimitUpdates(t.Context(), updateOf(100<<10), info, handler); err != nil || calls != 1 {
		t.Fatalf("a 100 KiB Update: err %v, calls %d; want it passed on", err, calls)
	}
	_, err := devserver.LimitUpdates(t.Context(), updateOf(devserver.BlobSizeLimit), info, handler)
	var inv *serviceerror.InvalidArgument
	if !errors.As(err, &inv) || !strings.Contains(err.Error(), "Update gateflow.input is ") || !strings.Contains(err.Error(), "the limit is 524288 (limit.blobSize.error)") {
		t.Fatalf("an Update over the limit: got %v, want InvalidArgument naming the limit", err)
	}
	multi := &workflowservice.ExecuteMultiOperationRequest{Operations: []*workflowservice.ExecuteMultiOperationRequest_Operation{
		{Operation: &workflowservice.ExecuteMultiOperationRequest_Operation_UpdateWorkflow{UpdateWorkflow: updateOf(1 << 20)}}}}
	if _, err := devserver.LimitUpdates(t.Context(), multi, info, handler); !errors.As(err, &inv) {
		t.Fatalf("update-with-start over the limit: got %v, want InvalidArgument", err)
	}
	if _, err := devserver.LimitUpdates(t.Context(), &workflowservice.SignalWorkflowExecutionRequest{}, info, handler); err != nil || calls != 2 {
		t.Fatalf("other requests pass: err %v, calls %d", err, calls)
	}
}
