package flowctl

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/gateflow/gateflow/runs"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/gateflow/gateflow/activities"
)

// paidAttempt is the "@N" a cost-bearing step's later attempts add to its activity ID.
var paidAttempt = regexp.MustCompile(`@[0-9]+$`)

// historyOutput is the final output of an ended step as its activity returned it, read from
// the run's history: a shell step's whole stdout and stderr (as the step kept them: up to
// the worker's bound per stream, see activities.OutputLimit), an HTTP step's body, an
// agent's text. A result the workers offloaded to the blob store is read from it through
// pr. A step without a completed activity (it failed, was skipped, a child or a custom
// step) has the record's output preview.
func historyOutput(tc client.Client, pr payloadReader) func(ctx context.Context, d *runs.Description, s runs.Step) (string, error) {
	return func(ctx context.Context, d *runs.Description, s runs.Step) (string, error) {
		if s.Status != runs.StepCompleted || (s.Kind != runs.KindShell && s.Kind != runs.KindHTTP && s.Kind != runs.KindAgent) {
			return s.Output, nil
		}
		payload, err := completedResult(ctx, tc, d, s.ActivityID)
		if err != nil || payload == nil {
			return s.Output, err
		}
		if payload, err = pr.resolve(payload, "the step's result"); err != nil {
			return "", err
		}
		return decodeOutput(ctx, s.Kind, payload, pr)
	}
}

// completedResult is the result payload of the step's last completed activity, nil when
// the history has none.
func completedResult(ctx context.Context, tc client.Client, d *runs.Description, activityID string) (*commonpb.Payload, error) {
	scheduled := map[int64]bool{}
	var last *commonpb.Payload
	it := tc.GetWorkflowHistory(ctx, d.ID, d.RunID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("read the history of %s: %w", d.ID, err)
		}
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			id := a.GetActivityId()
			if id == activityID || paidAttempt.ReplaceAllString(id, "") == activityID {
				scheduled[e.GetEventId()] = true
			}
		}
		if a := e.GetActivityTaskCompletedEventAttributes(); a != nil && scheduled[a.GetScheduledEventId()] {
			if ps := a.GetResult().GetPayloads(); len(ps) > 0 {
				last = ps[0]
			}
		}
	}
	return last, nil
}

// decodeOutput is the output in a step's result payload (resolved: not a reference). A
// shell step's streams that the worker kept whole in the blob store
// (activities.ShellResult.StdoutBlob, StderrBlob) are read from it through pr.
func decodeOutput(ctx context.Context, kind runs.StepKind, p *commonpb.Payload, pr payloadReader) (string, error) {
	dc := converter.GetDefaultDataConverter()
	switch kind {
	case runs.KindShell:
		var r activities.ShellResult
		if err := dc.FromPayload(p, &r); err != nil {
			return "", fmt.Errorf("decode the shell result: %w", err)
		}
		return shellOutput(ctx, r, pr)
	case runs.KindHTTP:
		var r activities.HTTPResult
		if err := dc.FromPayload(p, &r); err != nil {
			return "", fmt.Errorf("decode the HTTP result: %w", err)
		}
		return r.Body, nil
	default:
		var r activities.AgentResult
		if err := dc.FromPayload(p, &r); err != nil {
			return "", fmt.Errorf("decode the agent result: %w", err)
		}
		return r.Text, nil
	}
}

// shellOutput is a shell step's stdout, then its stderr lines marked "stderr| ", then a
// line saying where the worker cut them, if it did.
func shellOutput(ctx context.Context, r activities.ShellResult, pr payloadReader) (string, error) {
	stdout, stderr := r.Stdout, r.Stderr
	var err error
	if r.StdoutBlob != nil {
		if stdout, err = pr.readStored(ctx, *r.StdoutBlob, "the step's stdout"); err != nil {
			return "", err
		}
	}
	if r.StderrBlob != nil {
		if stderr, err = pr.readStored(ctx, *r.StderrBlob, "the step's stderr"); err != nil {
			return "", err
		}
	}
	var b strings.Builder
	b.Grow(len(stdout) + len(stderr) + len(stderr)/8 + 64)
	b.WriteString(stdout)
	if stderr != "" {
		if stdout != "" && !strings.HasSuffix(stdout, "\n") {
			b.WriteString("\n")
		}
		for _, line := range strings.Split(strings.TrimRight(stderr, "\n"), "\n") {
			b.WriteString("stderr| " + line + "\n")
		}
	}
	if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") && (r.OutputStoreError != "" || shellOutputCut(r)) {
		b.WriteString("\n")
	}
	if shellOutputCut(r) {
		limit := r.OutputLimit
		if limit == 0 { // a worker from before ShellResult.OutputLimit
			limit = activities.MaxOutputBytes
		}
		fmt.Fprintf(&b, "(output cut at %d bytes per stream)\n", limit)
	}
	if r.OutputStoreError != "" {
		fmt.Fprintf(&b, "(the worker could not keep the whole output in its blob store: %s)\n", r.OutputStoreError)
	}
	return b.String(), nil
}

// shellOutputCut reports whether what the worker kept of a shell step's output lacks part
// of it: a stream cut in the store, or longer than the result with no blob.
func shellOutputCut(r activities.ShellResult) bool {
	if !r.Truncated {
		return false
	}
	if r.StdoutBytes == 0 && r.StderrBytes == 0 && r.StdoutBlob == nil && r.StderrBlob == nil {
		return true // a worker from before the byte counts
	}
	cut := func(preview string, n int64, stored *activities.StoredOutput) bool {
		if stored != nil {
			return stored.Cut
		}
		return n > int64(len(preview))
	}
	return cut(r.Stdout, r.StdoutBytes, r.StdoutBlob) || cut(r.Stderr, r.StderrBytes, r.StderrBlob)
}
