package flowctl

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"go.temporal.io/api/serviceerror"

	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/history"
)

// historyExport is what `history -f FILE -o json` prints.
type historyExport struct {
	Run    string `json:"run"`
	File   string `json:"file"`
	Events int    `json:"events"`
}

func (a *app) historyCommand() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "history RUN [-f FILE]",
		Short: "Export a run's Temporal event history as JSON (for replay tests)",
		Long: "Export the event history of a run (its latest execution) as JSON: the format\n" +
			"`temporal workflow show -o json` writes, plus the top-level field\n" +
			history.WorkflowIDField + " that replay needs. It is what testsuite.RecordHistory\n" +
			"writes and what testsuite.Replay and testsuite.ReplayDir read, so a production run\n" +
			"can become a replay test of the code that will run it next.\n\n" +
			"Without -f the history goes to standard output (it is JSON with either --output).",
		Example: `  flowctl history hello-e39f37c0a7 > hello.json
  flowctl history release-9669e41315 -f testdata/histories/release.json`,
		Args:              exactArgs(1, "RUN"),
		ValidArgsFunction: a.completeRuns,
		RunE: a.runE(nil, func(x call) (view, error) {
			run := x.args[0]
			b, err := x.c.History(x.ctx, run)
			if err != nil {
				var nf *serviceerror.NotFound
				if errors.As(err, &nf) {
					return view{}, &flowclient.RunNotFoundError{ID: run}
				}
				return view{}, err
			}
			if file == "" || file == "-" {
				_, err := fmt.Fprintf(a.stdout, "%s\n", b) // the history itself, in every format
				return view{}, err
			}
			if err := os.WriteFile(file, b, 0o644); err != nil {
				return view{}, fmt.Errorf("write history of %s: %w", run, err)
			}
			out := historyExport{Run: run, File: file, Events: countEvents(b)}
			return view{value: out, text: say("Wrote the history of run %s (%d events) to %s.\n", out.Run, out.Events, out.File)}, nil
		}),
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "write the history to FILE instead of standard output")
	return cmd
}

// countEvents counts the events of a history in JSON.
func countEvents(b []byte) int {
	var h struct {
		Events []json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return 0
	}
	return len(h.Events)
}
