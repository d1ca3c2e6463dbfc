// Package approval owns the rules of gateflow's approval gates: the places where a run stops
// until people decide. It is pure, deterministic logic with no Temporal import and no clock
// (every time is passed in), so workflow code may call it directly and replays see the same
// answers.
//
// A gate is opened with a Request that says what is asked (Message, Details), who may
// decide (Approvers: user names and "group:" names), how many distinct approvals close it
// (Required), its deadline (Timeout) and what the deadline does (OnTimeout):
//
//	g, err := approval.Open("ship", approval.Request{
//		Message:   "Ship v1.4 to production?",
//		Approvers: []string{"alice", "group:release"},
//		Required:  2,
//		Timeout:   24 * time.Hour,
//	}, now)
//
// People vote with a Vote (approve, reject or request_changes, an identity and a comment).
// Gate.Check is the Validator: it refuses, with a *VoteError that names the gate and the
// person, votes from people not allowed, votes on a closed gate, unknown vote kinds, votes
// without an identity and change requests without a comment; it never changes the gate.
// Gate.Apply records a vote that passes Check and says whether the gate closed:
//
//   - approvals are counted per distinct person; a second approval by the same person is
//     kept in Gate.Duplicates and changes nothing;
//   - Required distinct approvals close the gate as Approved;
//   - one rejection closes it as Rejected at once, whatever approvals came before;
//   - one change request closes it as ChangesRequested and carries the comment, so the
//     handler can loop back and ask again.
//
// Gate.Expire applies OnTimeout at the deadline. Gate.Err turns a closed gate's Decision
// into the error the handler sees: nil when approved, a *RejectedError, a
// *ChangesRequestedError or a *TimedOutError otherwise, all matchable with errors.As and
// errors.Is (ErrRejected, ErrChangesRequested, ErrTimedOut).
//
// Votes that arrive before the run reaches a gate wait in an Inbox (bounded, in arrival
// order). When the gate opens, Gate.ApplyEarly applies them against the gate's rules as they
// are then; the ones refused are kept in Gate.Refused with the reason.
//
// Groups are resolved by a Directory on the worker side. StaticDirectory is the default: a
// map from group name to members, usually read from a JSON file with LoadDirectory. A
// directory lookup is the only thing here that may touch the outside world, and workflow
// code must get the same answers on replay; the safe pattern is to take a Snapshot of the
// gate's groups once when it opens (in a side effect or local activity), keep it with the
// run, and pass that snapshot to Check and Apply.
//
// Identities are case-sensitive; spaces around them are ignored. Identities and group names
// may not contain spaces or control characters.
package approval
