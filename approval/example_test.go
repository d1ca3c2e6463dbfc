package approval_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/gateflow/gateflow/approval"
)

// A gate that needs two distinct approvals from alice or the release group. The same
// person approving twice counts once; an outsider is refused with a clear message.
func ExampleGate_Apply() {
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	dir := approval.StaticDirectory{"release": {"bob", "carol"}}

	g, err := approval.Open("ship", approval.Request{
		Message:   "Ship v1.4 to production?",
		Approvers: []string{"alice", "group:release"},
		Required:  2,
		Timeout:   24 * time.Hour,
	}, now)
	if err != nil {
		panic(err)
	}

	votes := []approval.Vote{
		{Gate: "ship", Kind: approval.Approve, By: "alice", At: now.Add(time.Minute)},
		{Gate: "ship", Kind: approval.Approve, By: "alice", At: now.Add(2 * time.Minute)},
		{Gate: "ship", Kind: approval.Approve, By: "mallory", At: now.Add(3 * time.Minute)},
		{Gate: "ship", Kind: approval.Approve, By: "bob", Comment: "ship it", At: now.Add(4 * time.Minute)},
	}
	for _, v := range votes {
		duplicate := g.IsDuplicate(v)
		d, err := g.Apply(v, dir)
		switch {
		case err != nil:
			fmt.Println(err)
		case duplicate:
			fmt.Printf("%s: already counted\n", v.By)
		case d != nil:
			fmt.Printf("%s by %s at %s\n", d.Outcome, d.By, d.DecidedAt.Format(time.Kitchen))
		default:
			fmt.Printf("%s: counted, %d more needed, pending %v\n", v.By, g.Remaining(), g.Pending())
		}
	}
	fmt.Println("handler error:", g.Err())
	// Output:
	// alice: counted, 1 more needed, pending [group:release]
	// alice: already counted
	// approval ship: mallory may not decide (approvers: alice, group:release)
	// approved by bob at 9:04AM
	// handler error: <nil>
}

// A rejection closes the gate at once and reaches the handler as an error it may handle;
// a change request carries the comment so the handler can loop back.
func ExampleGate_Err() {
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	for _, v := range []approval.Vote{
		{Gate: "ship", Kind: approval.Reject, By: "alice", Comment: "not ready"},
		{Gate: "ship", Kind: approval.RequestChanges, By: "bob", Comment: "bump the version"},
	} {
		g, _ := approval.Open("ship", approval.Request{Approvers: []string{"alice", "bob"}}, now)
		if _, err := g.Apply(v, nil); err != nil {
			panic(err)
		}
		err := g.Err()
		var changes *approval.ChangesRequestedError
		switch {
		case errors.As(err, &changes):
			fmt.Println("redo with:", changes.Comment())
		case errors.Is(err, approval.ErrRejected):
			fmt.Println(err)
		}
	}
	// Output:
	// approval ship: rejected by alice: not ready
	// redo with: bump the version
}

// A StaticDirectory resolves "group:" approvers without any file.
func ExampleStaticDirectory() {
	dir := approval.StaticDirectory{
		"release":  {"alice", "bob"},
		"security": {"carol"},
	}
	req := approval.Request{Approvers: []string{"dave", "group:release"}}
	for _, who := range []string{"dave", "bob", "carol"} {
		ok, err := req.Allowed(who, dir)
		fmt.Println(who, ok, err)
	}
	_, err := approval.Request{Approvers: []string{"group:ops"}}.Allowed("erin", dir)
	fmt.Println(errors.Is(err, approval.ErrUnknownGroup), err)
	// Output:
	// dave true <nil>
	// bob true <nil>
	// carol false <nil>
	// true resolving group:ops: unknown group "ops" in the approval directory
}

// Votes sent before the run reaches a gate wait in an Inbox and are checked against the
// gate's rules when it opens.
func ExampleInbox() {
	var inbox approval.Inbox
	_ = inbox.Add(approval.Vote{Gate: "ship", Kind: "approved", By: "mallory"})
	_ = inbox.Add(approval.Vote{Gate: "ship", Kind: "approved", By: "alice"})

	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	g, _ := approval.Open("ship", approval.Request{Approvers: []string{"alice"}}, now)
	if d := g.ApplyEarly(inbox.Take("ship"), nil); d != nil {
		fmt.Println(d.Outcome, "by", d.By)
	}
	for _, r := range g.Refused {
		fmt.Println("refused:", r.Reason)
	}
	// Output:
	// approved by alice
	// refused: approval ship: mallory may not decide (approvers: alice)
}

// The deadline decides per OnTimeout; here the run must fail.
func ExampleGate_Expire() {
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	g, _ := approval.Open("ship", approval.Request{Timeout: time.Hour, OnTimeout: approval.FailOnTimeout}, now)
	fmt.Println(g.Expire(now.Add(30*time.Minute)) == nil)
	d := g.Expire(now.Add(time.Hour))
	fmt.Println(d.Outcome, d.By, d.FailRun)
	fmt.Println(g.Err())
	// Output:
	// true
	// timed_out timeout true
	// approval ship: timed out at 2026-05-01T10:00:00Z without a decision; the run fails
}
