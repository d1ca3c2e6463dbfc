package flowclient

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/mocks"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/signals"
)

// waitEnded are the errors the SDK gives when the wait for an Update ends without an
// answer, depending on timing: the text differs, the type or gRPC code does not.
func waitEnded() map[string]error {
	rst := status.Error(codes.Canceled, "stream terminated by RST_STREAM with error code: CANCEL")
	return map[string]error{
		"RST_STREAM":             rst,
		"sdk wrap of RST_STREAM": client.NewWorkflowUpdateServiceTimeoutOrCanceledError(rst),
		"sdk wrap of deadline":   client.NewWorkflowUpdateServiceTimeoutOrCanceledError(context.DeadlineExceeded),
		"server deadline":        serviceerror.NewDeadlineExceeded("context deadline exceeded"),
		"server canceled":        serviceerror.NewCanceled("canceled"),
		"grpc deadline":          status.Error(codes.DeadlineExceeded, "context deadline exceeded"),
		"wrapped ctx deadline":   fmt.Errorf("poll: %w", context.DeadlineExceeded),
	}
}

// pollOnly is a WorkflowService whose PollWorkflowExecutionUpdate answers with poll.
type pollOnly struct {
	workflowservice.WorkflowServiceClient
	poll func(*workflowservice.PollWorkflowExecutionUpdateRequest) (*workflowservice.PollWorkflowExecutionUpdateResponse, error)
}

func (p pollOnly) PollWorkflowExecutionUpdate(_ context.Context, r *workflowservice.PollWorkflowExecutionUpdateRequest, _ ...grpc.CallOption) (*workflowservice.PollWorkflowExecutionUpdateResponse, error) {
	return p.poll(r)
}

// TestAnUnansweredDecisionSaysWhatWillHappen: whatever error ends the wait for a vote
// (by type or gRPC code, never by text), the client asks the server, without waiting,
// which stage the same Update ID has reached and says what is true: queued (exit 7, it
// counts when a worker is back), not delivered (nothing will happen), the answer that
// came meanwhile, or "may be queued" when the server cannot be asked. It used to classify
// by the deadline only, so a server's RST_STREAM CANCEL gave a raw error (exit 1) while
// the vote counted later.
func TestAnUnansweredDecisionSaysWhatWillHappen(t *testing.T) {
	for name, sendErr := range waitEnded() {
		for _, check := range []string{"held", "not found", "answered meanwhile", "server not answering"} {
			t.Run(name+"/"+check, func(t *testing.T) {
				tc := &mocks.Client{}
				var ids []string
				tc.On("UpdateWorkflow", mock.Anything, mock.Anything).Return(
					func(_ context.Context, o client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
						ids = append(ids, o.UpdateID)
						return nil, sendErr
					})
				var asked *workflowservice.PollWorkflowExecutionUpdateRequest
				tc.On("WorkflowService").Return(pollOnly{poll: func(r *workflowservice.PollWorkflowExecutionUpdateRequest) (*workflowservice.PollWorkflowExecutionUpdateResponse, error) {
					asked = r
					switch check {
					case "held":
						return &workflowservice.PollWorkflowExecutionUpdateResponse{Stage: enumspb.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED}, nil
					case "not found":
						return nil, serviceerror.NewNotFound("update not found")
					case "server not answering":
						return nil, serviceerror.NewUnavailable("busy")
					}
					return &workflowservice.PollWorkflowExecutionUpdateResponse{Stage: enumspb.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED}, nil
				}})
				h := &mocks.WorkflowUpdateHandle{}
				h.On("Get", mock.Anything, mock.Anything).Return(func(ctx context.Context, out any) error {
					*out.(*approval.VoteResult) = approval.VoteResult{Gate: "go", Status: approval.VoteOpen}
					return nil
				})
				var got client.GetWorkflowUpdateHandleOptions
				tc.On("GetWorkflowUpdateHandle", mock.Anything).Return(func(o client.GetWorkflowUpdateHandleOptions) client.WorkflowUpdateHandle {
					got = o
					return h
				})
				c := New(tc, Options{TaskQueue: "q", Identity: "alice", Namespace: "ns", DecisionTimeout: 500 * time.Millisecond})
				res, err := c.Vote(context.Background(), "run-1", approval.Vote{Gate: "go", Kind: approval.Approve})

				require.NotEmpty(t, ids)
				for _, id := range ids {
					assert.Equal(t, ids[0], id, "sent again with the same Update ID")
				}
				require.NotNil(t, asked)
				assert.Equal(t, "ns", asked.GetNamespace())
				assert.Equal(t, "run-1", asked.GetUpdateRef().GetWorkflowExecution().GetWorkflowId())
				assert.Equal(t, ids[0], asked.GetUpdateRef().GetUpdateId())
				assert.Equal(t, enumspb.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED, asked.GetWaitPolicy().GetLifecycleStage(), "asked without waiting")
				var p *PendingError
				switch check {
				case "held", "server not answering":
					require.ErrorAs(t, err, &p)
					assert.Equal(t, check == "held", p.Queued)
					assert.ErrorIs(t, err, core.ErrNotValidated)
					queued := "the Temporal server has queued it"
					if check != "held" {
						queued = "the Temporal server could not tell whether it holds it, so it may be queued"
					}
					assert.Contains(t, err.Error(), "vote on go on run run-1: submitted, not yet validated: the worker is not answering (no answer within 500ms); "+queued+
						" and the run will check it, and count it if it is valid, when a worker comes back")
					assert.NotContains(t, err.Error(), "RST_STREAM")
				case "not found":
					var nd *NotDeliveredError
					require.ErrorAs(t, err, &nd)
					assert.NotErrorIs(t, err, core.ErrNotValidated)
					assert.Contains(t, err.Error(), "not delivered")
				default:
					require.NoError(t, err)
					assert.Equal(t, approval.VoteOpen, res.Status)
					assert.Equal(t, client.GetWorkflowUpdateHandleOptions{WorkflowID: "run-1", UpdateID: ids[0]}, got)
				}
			})
		}
	}
}

// TestARefusedDecisionIsNotSentAgain: a refusal is final: one Update, a *RefusedError.
func TestARefusedDecisionIsNotSentAgain(t *testing.T) {
	tc := &mocks.Client{}
	sent := 0
	tc.On("UpdateWorkflow", mock.Anything, mock.Anything).Return(
		func(context.Context, client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
			sent++
			return nil, temporal.NewApplicationError("alice may not decide", "")
		})
	c := New(tc, Options{TaskQueue: "q", Identity: "alice", DecisionTimeout: time.Second})
	_, err := c.Vote(context.Background(), "run-1", approval.Vote{Gate: "go", Kind: approval.Approve})
	var r *RefusedError
	require.ErrorAs(t, err, &r)
	assert.Equal(t, "alice may not decide", r.Reason)
	assert.Equal(t, 1, sent)
	assert.False(t, errors.Is(err, core.ErrNotValidated))
}

// TestBadRunIDsAreNotSent: a decision or signal for a run ID Temporal's gRPC header
// cannot carry (empty, blank, emoji, control characters) is an *core.InputError naming it, and
// nothing is sent (the mock client has no expectations: a call would fail the test).
func TestBadRunIDsAreNotSent(t *testing.T) {
	c := New(&mocks.Client{}, Options{TaskQueue: "q", Identity: "alice"})
	for _, run := range []string{"", "  ", "run-🚀", "run\x00", "a\nb"} {
		_, err := c.Vote(context.Background(), run, approval.Vote{Gate: "go", Kind: approval.Approve})
		var ie *core.InputError
		assert.ErrorAs(t, err, &ie, "vote %q", run)
		assert.Contains(t, err.Error(), "run ID", "vote %q", run)
		_, err = c.Answer(context.Background(), AnswerRequest{Run: run, Name: "notes", Data: []byte(`{}`)})
		assert.ErrorAs(t, err, &ie, "answer %q", run)
		err = c.PauseRun(context.Background(), PauseRequest{Run: run})
		assert.ErrorAs(t, err, &ie, "pause %q", run)
		if run != "" { // an empty run means a keyed signal
			_, err = c.Signal(context.Background(), run, signals.Envelope{Name: "deploy-done"})
			assert.ErrorAs(t, err, &ie, "signal %q", run)
			assert.Contains(t, err.Error(), "run ID", "signal %q", run)
		}
	}
}
