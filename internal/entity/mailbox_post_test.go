package entity

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
