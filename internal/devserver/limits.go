package devserver

import (
	"context"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/dynamicconfig"
	"google.golang.org/grpc"
)

// Payload size limits of the embedded server, lower than Temporal's defaults (2 MiB error,
// 512 KiB warning per event). Every Signal, Update, start input, activity input or result
// bigger than BlobSizeLimit is refused by the frontend with InvalidArgument ("Blob data
// size exceeds limit.") before it enters any history, so nobody can push a run towards
// the history size limit with junk Signals, which a run cannot refuse before they are
// written. gateflow itself stays well below: flow-worker --dev keeps payloads bigger than
// 128 KiB in its blob store and puts only a reference in the history, and a run refuses
// signal payloads over 256 KiB (signals.MaxPayloadBytes) and answers over 64 KiB
// (signals.DefaultMaxAnswerBytes) anyway. Workers read the limit from the namespace, so
// an oversized command fails on the worker with the same limit.
const (
	// BlobSizeLimit is limit.blobSize.error: the largest payload of one event, in bytes.
	BlobSizeLimit = 512 << 10
	// BlobSizeWarn is limit.blobSize.warn: payloads bigger than this are logged.
	BlobSizeWarn = 256 << 10
)

// limitsConfig is the part of the server's dynamic config that sets the size limits.
func limitsConfig() dynamicconfig.StaticClient {
	return dynamicconfig.StaticClient{
		dynamicconfig.BlobSizeLimitError.Key(): BlobSizeLimit,
		dynamicconfig.BlobSizeLimitWarn.Key():  BlobSizeWarn,
	}
}

// LimitUpdates is a frontend interceptor that refuses an Update whose arguments are bigger
// than BlobSizeLimit with InvalidArgument, as the frontend refuses such a Signal. Temporal
// v1.32 does not check an Update's size at the frontend: the Update reaches the worker, and
// when its Validator rejects it the rejection carries the request back, which the SDK then
// refuses to send (it is over the namespace's limit), so the workflow task fails and the
// run is stuck. Refusing it here keeps it away from the run.
func LimitUpdates(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	switch r := req.(type) {
	case *workflowservice.UpdateWorkflowExecutionRequest:
		if err := checkUpdateSize(r); err != nil {
			return nil, err
		}
	case *workflowservice.ExecuteMultiOperationRequest:
		for _, op := range r.GetOperations() {
			if err := checkUpdateSize(op.GetUpdateWorkflow()); err != nil {
				return nil, err
			}
		}
	}
	return handler(ctx, req)
}

func checkUpdateSize(r *workflowservice.UpdateWorkflowExecutionRequest) error {
	in := r.GetRequest().GetInput()
	if n := in.GetArgs().Size() + in.GetHeader().Size(); n > BlobSizeLimit {
		return serviceerror.NewInvalidArgumentf("Update %s is %d bytes; the limit is %d (limit.blobSize.error)", in.GetName(), n, BlobSizeLimit)
	}
	return nil
}
