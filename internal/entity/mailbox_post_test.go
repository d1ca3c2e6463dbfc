package entity

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/signals"
)

func TestMailboxPostActivityPostsTheEnvelope(t *testing.T) {
	tc := &fakeClient{}
	env := newActivityEnv(tc, nil)
	e := signals.Envelope{Name: "deploy-done", Key: "v1/2", ID: "rel-1/deploy-done", Sender: "rel-1", Payload: json.RawMessage(`{"ok":true}`)}
	_, err := env.ExecuteActivity(protocol.MailboxPostActivity, e)
	require.NoError(t, err)
	starts, _ := tc.calls()
	require.Len(t, starts, 1)
	s := starts[0]
	assert.Equal(t, protocol.MailboxID("unit", "deploy-done", "v1/2"), s.ID)
	assert.Equal(t, "unit", s.Options.TaskQueue, "the worker's own queue, as Client.Signal's")
	assert.Equal(t, protocol.MailboxPost, s.Signal)
	assert.Equal(t, e, s.Arg)
	assert.Equal(t, []any{MailboxState{Name: "deploy-done", Key: "v1/2"}}, s.Args)
}

func TestPostMailboxesReachesEveryQueueWithAMailbox(t *testing.T) {
	e := signals.Envelope{Name: "deployed", Key: "T-1", ID: "sig-1", Sender: "alice", Payload: json.RawMessage(`{}`)}
	running := described(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil)
	tests := []struct {
		name     string
		catalogs []string
		mailbox  map[string]*workflowservice.DescribeWorkflowExecutionResponse
		want     []string
	}{
		{"no workers anywhere: the sender's queue keeps it", nil, nil, []string{"gateflow"}},
		{"only other queues have workers, no mailbox: the sender's queue", []string{"my-flows"}, nil, []string{"gateflow"}},
		{"a run waits on another queue: only there", []string{"my-flows"},
			map[string]*workflowservice.DescribeWorkflowExecutionResponse{protocol.MailboxID("my-flows", "deployed", "T-1"): running},
			[]string{"my-flows"}},
		{"the sender's queue has workers too: both", []string{"gateflow", "my-flows", "other"},
			map[string]*workflowservice.DescribeWorkflowExecutionResponse{protocol.MailboxID("my-flows", "deployed", "T-1"): running,
				protocol.MailboxID("other", "deployed", "T-1"): described(t, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, nil)},
			[]string{"gateflow", "my-flows"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := &fakeClient{catalogs: tt.catalogs, describe: byID(tt.mailbox)}
			got, err := PostMailboxes(context.Background(), tc, "gateflow", e)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			starts, _ := tc.calls()
			var ids []string
			for _, s := range starts {
				assert.Equal(t, e, s.Arg)
				ids = append(ids, s.ID)
			}
			var want []string
			for _, q := range tt.want {
				want = append(want, protocol.MailboxID(q, "deployed", "T-1"))
			}
			assert.Equal(t, want, ids)
		})
	}
}

func TestCatalogQueue(t *testing.T) {
	q, ok := protocol.CatalogQueue(protocol.CatalogID("my-flows"))
	assert.True(t, ok)
	assert.Equal(t, "my-flows", q)
	_, ok = protocol.CatalogQueue("gateflow-control@q")
	assert.False(t, ok)
	_, ok = protocol.CatalogQueue(protocol.CatalogID(""))
	assert.False(t, ok)
}
