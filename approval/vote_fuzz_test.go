package approval

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"
)

// FuzzParseVoteKind: vote kinds come from flowctl approve/reject and from Updates. An
// accepted spelling maps to one of the three canonical kinds, which parse to themselves;
// a refusal is a *VoteError with CodeUnknownKind quoting the input.
func FuzzParseVoteKind(f *testing.F) {
	for _, s := range []string{"approve", " Approved ", "reject", "REJECTED", "request_changes", "changes-requested", "changes", "maybe", "", "appr\x00ove"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseVoteKind(s)
		if err != nil {
			var verr *VoteError
			if !errors.As(err, &verr) || verr.Code != CodeUnknownKind || verr.Reason != unknownKindReason(s) {
				t.Fatalf("ParseVoteKind(%q): %T %v", s, err, err)
			}
			return
		}
		if k != Approve && k != Reject && k != RequestChanges {
			t.Fatalf("ParseVoteKind(%q) = %q, not canonical", s, k)
		}
		if again, err := ParseVoteKind(string(k)); err != nil || again != k {
			t.Fatalf("ParseVoteKind(%q) = %q, which parses to %q, %v", s, k, again, err)
		}
	})
}

// FuzzVote: votes arrive as JSON in an Update (gateflow.approval) from anyone who can
// reach the server. Decoding, Validate, Inbox.Add and a gate's Check and Apply never
// panic; a refusal is a *VoteError with a reason; an accepted vote, normalized, validates
// again, survives a JSON round trip unchanged, and Check and Apply agree on it.
func FuzzVote(f *testing.F) {
	for _, s := range []string{
		`{"gate":"ship","vote":"approve","by":"alice"}`,
		`{"gate":"ship","vote":"request_changes","by":"bob","comment":"  "}`,
		`{"gate":"ship","vote":"Rejected","by":" carol ","comment":"no"}`,
		`{"gate":"ship","vote":"approve","by":"group:release"}`,
		`{"gate":"ship","vote":"approve","by":"al ice"}`,
		`{"gate":" ship\u0000","vote":"approve","by":"alice"}`,
		`{"gate":"other","vote":"approve","by":"alice","at":"2026-11-01T00:00:00Z"}`,
		`{"gate":"ship","vote":"approve","by":"\xff"}`,
		`{"gate":"ship","vote":"approve","by":"mallory"}`,
		`[]`, `null`, `{"gate":1}`,
	} {
		f.Add([]byte(s))
	}
	dir := StaticDirectory{"release": {"alice", "bob"}}
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		var v Vote
		if err := json.Unmarshal(data, &v); err != nil {
			return
		}
		var inbox Inbox
		inboxErr := inbox.Add(v)
		nv, verr := v.normalize()
		if verr != nil {
			if verr.Reason == "" || verr.Error() == "" {
				t.Fatalf("vote %s refused without a reason: %#v", data, verr)
			}
			if err := v.Validate(); err == nil {
				t.Fatalf("vote %s: normalize refused it (%v), Validate accepted it", data, verr)
			}
			if inboxErr == nil {
				t.Fatalf("vote %s: malformed (%v), but the inbox kept it", data, verr)
			}
			return
		}
		if err := nv.Validate(); err != nil {
			t.Fatalf("vote %s normalized to %+v, which does not validate: %v", data, nv, err)
		}
		if again, _ := nv.normalize(); !reflect.DeepEqual(again, nv) {
			t.Fatalf("normalize is not idempotent: %+v, then %+v", nv, again)
		}
		b, err := json.Marshal(nv)
		if err != nil {
			t.Fatalf("vote %+v does not encode: %v", nv, err)
		}
		var back Vote
		if err := json.Unmarshal(b, &back); err != nil || back.Validate() != nil {
			t.Fatalf("vote %+v: encoded %s, decoded %+v, %v", nv, b, back, err)
		}
		for _, req := range []Request{{}, {Approvers: []string{"group:release", "dave"}, Required: 2}} {
			g, err := Open(nv.Gate, req, now)
			if err != nil {
				t.Fatalf("open gate %q: %v", nv.Gate, err)
			}
			checkErr := g.Check(v, dir)
			d, applyErr := g.Apply(v, dir)
			if (checkErr == nil) != (applyErr == nil) {
				t.Fatalf("vote %s: Check says %v, Apply says %v", data, checkErr, applyErr)
			}
			if applyErr == nil && nv.Kind != Approve && d == nil {
				t.Fatalf("vote %s (%s) was applied without closing the gate", data, nv.Kind)
			}
		}
	})
}

// FuzzApprover: approver entries come from definitions and Request.Approvers. An accepted
// entry is exactly one of a user or a group, without spaces around; an error quotes it.
func FuzzApprover(f *testing.F) {
	for _, s := range []string{"alice", " group:release ", "group:", "GROUP:x", "group: x", "a b", "", "\x7f", "group:group:x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		user, group, err := parseApprover(s)
		if err != nil {
			if err.Error() == "" || user != "" || group != "" {
				t.Fatalf("parseApprover(%q): %q, %q, %v", s, user, group, err)
			}
			return
		}
		if (user == "") == (group == "") {
			t.Fatalf("parseApprover(%q) = user %q, group %q", s, user, group)
		}
		entry := user
		if group != "" {
			entry = GroupPrefix + group
		}
		if u, g, err := parseApprover(entry); err != nil || u != user || g != group {
			t.Fatalf("parseApprover(%q) = %q, %q; its entry %q parses to %q, %q, %v", s, user, group, entry, u, g, err)
		}
	})
}
