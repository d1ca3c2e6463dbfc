package testsuite

import (
	"context"
	"fmt"
	"os"

	"github.com/gateflow/gateflow/internal/history"
	"go.temporal.io/sdk/client"
)

// WorkflowIDField is the top-level field of a recorded history that keeps the run's
// workflow ID (see history.WorkflowIDField).
const WorkflowIDField = history.WorkflowIDField

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

// HistoryJSON is the history of run as indented JSON (what flowctl history writes).
func HistoryJSON(ctx context.Context, tc client.Client, run string) ([]byte, error) {
	return history.JSON(ctx, tc, run)
}
