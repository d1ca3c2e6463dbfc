package flow

import "github.com/gateflow/gateflow/internal/protocol"

// The messages a run understands, for tools that talk to runs without Go (the Temporal
// CLI, another SDK, the Web UI's "Send an Update" and "Send a Signal"). Payloads are JSON.
// In Go, use Client, which sends the same messages.
//
//	temporal workflow update execute --workflow-id RUN --name gateflow.approval \
//	    --input '{"gate":"ship","kind":"approve","by":"alice","comment":"ok"}'
//	temporal workflow update execute --workflow-id RUN --name gateflow.input \
//	    --input '{"name":"release-notes","data":{"text":"..."},"by":"alice"}'
//	temporal workflow signal --workflow-id RUN --name gateflow.signal \
//	    --input '{"name":"deploy-done","key":"v1.2.3","id":"d-1","payload":{"ok":true},"sender":"ci"}'
//	temporal workflow update execute --workflow-id RUN --name gateflow.budget --input '{"to":"5.00","by":"alice"}'
//	temporal workflow update execute --workflow-id RUN --name gateflow.pause --input '{"action":"pause","by":"alice"}'
//	temporal workflow query --workflow-id RUN --type gateflow.state
//
// An Update's Validator refuses what may not count (a vote from someone not allowed, an
// answer that does not fit the schema, a cap below what is spent) with the reason, and a
// refused Update leaves no trace in the run's history. A vote sent as a Signal cannot be
// refused that way: the run records the refusal in runs.State.Refused instead.
const (
	// UpdateApproval carries a vote {"gate", "kind": "approve"|"reject"|"request_changes",
	// "by", "comment"} (approval.Vote) and returns a approval.VoteResult.
	UpdateApproval = protocol.UpdateApproval
	// SignalApproval carries the same vote as a Signal.
	SignalApproval = protocol.SignalApproval
	// UpdateInput answers a human input request {"name", "data", "by"} and returns the
	// accepted signals.InputAnswer.
	UpdateInput = protocol.UpdateInput
	// SignalName carries a signals.Envelope {name, key, id, payload, sender} to a run.
	// Signals that arrive before the run waits for them are kept; an ID seen before is
	// delivered once.
	SignalName = protocol.SignalName
	// UpdateBudget raises a run's money cap {"to": "5.00", "by"} and returns the new
	// budget.Cap.
	UpdateBudget = protocol.UpdateBudget
	// UpdatePause pauses one run {"action": "pause", "by", "reason"} or resumes it
	// {"action": "resume", "by"} and returns the run's status. A paused run finishes the
	// steps in flight and starts no new one until resumed.
	UpdatePause = protocol.UpdatePause
	// QueryState returns the run's runs.State.
	QueryState = protocol.QueryState
	// MemoState is the Memo key under which a closed run keeps its final runs.State, so it
	// can be read without a worker.
	MemoState = protocol.MemoState
)
