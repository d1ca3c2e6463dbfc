package auth_test

import (
	"fmt"
	"time"

	"github.com/gateflow/gateflow/auth"
)

// A person signs a vote; the run verifies it against the directory it pinned.
func Example() {
	alice, err := auth.NewKey("alice-2026-12", "alice")
	if err != nil {
		panic(err)
	}
	dir, err := auth.NewDirectory(alice.Public())
	if err != nil {
		panic(err)
	}
	hash, err := auth.PayloadHash(map[string]any{"approve": true})
	if err != nil {
		panic(err)
	}
	vote := auth.Decision{Namespace: "default", Run: "ship-42", FirstRunID: "0192b3c4-run-1", Target: "ship", Kind: auth.KindVote, PayloadSHA256: hash, By: "alice"}
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	token, err := auth.Sign(alice, vote, auth.SignOptions{Now: now})
	if err != nil {
		panic(err)
	}

	v, err := dir.Verify(token, vote, auth.VerifyOptions{Now: now.Add(time.Second)})
	fmt.Println(v.By, v.KeyID, v.Method, err)

	// The same token sent with a vote on another run is refused.
	other := vote
	other.Run = "ship-43"
	_, err = dir.Verify(token, other, auth.VerifyOptions{Now: now.Add(time.Second)})
	fmt.Println(err)

	// And so is it on a new run that reuses the workflow ID ship-42.
	again := vote
	again.FirstRunID = "0192b3c4-run-2"
	_, err = dir.Verify(token, again, auth.VerifyOptions{Now: now.Add(time.Second)})
	fmt.Println(err)
	// Output:
	// alice alice-2026-12 signature <nil>
	// decision refused (mismatch): the token signs run "ship-42", not "ship-43"
	// decision refused (mismatch): the token signs run "0192b3c4-run-1" of "ship-42", not "0192b3c4-run-2": another run with the same workflow ID
}
