package flowctl

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/approval"
)

func TestVotedOnLeavesOutGatesIVotedOn(t *testing.T) {
	g, err := approval.Open("ship", approval.Request{Approvers: []string{"alice", "bob"}, Required: 2}, time.Now())
	require.NoError(t, err)
	_, err = g.Apply(approval.Vote{Gate: "ship", Kind: approval.Approve, By: "alice", At: time.Now()}, nil)
	require.NoError(t, err)
	require.False(t, g.Closed(), "one of two approvals")
	assert.True(t, votedOn(g, "alice"), "alice has nothing left to give")
	assert.False(t, votedOn(g, "bob"))
}
