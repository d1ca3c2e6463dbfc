package approval

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Outcome is how a gate closed. It is recorded in the Decision, in the step record and in
// the result the handler sees, and its string values are stable (they appear in JSON and in
// flowctl output).
type Outcome string

const (
	// Approved: the gate got its Required distinct approvals, or its deadline passed with
	// OnTimeout set to ApproveOnTimeout.
	Approved Outcome = "approved"
	// Rejected: an allowed person rejected. One rejection closes the gate whatever
	// approvals came before it.
	Rejected Outcome = "rejected"
	// ChangesRequested: an allowed person asked for changes, with a comment saying what to
	// change. The handler usually loops back and opens the gate again.
	ChangesRequested Outcome = "changes_requested"
	// TimedOut: the deadline passed before the gate closed, with OnTimeout set to
	// RejectOnTimeout (the default) or FailOnTimeout.
	TimedOut Outcome = "timed_out"
)

// VoteStatus is how a gate stands after a vote, as the vote's sender learns it: the vote
// was kept for a gate the run has not reached (VoteQueued), counted with more approvals
// needed (VoteOpen), a repeat of this person's earlier vote (VoteDuplicate), or it closed
// the gate with an Outcome (VoteStatus(outcome)).
type VoteStatus string

// Vote statuses besides the outcomes.
const (
	VoteQueued    VoteStatus = "queued"
	VoteOpen      VoteStatus = "open"
	VoteDuplicate VoteStatus = "duplicate"
)

// OnTimeout says what a gate's deadline does when it passes with the gate still open. The
// empty value means RejectOnTimeout. It has no effect on a gate without a Timeout.
type OnTimeout string

const (
	// RejectOnTimeout (the default) closes the gate as TimedOut; the handler gets a
	// *TimedOutError that it may handle, like a rejection.
	RejectOnTimeout OnTimeout = "reject"
	// ApproveOnTimeout closes the gate as Approved without anyone's vote: the Decision's
	// By is TimeoutActor and Expired is set. Use it for "go ahead unless someone objects".
	ApproveOnTimeout OnTimeout = "approve"
	// FailOnTimeout closes the gate as TimedOut with Decision.FailRun set: the run must
	// fail rather than let the handler carry on.
	FailOnTimeout OnTimeout = "fail"
)

// GroupPrefix marks an approver entry (or an input's assignee, see signals.InputRequest)
// that names a group rather than a user: "group:release" means every member of the
// directory group "release".
const GroupPrefix = "group:"

// MaxNameLen is the longest identity, group name or gate name accepted, in bytes.
const MaxNameLen = 256

// Request is what a handler asks of people at a gate: ctx.Approval(name, Request{...}).
// The zero value (apart from Message) is a valid request that anyone may approve alone,
// with no deadline.
type Request struct {
	// Message is the question, one line, shown in lists ("Ship v1.4 to production?").
	Message string `json:"message,omitempty"`
	// Details is Markdown shown to approvers under the message: what changed, links,
	// the results of earlier steps.
	Details string `json:"details,omitempty"`
	// Approvers says who may decide: user names ("alice") and group names
	// ("group:release", resolved by a Directory). Empty means anyone with an identity may
	// decide. Entries are trimmed, and repeated entries count once.
	Approvers []string `json:"approvers,omitempty"`
	// Required is the quorum: how many distinct people must approve before the gate
	// closes as Approved. 0 means 1. When Approvers lists only users, it may not exceed
	// the number of distinct users listed.
	Required int `json:"required,omitempty"`
	// Timeout is how long the gate waits from the moment it opens; 0 means no deadline.
	// In JSON it is a number of nanoseconds.
	Timeout time.Duration `json:"timeout,omitempty"`
	// OnTimeout says what the deadline does; empty means RejectOnTimeout.
	OnTimeout OnTimeout `json:"on_timeout,omitempty"`
	// Tool is set on the gate an agent loop opens before a tool call that needs approval
	// (flow.ToolApproval): the call people decide on. An approval may then carry edited
	// arguments (Vote.Arguments).
	Tool *ToolCall `json:"tool,omitempty"`
}

// Validate reports the first problem with the request, as a sentence without the gate's
// name (Open adds it): a negative Required or Timeout, an unknown OnTimeout, an approver
// entry that is empty or not a valid user or group name ("group:" alone, "Group:x", a name
// with spaces), or a Required larger than the number of distinct users when Approvers lists
// only users. Groups are not resolved here, so a quorum that a group could not meet is only
// found out when votes arrive.
func (r Request) Validate() error {
	if r.Required < 0 {
		return fmt.Errorf("required is %d; want 0 (meaning 1) or more", r.Required)
	}
	if r.Timeout < 0 {
		return fmt.Errorf("timeout is %s; want 0 (no deadline) or more", r.Timeout)
	}
	switch r.OnTimeout {
	case "", RejectOnTimeout, ApproveOnTimeout, FailOnTimeout:
	default:
		return fmt.Errorf("on_timeout %q is not one of reject, approve or fail", string(r.OnTimeout))
	}
	if r.Tool != nil && strings.TrimSpace(r.Tool.Name) == "" {
		return fmt.Errorf("the tool call has no tool name")
	}
	users := map[string]bool{}
	groups := 0
	for _, raw := range r.Approvers {
		user, group, err := parseApprover(raw)
		if err != nil {
			return err
		}
		if group != "" {
			groups++
		} else {
			users[user] = true
		}
	}
	if groups == 0 && len(users) > 0 && r.quorum() > len(users) {
		return fmt.Errorf("required is %d but only %d distinct approvers are listed (%s)",
			r.Required, len(users), strings.Join(r.normalized().Approvers, ", "))
	}
	return nil
}

// Allowed reports whether the person by may decide at a gate with this request: true when
// Approvers is empty (anyone may decide), when by is a listed user, or when by is a member
// of a listed group according to dir. Identities are compared exactly (case-sensitive)
// after trimming spaces; an empty identity is never allowed.
//
// Users are checked first and groups only when needed, in the order listed. A group that
// dir cannot resolve (unknown, or dir is nil) only matters when no other entry allows the
// person: then Allowed returns false and an error naming the group, wrapping dir's error
// (errors.Is(err, ErrUnknownGroup) for a StaticDirectory that lacks the group).
func (r Request) Allowed(by string, dir Directory) (bool, error) {
	by = strings.TrimSpace(by)
	if by == "" {
		return false, nil
	}
	if len(r.Approvers) == 0 {
		return true, nil
	}
	var groups []string
	for _, raw := range r.Approvers {
		user, group, err := parseApprover(raw)
		switch {
		case err != nil:
			continue // Validate refuses such requests; an unusable entry allows nobody.
		case group != "":
			groups = append(groups, group)
		case user == by:
			return true, nil
		}
	}
	var firstErr error
	for _, group := range groups {
		if dir == nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("no directory to resolve %s%s", GroupPrefix, group)
			}
			continue
		}
		members, err := dir.Members(group)
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("resolving %s%s: %w", GroupPrefix, group, err)
			}
			continue
		}
		for _, m := range members {
			if strings.TrimSpace(m) == by {
				return true, nil
			}
		}
	}
	return false, firstErr
}

// Groups returns the group names (without GroupPrefix) listed in Approvers, trimmed, each
// once, in the order listed. It is what a Snapshot of the directory needs to cover.
func (r Request) Groups() []string {
	var out []string
	seen := map[string]bool{}
	for _, raw := range r.Approvers {
		if _, group, err := parseApprover(raw); err == nil && group != "" && !seen[group] {
			seen[group] = true
			out = append(out, group)
		}
	}
	return out
}

// quorum is the effective number of distinct approvals needed: Required, at least 1.
func (r Request) quorum() int {
	if r.Required < 1 {
		return 1
	}
	return r.Required
}

// onTimeout is the effective timeout policy: OnTimeout, RejectOnTimeout when empty.
func (r Request) onTimeout() OnTimeout {
	if r.OnTimeout == "" {
		return RejectOnTimeout
	}
	return r.OnTimeout
}

// normalized returns a copy with approvers trimmed and each listed once (first occurrence
// kept, order kept), Required at least 1 and OnTimeout set. Invalid entries are kept as
// they are; call it on validated requests.
func (r Request) normalized() Request {
	out := r
	out.Approvers = nil
	seen := map[string]bool{}
	for _, raw := range r.Approvers {
		a := strings.TrimSpace(raw)
		if !seen[a] {
			seen[a] = true
			out.Approvers = append(out.Approvers, a)
		}
	}
	out.Required = r.quorum()
	out.OnTimeout = r.onTimeout()
	return out
}

// parseApprover splits one Approvers entry into a user or a group name (exactly one is
// set), trimming spaces, or says what is wrong with it.
func parseApprover(raw string) (user, group string, err error) {
	a := strings.TrimSpace(raw)
	if a == "" {
		return "", "", fmt.Errorf("an approver entry is empty")
	}
	if hasGroupPrefix(a) {
		if !strings.HasPrefix(a, GroupPrefix) {
			return "", "", fmt.Errorf("approver %q: write the group prefix in lower case (%s)", a, GroupPrefix)
		}
		group = strings.TrimSpace(a[len(GroupPrefix):])
		if group == "" {
			return "", "", fmt.Errorf("approver %q names no group (want %sNAME)", a, GroupPrefix)
		}
		if err := checkName("group name", group); err != nil {
			return "", "", fmt.Errorf("approver %q: %w", a, err)
		}
		return "", group, nil
	}
	if err := checkName("user name", a); err != nil {
		return "", "", fmt.Errorf("approver %q: %w", a, err)
	}
	return a, "", nil
}

// checkName refuses an identity, group name or gate name that is empty, too long, or
// contains spaces or control characters. what names the kind of name in the message.
func checkName(what, s string) error {
	if s == "" {
		return fmt.Errorf("%s is empty", what)
	}
	if len(s) > MaxNameLen {
		return fmt.Errorf("%s is %d bytes long; the limit is %d", what, len(s), MaxNameLen)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s %q is not valid UTF-8", what, s)
	}
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Errorf("%s %q contains a space or control character", what, s)
		}
	}
	return nil
}

// hasGroupPrefix reports whether s starts with GroupPrefix in any case.
func hasGroupPrefix(s string) bool {
	return len(s) >= len(GroupPrefix) && strings.EqualFold(s[:len(GroupPrefix)], GroupPrefix)
}
