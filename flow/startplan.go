package flow

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gateflow/gateflow/internal/protocol"
)

var (
	labelKeyPattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9_.\-]{0,61}[a-z0-9])?$`)
	idPattern       = regexp.MustCompile(`^[^\s/][^\s]{0,399}$`)
)

// validateStart checks start options in a fixed, documented order and returns the first
// problem; a start refused here starts nothing. The order: run ID and idempotency key,
// priority, labels, worker tags, concurrency key and limits, start time, max cost and
// budget policy, max attempts. (Before these,
// Start checks the workflow name and that a worker serves it, and the input; after them,
// the monthly quotas.)
func validateStart(o StartOptions, now time.Time) error {
	if o.ID != "" && !idPattern.MatchString(o.ID) {
		return fmt.Errorf("run ID %q: want 1-400 characters without spaces, not starting with /", o.ID)
	}
	if o.ID != "" && o.IdempotencyKey != "" {
		return fmt.Errorf("give a run ID or an idempotency key, not both")
	}
	if o.IdempotencyKey != "" && (len(o.IdempotencyKey) > 400 || strings.TrimSpace(o.IdempotencyKey) == "") {
		return fmt.Errorf("idempotency key %q: want 1-400 characters", o.IdempotencyKey)
	}
	if o.Priority != 0 && (o.Priority < MinPriority || o.Priority > MaxPriority) {
		return fmt.Errorf("priority %d: want %d (highest) to %d (lowest)", o.Priority, MinPriority, MaxPriority)
	}
	if len(o.Labels) > MaxLabels {
		return fmt.Errorf("%d labels: at most %d", len(o.Labels), MaxLabels)
	}
	for _, k := range slices.Sorted(maps.Keys(o.Labels)) {
		if !labelKeyPattern.MatchString(k) {
			return fmt.Errorf("label %q: keys are 1-63 lower-case letters, digits and _.- (starting and ending with a letter or digit)", k)
		}
		if v := o.Labels[k]; len(v) > 200 || strings.ContainsAny(v, "\n\r\x00") {
			return fmt.Errorf("label %s: the value is longer than 200 characters or has a line break", k)
		}
	}
	if err := protocol.ValidateTags(o.WorkerTags); err != nil {
		return err
	}
	if len(o.WorkerTags) > protocol.MaxWorkerTags {
		return fmt.Errorf("%d worker tags: a worker has at most %d, so no worker could take the run", len(o.WorkerTags), protocol.MaxWorkerTags)
	}
	if o.ConcurrencyKey != "" && !protocol.TagPattern.MatchString(o.ConcurrencyKey) {
		return fmt.Errorf("concurrency key %q: want 1-63 lower-case letters, digits and _.-", o.ConcurrencyKey)
	}
	for _, g := range slices.Sorted(maps.Keys(o.ConcurrencyLimits)) {
		if !protocol.TagPattern.MatchString(g) {
			return fmt.Errorf("concurrency group %q: want 1-63 lower-case letters, digits and _.-", g)
		}
		if n := o.ConcurrencyLimits[g]; n < 1 {
			return fmt.Errorf("concurrency limit %s=%d: want at least 1", g, n)
		}
	}
	if !o.StartAt.IsZero() && o.Delay != 0 {
		return fmt.Errorf("give a start time or a delay, not both")
	}
	if o.Delay < 0 {
		return fmt.Errorf("delay %s is negative", o.Delay)
	}
	if !o.StartAt.IsZero() && o.StartAt.Before(now.Add(-time.Minute)) {
		return fmt.Errorf("start time %s is in the past", o.StartAt.Format(time.RFC3339))
	}
	if o.MaxCostUSD != nil && o.MaxCostUSD.IsNegative() {
		return fmt.Errorf("max cost %s is negative", o.MaxCostUSD)
	}
	if o.BudgetPause < 0 {
		return fmt.Errorf("budget pause %s is negative", o.BudgetPause)
	}
	if g := o.Guards; g != nil && (g.MaxChildDepth < 0 || g.MaxFanOut < 0 || g.MaxTokens < 0 || g.MaxWallTime < 0 || g.MaxSteps < 0) {
		return fmt.Errorf("guards: a start may only tighten them: give positive limits (0 keeps the flow's), not %+v", *g)
	}
	if o.MaxAttempts < 0 || o.MaxAttempts > MaxRunAttempts {
		return fmt.Errorf("max attempts %d: want 1 to %d", o.MaxAttempts, MaxRunAttempts)
	}
	return nil
}

// labelList is the FlowLabels search attribute's value: "k=v", sorted.
func labelList(labels map[string]string) []string {
	out := make([]string, 0, len(labels))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		out = append(out, k+"="+labels[k])
	}
	return out
}

// idempotentRunID is the run ID of a start with an idempotency key: the same key (for the
// same workflow) always gives the same ID, so Temporal keeps one run per key.
func idempotentRunID(workflow, key string) string {
	sum := sha256.Sum256([]byte(workflow + "\x00" + key))
	return strings.ReplaceAll(workflow, "/", "-") + "-key-" + hex.EncodeToString(sum[:10])
}
