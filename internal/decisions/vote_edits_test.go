package decisions

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/auth"
)

// signedVote signs what v says for run r1 with k.
func signedVote(t *testing.T, k auth.Key, v approval.Vote, now time.Time) string {
	t.Helper()
	d, err := Vote("default", "r1", v)
	require.NoError(t, err)
	d.FirstRunID = "first-1"
	tok, err := auth.Sign(k, d, auth.SignOptions{Now: now, Nonce: "n"})
	require.NoError(t, err)
	return tok
}

// TestVoteEditsAreSigned: the signed payload of an approval covers its edited arguments,
// canonically (key order and spacing do not matter), and a vote without edits hashes as it
// always did.
func TestVoteEditsAreSigned(t *testing.T) {
	alice, err := auth.NewKey("alice-1", "alice")
	require.NoError(t, err)
	dir, err := auth.NewDirectory(alice.Public())
	require.NoError(t, err)
	now := time.Unix(1_800_000_000, 0)
	verify := func(proof string, v approval.Vote) error {
		d, err := Vote("default", "r1", v)
		require.NoError(t, err)
		d.FirstRunID = "first-1"
		_, err = dir.Verify(proof, d, auth.VerifyOptions{Now: now})
		return err
	}
	plain := approval.Vote{Gate: "agent/deploy", Kind: approval.Approve, By: "alice", Comment: "ok"}
	edited := plain
	edited.Arguments = json.RawMessage(`{"env":"staging","replicas":2}`)
	other := plain
	other.Arguments = json.RawMessage(`{"env":"prod","replicas":2}`)
	respaced := plain
	respaced.Arguments = json.RawMessage(` { "replicas" : 2, "env" : "staging" } `)
	nullArgs := plain
	nullArgs.Arguments = json.RawMessage(`null`)

	plainProof := signedVote(t, alice, plain, now)
	editProof := signedVote(t, alice, edited, now)

	require.NoError(t, verify(plainProof, plain))
	require.NoError(t, verify(plainProof, nullArgs), "null arguments are no edits")
	require.NoError(t, verify(editProof, edited))
	require.NoError(t, verify(editProof, respaced), "the hash is of canonical JSON")
	for name, c := range map[string]struct {
		proof string
		v     approval.Vote
	}{
		"a proof without edits for a vote with edits": {plainProof, edited},
		"a proof with edits for a vote without":       {editProof, plain},
		"a proof for other edits":                     {editProof, other},
	} {
		err := verify(c.proof, c.v)
		var refused *auth.RefusedError
		require.True(t, errors.As(err, &refused), "%s: %v", name, err)
		assert.Equal(t, auth.ReasonMismatch, refused.Reason, name)
	}

	// Without edits the payload is the one proofs signed before edits existed.
	h, err := auth.PayloadHash(map[string]any{"gate": "agent/deploy", "vote": approval.Approve, "by": "alice", "comment": "ok"})
	require.NoError(t, err)
	d, err := Vote("default", "r1", plain)
	require.NoError(t, err)
	assert.Equal(t, h, d.PayloadSHA256)
}
