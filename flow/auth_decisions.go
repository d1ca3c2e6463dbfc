package flow

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/auth"
	"github.com/gateflow/gateflow/internal/protocol"
)

// The decisions a proof binds, built the same way by the client that signs and the run
// that verifies: the payload hash covers what the decision says (trimmed, the vote kind
// canonical), never the proof itself or what the run stamps.

// voteDecision is what a vote on run in namespace says.
func voteDecision(namespace, run string, v approval.Vote) (auth.Decision, error) {
	kind, err := approval.ParseVoteKind(string(v.Kind))
	if err != nil {
		return auth.Decision{}, err
	}
	gate, by := strings.TrimSpace(v.Gate), strings.TrimSpace(v.By)
	h, err := auth.PayloadHash(map[string]any{"gate": gate, "vote": kind, "by": by, "comment": strings.TrimSpace(v.Comment)})
	if err != nil {
		return auth.Decision{}, err
	}
	return auth.Decision{Namespace: namespace, Run: run, Target: gate, Kind: auth.KindVote, PayloadSHA256: h, By: by}, nil
}

// answerDecision is what an answer to an input of run in namespace says.
func answerDecision(namespace, run string, a protocol.InputAnswer) (auth.Decision, error) {
	data := a.Data
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	by := strings.TrimSpace(a.By)
	h, err := auth.PayloadHash(map[string]any{"name": a.Name, "data": data, "by": by})
	if err != nil {
		return auth.Decision{}, fmt.Errorf("input %s: %w", a.Name, err)
	}
	return auth.Decision{Namespace: namespace, Run: run, Target: a.Name, Kind: auth.KindAnswer, PayloadSHA256: h, By: by}, nil
}
