package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"go.temporal.io/sdk/activity"
)

// Stable step identity for the outside world: shell steps get it in their environment,
// HTTP steps send the key in a header, so services can deduplicate at-least-once calls.

// Environment variables a shell step gets from the worker (Shell.Env may not set them).
const (
	// EnvStep is the step's ID in the run: its name, GROUP/NAME inside a branch, with "#N"
	// for its N-th use in the run (runs.Step.ActivityID).
	EnvStep = "GATEFLOW_STEP"
	// EnvAttempt is the attempt of the step (1 for the first).
	EnvAttempt = "GATEFLOW_ATTEMPT"
	// EnvIdempotencyKey is the step's idempotency key (see IdempotencyKey).
	EnvIdempotencyKey = "GATEFLOW_IDEMPOTENCY_KEY"
)

// DefaultIdempotencyHeader is the header an HTTP step sends its idempotency key in, unless
// HTTP.IdempotencyHeader names another.
const DefaultIdempotencyHeader = "Idempotency-Key"

// NoIdempotencyHeader as HTTP.IdempotencyHeader sends no idempotency key.
const NoIdempotencyHeader = "-"

// StepIdentity is who a step is, as the outside world sees it.
type StepIdentity struct {
	// Step is the step's ID in its run (the activity ID).
	Step string `json:"step"`
	// Attempt is the attempt of the step, 1 for the first.
	Attempt int `json:"attempt"`
	// Key is the idempotency key: the same for every attempt of the step, different for
	// every other step and run.
	Key string `json:"key"`
}

// IdempotencyKey is the key of one step of one workflow execution: "gf1-" and 32 hex
// digits of a SHA-256 of the namespace, the workflow ID, the run ID and the step's activity
// ID, so it shows none of them to the service that receives it.
//
// Temporal retries of the step (its attempts) keep the key: they are the same call made
// again. Everything that runs the step anew gets a new key: a run attempt
// (core.StartOptions.MaxAttempts) re-runs the handler in the same execution, and its steps
// have activity IDs of their own ("build#2"); a Goto or a loop that uses a step name again
// does too; a child run has a workflow ID of its own; a reset, a Temporal workflow retry or
// a continue-as-new is a new execution (run ID), whose activity IDs start over. A flow that
// wants a service to deduplicate across those sets the header itself (HTTP.Headers win) or
// passes its own key in the step's environment under another name.
func IdempotencyKey(namespace, workflowID, runID, activityID string) string {
	h := sha256.New()
	for _, part := range []string{namespace, workflowID, runID, activityID} {
		h.Write([]byte(strconv.Itoa(len(part))))
		h.Write([]byte{':'})
		h.Write([]byte(part))
	}
	return "gf1-" + hex.EncodeToString(h.Sum(nil)[:16])
}

// Identity returns the identity of the step whose activity ctx runs; false outside an
// activity (a step function called directly, as in unit tests).
func Identity(ctx context.Context) (StepIdentity, bool) {
	if !activity.IsActivity(ctx) {
		return StepIdentity{}, false
	}
	info := activity.GetInfo(ctx)
	return StepIdentity{
		Step:    info.ActivityID,
		Attempt: int(info.Attempt),
		Key:     IdempotencyKey(info.WorkflowNamespace, info.WorkflowExecution.ID, info.WorkflowExecution.RunID, info.ActivityID),
	}, true
}

// env is the identity as a shell step's environment variables.
func (id StepIdentity) env() map[string]string {
	return map[string]string{
		EnvStep:           id.Step,
		EnvAttempt:        strconv.Itoa(id.Attempt),
		EnvIdempotencyKey: id.Key,
	}
}
