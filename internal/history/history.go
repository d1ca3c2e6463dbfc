// Package history exports a run's Temporal history as the JSON that `flowctl history`
// writes and testsuite.Replay reads.
package history

import (
	"context"
	"encoding/json"
	"fmt"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
)

// WorkflowIDField is the top-level field of an exported history that keeps the run's
// workflow ID, which replay needs (child workflow IDs derive from it); Temporal's own
// readers ignore it.
const WorkflowIDField = "gateflowWorkflowId"

// JSON is the Temporal history of run (its latest execution) as indented JSON.
func JSON(ctx context.Context, tc client.Client, run string) ([]byte, error) {
	it := tc.GetWorkflowHistory(ctx, run, "", false, 0)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("history of %s: %w", run, err)
		}
		h.Events = append(h.Events, ev)
	}
	b, err := temporalproto.CustomJSONMarshalOptions{}.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("history of %s: encode: %w", run, err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("history of %s: encode: %w", run, err)
	}
	doc[WorkflowIDField], _ = json.Marshal(run)
	return json.MarshalIndent(doc, "", "  ")
}
