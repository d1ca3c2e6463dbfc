package testsuite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/flow"
)

// Replay replays the recorded history in file (JSON, as `flowctl history` or
// server.RecordHistory write it) against flows as they are now, and returns the error a
// worker would hit: nil, or a non-determinism error naming the event that no longer
// matches the code.
func Replay(file string, opts flow.WorkerOptions, flows ...flow.Definition) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	h, err := client.HistoryFromJSON(bytes.NewReader(b), client.HistoryJSONOptions{})
	if err != nil {
		return fmt.Errorf("replay %s: %w", filepath.Base(file), err)
	}
	var meta map[string]any
	_ = json.Unmarshal(b, &meta)
	id, _ := meta[WorkflowIDField].(string)
	r := worker.NewWorkflowReplayer()
	if err := flow.RegisterWorkflows(r, opts, flows...); err != nil {
		return err
	}
	ro := worker.ReplayWorkflowHistoryOptions{}
	if id != "" {
		ro.OriginalExecution = workflow.Execution{ID: id, RunID: h.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes().GetOriginalExecutionRunId()}
	}
	if err := r.ReplayWorkflowHistoryWithOptions(quietLogger{}, h, ro); err != nil {
		return fmt.Errorf("replay %s: %w", filepath.Base(file), err)
	}
	return nil
}

// ReplayDir replays every *.json history in dir against flows (see Replay), as a subtest
// per file, and fails t on the first non-determinism. An empty or missing dir fails too:
// a replay test that replays nothing proves nothing.
func ReplayDir(t *testing.T, dir string, flows ...flow.Definition) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("testsuite: no recorded histories (*.json) in %s", dir)
	}
	sort.Strings(files)
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			if err := Replay(f, flow.WorkerOptions{}, flows...); err != nil {
				t.Fatal(err)
			}
		})
	}
}
