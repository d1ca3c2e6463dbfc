package testsuite

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
)

// RecordHistory writes the history of run (its latest execution) to path as JSON, the
// format Replay reads and the Temporal CLI writes (`temporal workflow show -o json`).
func RecordHistory(ctx context.Context, tc client.Client, run, path string) error {
	b, err := HistoryJSON(ctx, tc, run)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("record history of %s: %w", run, err)
	}
	return nil
}

// HistoryJSON is the history of run as indented JSON.
func HistoryJSON(ctx context.Context, tc client.Client, run string) ([]byte, error) {
	it := tc.GetWorkflowHistory(ctx, run, "", false, 0)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("history of %s: %w", run, err)
		}
		h.Events = append(h.Events, ev)
	}
	// The history's own JSON plus the run's workflow ID, which replay needs (child
	// workflow IDs derive from it); Temporal's readers ignore the extra field.
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

// WorkflowIDField is the top-level field of a recorded history that keeps the run's
// workflow ID.
const WorkflowIDField = "gateflowWorkflowId"
