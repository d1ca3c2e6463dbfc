package testsuite

import (
	"context"
	"fmt"
	"os"

	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/flow"
)

// WorkflowIDField is the top-level field of a recorded history that keeps the run's
// workflow ID (see flow.WorkflowIDField).
const WorkflowIDField = flow.WorkflowIDField

// RecordHistory writes the history of run (its latest execution) to path as JSON, the
// format Replay reads and `flowctl history` writes.
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

// HistoryJSON is the history of run as indented JSON (flow.HistoryJSON).
func HistoryJSON(ctx context.Context, tc client.Client, run string) ([]byte, error) {
	return flow.HistoryJSON(ctx, tc, run)
}
