package startplan

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/signals"
)

var (
	labelKeyPattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9_.\-]{0,61}[a-z0-9])?$`)
	idPattern       = regexp.MustCompile(`^[^\s/][^\s]{0,399}$`)
)

// ValidateStart checks start options in a fixed, documented order and returns the first
// problem; a start refused here starts nothing. The order: run ID and idempotency key,
// priority, labels, worker tags, concurrency key and limits, start time, max cost and
// budget policy, max attempts. (Before these,
// Start checks the workflow name and that a worker serves it, and the input; after them,
// the monthly quotas.)
func ValidateStart(o core.StartOptions, now time.Time) error {
	if o.ID != "" && !idPattern.MatchString(o.ID) {
		return fmt.Errorf("run ID %q: want 1-400 characters without spaces, not starting with /", o.ID)
	}
	if o.ID != "" && o.IdempotencyKey != "" {
		return fmt.Errorf("give a run ID or an idempotency key, not both")
	}
	if o.IdempotencyKey != "" && (len(o.IdempotencyKey) > 400 || strings.TrimSpace(o.IdempotencyKey) == "") {
		return fmt.Errorf("idempotency key %q: want 1-400 characters", o.IdempotencyKey)
	}
	if o.Priority != 0 && (o.Priority < core.MinPriority || o.Priority > core.MaxPriority) {
		return fmt.Errorf("priority %d: want %d (highest) to %d (lowest)", o.Priority, core.MinPriority, core.MaxPriority)
	}
	if len(o.Labels) > core.MaxLabels {
		return fmt.Errorf("%d labels: at most %d", len(o.Labels), core.MaxLabels)
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
	if o.MaxAttempts < 0 || o.MaxAttempts > core.MaxRunAttempts {
		return fmt.Errorf("max attempts %d: want 1 to %d", o.MaxAttempts, core.MaxRunAttempts)
	}
	return nil
}

// LabelList is the FlowLabels search attribute's value: "k=v", sorted.
func LabelList(labels map[string]string) []string {
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

// WithFlowDefaults merges the flow's start defaults (StartDefaults) into the start's
// options: labels are the union, the start's value winning for the same key; worker tags
// the union, sorted; the priority the start's if it gives one, else the flow's, else
// core.DefaultPriority, clamped to 1..5. A merge with too many labels or tags is refused.
func WithFlowDefaults(info core.WorkflowInfo, opts core.StartOptions) (core.StartOptions, error) {
	if len(info.Labels) > 0 {
		labels := maps.Clone(info.Labels)
		maps.Copy(labels, opts.Labels)
		opts.Labels = labels
		if len(labels) > core.MaxLabels {
			return opts, fmt.Errorf("%d labels with the flow's defaults: at most %d", len(labels), core.MaxLabels)
		}
	}
	if len(info.WorkerTags) > 0 {
		tags := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(opts.WorkerTags), info.WorkerTags...))))
		opts.WorkerTags = tags
		if len(tags) > protocol.MaxWorkerTags {
			return opts, fmt.Errorf("%d worker tags with the flow's (%s): a worker has at most %d, so no worker could take the run",
				len(tags), strings.Join(tags, ", "), protocol.MaxWorkerTags)
		}
	}
	if opts.Priority == 0 {
		opts.Priority = info.Priority
	}
	if opts.Priority == 0 {
		opts.Priority = core.DefaultPriority
	}
	opts.Priority = min(max(opts.Priority, core.MinPriority), core.MaxPriority)
	return opts, nil
}

// validateRunID checks a run ID a caller chose ("" lets gateflow choose) with
// protocol.CheckRunID: the Temporal client sends it in a request header, so it must be
// printable ASCII.
func validateRunID(id string) error {
	if id == "" {
		return nil
	}
	return protocol.CheckRunID(id)
}

// reusePolicy keeps one run per idempotency key, even after it ended.
func reusePolicy(o core.StartOptions) enumspb.WorkflowIdReusePolicy {
	if o.IdempotencyKey != "" {
		return enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
	}
	return enumspb.WORKFLOW_ID_REUSE_POLICY_UNSPECIFIED
}

// EncodeInput is a start's input as compact JSON: nil is null, JSON (json.RawMessage or
// []byte) is checked and compacted, anything else is encoded.
func EncodeInput(input any) (json.RawMessage, error) {
	switch v := input.(type) {
	case nil:
		return json.RawMessage("null"), nil
	case json.RawMessage:
		return validJSON(v)
	case []byte:
		return validJSON(v)
	}
	b, err := json.Marshal(input)
	if err != nil {
		return nil, fmt.Errorf("encode input: %w", err)
	}
	return b, nil
}

func validJSON(b []byte) (json.RawMessage, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return json.RawMessage("null"), nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("input is not valid JSON: %w", err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, fmt.Errorf("input is not valid JSON: %w", err)
	}
	return buf.Bytes(), nil
}

// CheckInput checks raw against a flow's published input schema (see typeschema.For);
// an empty schema accepts anything.
func CheckInput(schema, raw json.RawMessage) error {
	s, err := signals.CompileSchema(schema)
	if err != nil {
		return fmt.Errorf("the published input schema does not compile: %w", err)
	}
	return s.Validate(raw)
}

// NewRunID is a new random run ID for a run of the flow name.
func NewRunID(name string) string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return strings.ReplaceAll(name, "/", "-") + "-" + hex.EncodeToString(b[:])
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.\-/]{0,199}$`)

// ValidateName reports whether name can be a flow name (a Temporal workflow type): 1–200
// letters, digits and "_.-/", starting with a letter or digit.
func ValidateName(name string) error {
	if !namePattern.MatchString(name) {
		return fmt.Errorf("flow name %q: want 1-200 letters, digits or _.-/ starting with a letter or digit", name)
	}
	return nil
}
