package approval

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// TimeoutActor is Decision.By when a gate was closed by its deadline rather than by a
// person (Decision.Expired is then set too, so a user who happens to be called "timeout"
// is not confused with it).
const TimeoutActor = "timeout"

// Decision is how a gate closed: the outcome, the votes that counted, when, and who closed
// it. It is part of the step record and of the result ctx.Approval returns, and it
// round-trips through JSON.
type Decision struct {
	// Outcome is approved, rejected, changes_requested or timed_out.
	Outcome Outcome `json:"outcome"`
	// Votes are the votes that counted, in the order they were applied: the distinct
	// approvals and, for Rejected or ChangesRequested, the closing vote last. Repeated
	// approvals are not in it (see Gate.Duplicates). A gate closed by its deadline keeps
	// the approvals it had, which were not enough.
	Votes []Vote `json:"votes,omitempty"`
	// DecidedAt is when the gate closed: the closing vote's time (never before the gate
	// opened, for votes that waited in the Inbox), or the time given to Expire.
	DecidedAt time.Time `json:"decided_at"`
	// By is who closed the gate: the rejecting or change-requesting person, the person
	// whose approval completed the quorum, or TimeoutActor.
	By string `json:"by,omitempty"`
	// Comment is the closing vote's comment: why it was rejected, what to change, or the
	// last approver's remark. Empty for a deadline.
	Comment string `json:"comment,omitempty"`
	// Expired is set when the deadline closed the gate (Outcome Approved or TimedOut).
	Expired bool `json:"expired,omitempty"`
	// FailRun is set when the deadline closed the gate with FailOnTimeout: the run must
	// fail instead of handing the handler an error it could handle.
	FailRun bool `json:"fail_run,omitempty"`
}

// RefusedVote is a vote that waited in the Inbox and was refused when its gate opened
// (ApplyEarly), kept on the gate so people can see why their early vote did not count.
type RefusedVote struct {
	// Vote is the vote as it arrived.
	Vote Vote `json:"vote"`
	// Code says why it was refused.
	Code Code `json:"code"`
	// Reason is the full message, "approval GATE: ...".
	Reason string `json:"reason"`
}

// Gate is one open or closed approval gate: the request with its defaults applied, the
// votes so far and, once closed, the Decision. It is plain data (JSON round-trips), meant
// to live in workflow state and to be shown by a Query. Create it with Open; change it
// only through Apply, ApplyEarly and Expire. It is not safe for concurrent use (workflow
// code runs one coroutine at a time, which is enough).
type Gate struct {
	// Name is the gate's name, as given to ctx.Approval; votes name it.
	Name string `json:"name"`
	// Request is the request with defaults applied: approvers trimmed and listed once,
	// Required at least 1, OnTimeout set.
	Request Request `json:"request"`
	// OpenedAt is when the gate opened (workflow time).
	OpenedAt time.Time `json:"opened_at"`
	// Deadline is OpenedAt + Request.Timeout, or nil without a timeout.
	Deadline *time.Time `json:"deadline,omitempty"`
	// Votes are the votes that counted, in the order applied (one approval per person).
	Votes []Vote `json:"votes,omitempty"`
	// Duplicates are approvals by people who had already approved: kept for the record,
	// not counted.
	Duplicates []Vote `json:"duplicates,omitempty"`
	// Refused are early votes (from the Inbox) refused when the gate opened.
	Refused []RefusedVote `json:"refused,omitempty"`
	// Decision is nil while the gate is open.
	Decision *Decision `json:"decision,omitempty"`
}

// Open opens the gate name with req at now: it validates the name and the request (errors
// read "approval NAME: ...") and applies the defaults. The deadline, if any, is now +
// req.Timeout. Votes that arrived early are applied next with ApplyEarly.
func Open(name string, req Request, now time.Time) (*Gate, error) {
	if err := checkGateName(name); err != nil {
		return nil, fmt.Errorf("approval: %w", err)
	}
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("approval %s: %w", name, err)
	}
	g := &Gate{Name: name, Request: req.normalized(), OpenedAt: now}
	if req.Timeout > 0 {
		deadline := now.Add(req.Timeout)
		g.Deadline = &deadline
	}
	return g, nil
}

// Closed reports whether the gate has a Decision.
func (g *Gate) Closed() bool { return g.Decision != nil }

// Check is the Update Validator: it reports whether v may be applied to g now, and never
// changes g. It refuses, with a *VoteError naming the gate and the person, a malformed
// vote (see Vote.Validate), a vote for another gate (CodeWrongGate), any vote once the gate
// is closed (CodeClosed: "approval ship: already closed (approved at 2026-…)"), and a vote
// from someone the request does not allow (CodeNotAllowed: "approval ship: mallory may not
// decide (approvers: alice, group:release)"; CodeDirectory when the answer depends on a
// group that dir could not resolve). A repeated approval by the same person passes Check: Apply keeps it
// as a duplicate without counting it.
func (g *Gate) Check(v Vote, dir Directory) error {
	if _, err := g.check(v, dir); err != nil {
		return err
	}
	return nil
}

// check is Check returning the normalized vote.
func (g *Gate) check(v Vote, dir Directory) (Vote, *VoteError) {
	nv, verr := v.normalize()
	if verr != nil {
		if verr.Code != CodeNoGate {
			verr.Gate = g.Name
		}
		return Vote{}, verr
	}
	fail := func(code Code, reason string) (Vote, *VoteError) {
		return Vote{}, &VoteError{Gate: g.Name, By: nv.By, Code: code, Reason: reason}
	}
	if nv.Gate != g.Name {
		return fail(CodeWrongGate, fmt.Sprintf("%s's vote is for gate %q, not this one", nv.By, nv.Gate))
	}
	if nv.HasArguments() && g.Request.Tool == nil {
		return fail(CodeBadArguments, fmt.Sprintf("%s's vote carries edited arguments, but this gate is not a tool call's", nv.By))
	}
	if d := g.Decision; d != nil {
		return fail(CodeClosed, fmt.Sprintf("already closed (%s at %s); %s's vote was not counted",
			describeOutcome(*d), d.DecidedAt.UTC().Format(time.RFC3339), nv.By))
	}
	ok, err := g.Request.Allowed(nv.By, dir)
	if ok {
		return nv, nil
	}
	if err != nil {
		e := &VoteError{Gate: g.Name, By: nv.By, Code: CodeDirectory, Err: err,
			Reason: fmt.Sprintf("cannot tell whether %s may decide: %v", nv.By, err)}
		return Vote{}, e
	}
	return fail(CodeNotAllowed, fmt.Sprintf("%s may not decide (approvers: %s)", nv.By, strings.Join(g.Request.Approvers, ", ")))
}

// Apply checks v like Check and, if it passes, records it: an approval counts once per
// person (a repeat goes to Duplicates and changes nothing; IsDuplicate tells beforehand),
// and the gate closes as Approved when Required distinct people have approved; a rejection
// closes it as Rejected and a change request as ChangesRequested, whatever approvals came
// before. It returns the Decision when this vote closed the gate, nil while it stays open,
// and the *VoteError, with g unchanged, when v is refused.
//
// The vote's At is its arrival time; the Decision is dated At, or OpenedAt for an early
// vote that arrived before the gate opened.
func (g *Gate) Apply(v Vote, dir Directory) (*Decision, error) {
	nv, verr := g.check(v, dir)
	if verr != nil {
		return nil, verr
	}
	if g.IsDuplicate(nv) {
		g.Duplicates = append(g.Duplicates, nv)
		return nil, nil
	}
	g.Votes = append(g.Votes, nv)
	var outcome Outcome
	switch nv.Kind {
	case Reject:
		outcome = Rejected
	case RequestChanges:
		outcome = ChangesRequested
	default:
		if len(g.Approvals()) < g.Request.quorum() {
			return nil, nil
		}
		outcome = Approved
	}
	at := nv.At
	if at.Before(g.OpenedAt) {
		at = g.OpenedAt
	}
	g.Decision = &Decision{Outcome: outcome, Votes: slices.Clone(g.Votes), DecidedAt: at, By: nv.By, Comment: nv.Comment}
	return g.decision(), nil
}

// ApplyEarly applies votes that waited in the Inbox for this gate (Inbox.Take), in order,
// against the gate's rules as they are now, and returns the Decision if they closed it.
// Each refused vote, including those that come after the one that closed the gate, is
// kept in Refused with its reason instead of being returned as an error, since nobody is
// waiting on it.
func (g *Gate) ApplyEarly(votes []Vote, dir Directory) *Decision {
	var closed *Decision
	for _, v := range votes {
		d, err := g.Apply(v, dir)
		if err != nil {
			refused := RefusedVote{Vote: v, Reason: err.Error()}
			var verr *VoteError
			if errors.As(err, &verr) {
				refused.Code = verr.Code
			}
			g.Refused = append(g.Refused, refused)
			continue
		}
		if d != nil {
			closed = d
		}
	}
	return closed
}

// IsDuplicate reports whether v is an approval by someone whose approval already counts
// at this gate: Apply would keep it in Duplicates and change nothing. The update handler
// can use it to tell the voter "already counted". It does not check anything else.
func (g *Gate) IsDuplicate(v Vote) bool {
	kind, err := ParseVoteKind(string(v.Kind))
	if err != nil || kind != Approve {
		return false
	}
	return slices.Contains(g.Approvals(), strings.TrimSpace(v.By))
}

// Expire applies the deadline when now has reached it and the gate is still open, and
// returns the Decision; it returns nil (and changes nothing) for a closed gate, a gate
// without a deadline, or a now before the deadline. Per Request.OnTimeout:
//
//   - RejectOnTimeout: Outcome TimedOut; Err gives a *TimedOutError the handler may handle.
//   - ApproveOnTimeout: Outcome Approved; Err gives nil.
//   - FailOnTimeout: Outcome TimedOut with FailRun set; the run must fail.
//
// In every case By is TimeoutActor, Expired is set, DecidedAt is now and Votes holds the
// approvals that were not enough.
func (g *Gate) Expire(now time.Time) *Decision {
	if g.Decision != nil || g.Deadline == nil || now.Before(*g.Deadline) {
		return nil
	}
	d := &Decision{Outcome: TimedOut, Votes: slices.Clone(g.Votes), DecidedAt: now, By: TimeoutActor, Expired: true}
	switch g.Request.onTimeout() {
	case ApproveOnTimeout:
		d.Outcome = Approved
	case FailOnTimeout:
		d.FailRun = true
	}
	g.Decision = d
	return g.decision()
}

// Approvals returns the people whose approval counts so far, in the order they approved.
func (g *Gate) Approvals() []string {
	var out []string
	for _, v := range g.Votes {
		if v.Kind == Approve {
			out = append(out, v.By)
		}
	}
	return out
}

// Remaining is how many more distinct approvals the gate needs; 0 once it is closed.
func (g *Gate) Remaining() int {
	if g.Decision != nil {
		return 0
	}
	return max(g.Request.quorum()-len(g.Approvals()), 0)
}

// Pending returns, for display, who may still decide: the listed approvers in the order
// listed, without the users who have already approved; group entries stay (as
// "group:NAME") since other members may still vote. It returns nil for a closed gate and
// for a gate anyone may decide (no approvers listed); tell those apart with Closed.
func (g *Gate) Pending() []string {
	if g.Decision != nil {
		return nil
	}
	approved := g.Approvals()
	var out []string
	for _, a := range g.Request.Approvers {
		if user, _, err := parseApprover(a); err == nil && user != "" && slices.Contains(approved, user) {
			continue
		}
		out = append(out, a)
	}
	return out
}

// decision returns a copy of g.Decision (with its own Votes slice), so callers cannot
// change the gate through it.
func (g *Gate) decision() *Decision {
	d := *g.Decision
	d.Votes = slices.Clone(d.Votes)
	return &d
}

// describeOutcome says how a decision closed a gate, in words: "approved",
// "rejected by alice", "changes requested by bob", "timed out".
func describeOutcome(d Decision) string {
	switch {
	case d.Expired && d.Outcome == Approved:
		return "approved at its deadline"
	case d.Expired:
		return "timed out"
	case d.Outcome == Rejected:
		return "rejected by " + d.By
	case d.Outcome == ChangesRequested:
		return "changes requested by " + d.By
	}
	return string(d.Outcome)
}
