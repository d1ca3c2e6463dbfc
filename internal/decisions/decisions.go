// Package decisions builds the auth.Decision each of gateflow's decision messages (a vote,
// an answer, a budget raise, a pause) stands for, the same way for the client that signs it,
// the run that verifies it and flowctl audit that verifies it again from history: the
// payload hash covers what the decision says (trimmed, the vote kind canonical), never the
// proof itself or what the run stamps. The builders fill the namespace and workflow ID; the
// signer and the verifier add the run's first run ID (auth.Decision.FirstRunID).
//
// It also reads who a message people send to a run claims to come from (UpdateClaim,
// SignalClaim), for the server's Authorizer, decoding the payload into the run's own types
// so both read the same person from the same bytes.
package decisions

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/auth"
	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/protocol"
)

// Vote is what a vote on run in namespace says.
func Vote(namespace, run string, v approval.Vote) (auth.Decision, error) {
	kind, err := approval.ParseVoteKind(string(v.Kind))
	if err != nil {
		return auth.Decision{}, err
	}
	gate, by := strings.TrimSpace(v.Gate), strings.TrimSpace(v.By)
	payload := map[string]any{"gate": gate, "vote": kind, "by": by, "comment": strings.TrimSpace(v.Comment)}
	if v.HasArguments() {
		// An approval with edited arguments signs their hash too: a proof for the same
		// approval without edits (or with other edits) does not authorise it. Without
		// edits the payload is as it always was, so earlier proofs still verify.
		args, err := auth.PayloadHash(v.Arguments)
		if err != nil {
			return auth.Decision{}, fmt.Errorf("vote on %s: edited arguments: %w", gate, err)
		}
		payload["arguments_sha256"] = args
	}
	h, err := auth.PayloadHash(payload)
	if err != nil {
		return auth.Decision{}, err
	}
	return auth.Decision{Namespace: namespace, Run: run, Target: gate, Kind: auth.KindVote, PayloadSHA256: h, By: by}, nil
}

// Budget is what a budget raise of run in namespace says (the new cap as its
// exact decimal text).
func Budget(namespace, run string, r protocol.BudgetRaise) (auth.Decision, error) {
	to, err := budget.ParseUSD(r.To)
	if err != nil {
		return auth.Decision{}, err
	}
	by := strings.TrimSpace(r.By)
	h, err := auth.PayloadHash(map[string]any{"to": to.String(), "by": by})
	if err != nil {
		return auth.Decision{}, err
	}
	return auth.Decision{Namespace: namespace, Run: run, Kind: auth.KindBudget, PayloadSHA256: h, By: by}, nil
}

// Pause is what a pause or resume of run in namespace says.
func Pause(namespace, run string, r protocol.RunPause) (auth.Decision, error) {
	by := strings.TrimSpace(r.By)
	h, err := auth.PayloadHash(map[string]any{"action": r.Action, "by": by, "reason": strings.TrimSpace(r.Reason)})
	if err != nil {
		return auth.Decision{}, err
	}
	return auth.Decision{Namespace: namespace, Run: run, Kind: auth.KindPause, PayloadSHA256: h, By: by}, nil
}

// Cancel is what a cancellation of run in namespace says.
func Cancel(namespace, run string, r protocol.RunCancel) (auth.Decision, error) {
	by := strings.TrimSpace(r.By)
	h, err := auth.PayloadHash(map[string]any{"by": by, "reason": strings.TrimSpace(r.Reason)})
	if err != nil {
		return auth.Decision{}, err
	}
	return auth.Decision{Namespace: namespace, Run: run, Kind: auth.KindCancel, PayloadSHA256: h, By: by}, nil
}

// Answer is what an answer to an input of run in namespace says.
func Answer(namespace, run string, a protocol.InputAnswer) (auth.Decision, error) {
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
