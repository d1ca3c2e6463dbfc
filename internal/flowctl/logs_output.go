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
		return decodeOutput(s.Kind, payload)
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

// decodeOutput is the output in a step's result payload (resolved: not a reference).
func decodeOutput(kind runs.StepKind, p *commonpb.Payload) (string, error) {
	dc := converter.GetDefaultDataConverter()
	switch kind {
	case runs.KindShell:
		var r activities.ShellResult
		if err := dc.FromPayload(p, &r); err != nil {
			return "", fmt.Errorf("decode the shell result: %w", err)
		}
		out := r.Stdout
		if r.Stderr != "" {
			if out != "" && !strings.HasSuffix(out, "\n") {
				out += "\n"
			}
			for _, line := range strings.Split(strings.TrimRight(r.Stderr, "\n"), "\n") {
				out += "stderr| " + line + "\n"
			}
		}
		if r.Truncated {
			limit := r.OutputLimit
			if limit == 0 { // a worker from before ShellResult.OutputLimit
				limit = activities.MaxOutputBytes
			}
			out += fmt.Sprintf("(output cut at %d bytes per stream)\n", limit)
		}
		return out, nil
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
