package flowctl

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/blob"
	"github.com/gateflow/gateflow/runs"
)

// artifactRow is one artifact of `artifacts -o json`.
type artifactRow struct {
	// Step is the producing step's ID in the run (runs.Step.ActivityID); StepName its name.
	Step     string `json:"step"`
	StepName string `json:"step_name"`
	// RunAttempt is the run attempt the step belongs to.
	RunAttempt int `json:"run_attempt"`
	// StepStatus is how the step ended (a failed step lists what it could collect).
	StepStatus runs.StepStatus `json:"step_status"`
	Name       string          `json:"name"`
	Key        string          `json:"key"`
	Size       int64           `json:"size"`
	SHA256     string          `json:"sha256"`
}

func (a *app) artifactsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "artifacts RUN",
		Short: "List the artifacts a run's shell steps produced; artifacts get downloads one",
		Long: "List the files a run's shell steps left for later steps (their declared outputs), with\n" +
			"the producing step's ID, the artifact's name (its path in the step's work directory),\n" +
			"size and SHA-256. A child run's artifacts are listed under the child's run ID.\n\n" +
			"artifacts exits 0 (also when the run has none) and 3 when the run does not exist.",
		Example: `  flowctl artifacts release-9669e41315
  flowctl artifacts release-9669e41315 -o json | jq -r '.[].name'
  flowctl artifacts get release-9669e41315 build dist/app.tar.gz --out app.tar.gz`,
		Args:              exactArgs(1, "RUN"),
		ValidArgsFunction: a.completeRuns,
		RunE: a.runE(nil, func(x call) (view, error) {
			rows, err := runArtifacts(x.ctx, x.c, x.args[0])
			if err != nil {
				return view{}, err
			}
			return view{value: rows, text: func(w io.Writer) error {
				t := newTable(w, "STEP", "NAME", "SIZE", "SHA256")
				for _, r := range rows {
					t.row(r.Step, r.Name, strconv.FormatInt(r.Size, 10), r.SHA256)
				}
				return t.flush()
			}}, nil
		}),
	}
	cmd.AddCommand(a.artifactGetCommand())
	return cmd
}

func (a *app) artifactGetCommand() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "get RUN STEP NAME [--out FILE]",
		Short: "Download one artifact of a run to stdout or a file",
		Long: "Download the artifact NAME that step STEP of run RUN produced, from the blob store the\n" +
			"workers keep artifacts in (--blob-url, " + blobEnv + "; default: the in-memory dev\n" +
			"server's store when it exists). STEP is the step's ID as artifacts lists it (name#N for\n" +
			"a later use of the name), else its name: its latest step that produced NAME.\n\n" +
			"The content is checked against the recorded SHA-256. get exits 0 when it wrote the\n" +
			"artifact, 3 when the run, the step or the artifact does not exist (or the store no\n" +
			"longer holds it), 1 when the store cannot be read.",
		Example: `  flowctl artifacts get release-9669e41315 build dist/app.txt
  flowctl artifacts get release-9669e41315 build dist/app.tar.gz --out app.tar.gz --blob-url s3://gateflow-blobs?region=eu-west-1`,
		Args:              exactArgs(3, "RUN STEP NAME"),
		ValidArgsFunction: a.completeRunSteps,
		RunE: a.runE(nil, func(x call) (view, error) {
			rows, err := runArtifacts(x.ctx, x.c, x.args[0])
			if err != nil {
				return view{}, err
			}
			row, err := pickArtifact(rows, x.args[0], x.args[1], x.args[2])
			if err != nil {
				return view{}, err
			}
			data, err := a.readArtifact(x.ctx, row)
			if err != nil {
				return view{}, err
			}
			if out == "" || out == "-" {
				_, err = a.stdout.Write(data) // the artifact itself, in every format
				return view{}, err
			}
			if err := os.WriteFile(out, data, 0o644); err != nil {
				return view{}, fmt.Errorf("artifacts get: --out: %w", err)
			}
			return view{}, nil
		}),
	}
	cmd.Flags().StringVar(&out, "out", "", "write the artifact to FILE instead of stdout")
	return cmd
}

// runArtifacts lists the artifacts of a run's steps, oldest step first.
func runArtifacts(ctx context.Context, c *flowclient.Client, run string) ([]artifactRow, error) {
	d, err := c.Describe(ctx, run)
	if err != nil {
		return nil, err
	}
	if d.State == nil {
		return nil, fmt.Errorf("artifacts %s: the run's steps cannot be read: %s", d.ID, orDash(d.StateError))
	}
	var rows []artifactRow
	for _, s := range d.State.Steps {
		for _, art := range s.Artifacts {
			rows = append(rows, artifactRow{Step: s.ActivityID, StepName: s.Name, RunAttempt: s.RunAttempt, StepStatus: s.Status,
				Name: art.Name, Key: art.Key, Size: art.Size, SHA256: art.SHA256})
		}
	}
	return rows, nil
}

// pickArtifact is the artifact name of step (an activity ID, else a name: its latest step
// with that artifact).
func pickArtifact(rows []artifactRow, run, step, name string) (artifactRow, error) {
	for _, r := range rows {
		if r.Step == step && r.Name == name {
			return r, nil
		}
	}
	for i := len(rows) - 1; i >= 0; i-- {
		if r := rows[i]; r.StepName == step && r.Name == name {
			return r, nil
		}
	}
	var names []string
	for _, r := range rows {
		if r.Step == step || r.StepName == step {
			names = append(names, r.Name)
		}
	}
	why := "it has none (flowctl artifacts " + run + " lists the run's)"
	if len(names) > 0 {
		why = "it has " + strings.Join(names, ", ")
	}
	return artifactRow{}, &exitError{code: ExitNotFound, err: fmt.Errorf("run %s: step %s has no artifact %q: %s", run, step, name, why)}
}

// readArtifact reads an artifact from the blob store and checks its digest.
func (a *app) readArtifact(ctx context.Context, r artifactRow) ([]byte, error) {
	u := a.blobURL
	if u == "" {
		if st, err := os.Stat(blob.DevTempDir()); err == nil && st.IsDir() {
			u, _ = blob.FileURL(blob.DevTempDir())
		}
	}
	if u == "" {
		return nil, usageErr("artifacts get: no blob store: pass --blob-url (or set %s) to the store the workers use (flow-worker --blob-url)", blobEnv)
	}
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	s, err := blob.Open(octx, u)
	if err != nil {
		return nil, usageErr("--blob-url: %v", err)
	}
	defer func() { _ = s.Close() }()
	data, err := s.Get(ctx, r.Key)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, &exitError{code: ExitNotFound, err: fmt.Errorf("artifact %s of step %s: %w (is --blob-url the workers' store?)", r.Name, r.Step, err)}
	}
	if err != nil {
		return nil, fmt.Errorf("artifact %s of step %s: %w", r.Name, r.Step, err)
	}
	if got := sha256Hex(data); r.SHA256 != "" && got != r.SHA256 {
		return nil, fmt.Errorf("artifact %s of step %s: the store's content has SHA-256 %s, the step recorded %s", r.Name, r.Step, got, r.SHA256)
	}
	return data, nil
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
