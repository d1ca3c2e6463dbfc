package approval

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gateflow/gateflow/auth"
	"github.com/gateflow/gateflow/internal/strictjson"
)

// VoteKind is what a person decides at a gate. Only the three canonical values below are
// recorded; ParseVoteKind also accepts the usual spellings people type.
type VoteKind string

const (
	// Approve counts towards the gate's quorum (once per person).
	Approve VoteKind = "approve"
	// Reject closes the gate as Rejected at once.
	Reject VoteKind = "reject"
	// RequestChanges closes the gate as ChangesRequested at once. It needs a comment
	// saying what to change.
	RequestChanges VoteKind = "request_changes"
)

// MaxCommentLen is the longest vote comment accepted, in bytes. Votes end up in workflow
// history, so a comment is a remark, not a document.
const MaxCommentLen = 16 << 10

// ParseVoteKind reads a vote kind as people and scripts write it, ignoring case and
// surrounding spaces: "approve" or "approved"; "reject" or "rejected"; "request_changes",
// "request-changes", "changes", "changes_requested" or "changes-requested". Anything else
// is a *VoteError with Code CodeUnknownKind: `approval: unknown vote "maybe" (want approve,
// reject or request_changes)`.
func ParseVoteKind(s string) (VoteKind, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "approve", "approved":
		return Approve, nil
	case "reject", "rejected":
		return Reject, nil
	case "request_changes", "request-changes", "changes", "changes_requested", "changes-requested":
		return RequestChanges, nil
	}
	return "", &VoteError{Code: CodeUnknownKind, Reason: unknownKindReason(s)}
}

func unknownKindReason(s string) string {
	return fmt.Sprintf("unknown vote %q (want approve, reject or request_changes)", s)
}

// Vote is one person's decision at one gate, as it arrives in an Update (or is kept in an
// Inbox until the gate opens). Kind may be any spelling ParseVoteKind accepts; Check and
// Apply record the canonical kind, and Gate, By and Comment trimmed of surrounding spaces.
type Vote struct {
	// Gate is the name of the gate voted on (the name given to ctx.Approval).
	Gate string `json:"gate"`
	// Kind is approve, reject or request_changes.
	Kind VoteKind `json:"vote"`
	// By is the voter's identity (flowctl --as, FLOW_USER, else the OS user).
	By string `json:"by"`
	// Comment is why; required for request_changes.
	Comment string `json:"comment,omitempty"`
	// Arguments, on an approval of a tool call's gate (Request.Tool), are the approver's
	// edited arguments: the tool runs with them instead of the model's. They must be one
	// JSON object (no key repeated) of at most MaxArgumentsLen bytes that fits the tool's
	// schema; a signed vote's proof covers them.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// At is when the vote arrived, stamped by the workflow (workflow time), not by the
	// voter.
	At time.Time `json:"at,omitzero"`
	// Proof is the voter's signed decision or identity provider token (package auth), for
	// runs whose worker verifies decisions. Runs check it on arrival and keep Verified
	// instead; the Update in history keeps the proof for audits.
	Proof string `json:"proof,omitempty"`
	// Verified is what the run verified about the voter, stamped by the workflow; nil for
	// an unverified vote.
	Verified *auth.Verified `json:"verified,omitempty"`
}

// UnmarshalJSON decodes a vote strictly (package strictjson): a key that is not exactly
// one of the vote's field names (an unknown key, or "By" beside "by"), or a key given
// twice, is an error, so the server's Authorizer, the run and flowctl audit read the same
// voter from the same bytes.
func (v *Vote) UnmarshalJSON(b []byte) error {
	type plain Vote
	if err := strictjson.Unmarshal(b, (*plain)(v)); err != nil {
		return fmt.Errorf("approval: vote: %w", err)
	}
	return nil
}

// Validate checks the form of the vote on its own, without any gate's rules: a gate name,
// an identity (not a "group:" name, no spaces or control characters), a known kind, a
// comment for request_changes, and a comment no longer than MaxCommentLen. The error is a
// *VoteError. Inbox.Add uses it for votes whose gate is not open yet; Gate.Check runs it
// first.
func (v Vote) Validate() error {
	if _, err := v.normalize(); err != nil {
		return err
	}
	return nil
}

// normalize validates the form of v and returns it with the canonical kind and trimmed
// fields.
func (v Vote) normalize() (Vote, *VoteError) {
	out := v
	out.Gate = strings.TrimSpace(v.Gate)
	out.By = strings.TrimSpace(v.By)
	out.Comment = strings.TrimSpace(v.Comment)
	fail := func(code Code, reason string) (Vote, *VoteError) {
		return Vote{}, &VoteError{Gate: out.Gate, By: out.By, Code: code, Reason: reason}
	}
	if out.Gate == "" {
		return fail(CodeNoGate, "a vote needs the name of the gate it is for")
	}
	if err := checkGateName(out.Gate); err != nil {
		return fail(CodeNoGate, "the vote's "+err.Error())
	}
	if out.By == "" {
		return fail(CodeNoIdentity, "a vote needs an identity")
	}
	if hasGroupPrefix(out.By) {
		return fail(CodeBadIdentity, fmt.Sprintf("%q is a group; a vote is cast by one person", out.By))
	}
	if err := checkName("identity", out.By); err != nil {
		return fail(CodeBadIdentity, err.Error())
	}
	kind, err := ParseVoteKind(string(v.Kind))
	if err != nil {
		return fail(CodeUnknownKind, unknownKindReason(string(v.Kind)))
	}
	out.Kind = kind
	if kind == RequestChanges && out.Comment == "" {
		return fail(CodeEmptyComment, out.By+" asked for changes without a comment; say what to change")
	}
	if len(out.Comment) > MaxCommentLen {
		return fail(CodeCommentTooLong, fmt.Sprintf("%s's comment is %d bytes long; the limit is %d", out.By, len(out.Comment), MaxCommentLen))
	}
	if code, reason := out.checkArguments(kind); code != "" {
		return fail(code, reason)
	}
	return out, nil
}

// checkGateName refuses a gate name that is empty, too long, not UTF-8 or holds control
// characters. Unlike identities, gate names may contain spaces (they are step names).
func checkGateName(name string) error {
	if name == "" || strings.TrimSpace(name) != name {
		return fmt.Errorf("gate name %q is empty or has surrounding spaces", name)
	}
	if len(name) > MaxNameLen {
		return fmt.Errorf("gate name is %d bytes long; the limit is %d", len(name), MaxNameLen)
	}
	if !utf8.ValidString(name) {
		return fmt.Errorf("gate name %q is not valid UTF-8", name)
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return fmt.Errorf("gate name %q contains a control character", name)
		}
	}
	return nil
}

// Code classifies a refused vote, for callers that branch on why (flowctl exit codes,
// metrics). Its values are stable strings.
type Code string

const (
	// CodeNoGate: the vote names no gate, or an invalid gate name.
	CodeNoGate Code = "no_gate"
	// CodeWrongGate: the vote names another gate than the one it was applied to.
	CodeWrongGate Code = "wrong_gate"
	// CodeNoIdentity: the vote has no identity.
	CodeNoIdentity Code = "no_identity"
	// CodeBadIdentity: the identity is a group name or contains spaces or control
	// characters.
	CodeBadIdentity Code = "invalid_identity"
	// CodeUnknownKind: the vote is not approve, reject or request_changes.
	CodeUnknownKind Code = "unknown_kind"
	// CodeEmptyComment: request_changes without a comment.
	CodeEmptyComment Code = "empty_comment"
	// CodeCommentTooLong: the comment exceeds MaxCommentLen.
	CodeCommentTooLong Code = "comment_too_long"
	// CodeClosed: the gate has already closed.
	CodeClosed Code = "closed"
	// CodeNotAllowed: the voter is not among the gate's approvers.
	CodeNotAllowed Code = "not_allowed"
	// CodeDirectory: the voter could only be allowed through a group the directory could
	// not resolve. VoteError.Err holds the directory's error.
	CodeDirectory Code = "directory_error"
	// CodeInboxFull: the vote arrived before its gate opened and the Inbox is full.
	CodeInboxFull Code = "inbox_full"
)

// VoteError is a refused vote: the gate, the person, a Code to branch on and a Reason
// that completes the sentence "approval GATE: ...". Check, Apply, ApplyEarly, Inbox.Add
// and ParseVoteKind return it; a refused vote never changes a gate (Check is the Update
// Validator, so a refused vote leaves no trace in history).
type VoteError struct {
	// Gate is the gate's name (empty when the vote named none).
	Gate string
	// By is the voter's identity as given, trimmed (may be empty).
	By string
	// Code says why the vote was refused.
	Code Code
	// Reason is the human sentence, e.g. "mallory may not decide (approvers: alice,
	// group:release)".
	Reason string
	// Err is the underlying error, for CodeDirectory; nil otherwise.
	Err error
}

// Error reads "approval GATE: REASON", or "approval: REASON" when there is no gate.
func (e *VoteError) Error() string {
	if e.Gate == "" {
		return "approval: " + e.Reason
	}
	return "approval " + e.Gate + ": " + e.Reason
}

// Unwrap returns the directory error behind a CodeDirectory refusal.
func (e *VoteError) Unwrap() error { return e.Err }

// VoteResult is what a vote sent to a run returns (the Update gateflow.approval): how its
// gate stands now.
type VoteResult struct {
	Gate string `json:"gate"`
	// Status is VoteQueued (the run has not reached the gate yet), VoteOpen
	// (counted; more approvals needed), VoteDuplicate (this person had already approved) or
	// the gate's outcome when this vote closed it.
	Status    VoteStatus `json:"status"`
	Approvals int        `json:"approvals"`
	Required  int        `json:"required"`
	Decision  *Decision  `json:"decision,omitempty"`
}
