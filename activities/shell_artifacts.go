package activities

import (
	"github.com/gateflow/gateflow/artifacts"

	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gateflow/gateflow/internal/artifactname"
	"github.com/gateflow/gateflow/internal/blob"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
)

// Artifacts: files a shell step leaves in its work directory (Shell.Outputs) are uploaded to
// the worker's blob store after the command; files of earlier steps (Shell.Inputs) are
// downloaded into the work directory before it, on whichever worker runs the step.

// Application error types of artifacts.
const (
	// ArtifactsUnavailableErrorType fails a step that declares artifacts on a worker without
	// a blob store (flow.WorkerOptions.BlobURL, flow-worker --blob-url); not retried.
	ArtifactsUnavailableErrorType = "gateflow.ArtifactsUnavailable"
	// ArtifactNotFoundErrorType fails a step whose input no earlier step of the run attempt
	// produced (before dispatch), or whose blob is gone from the store; not retried.
	ArtifactNotFoundErrorType = "gateflow.ArtifactNotFound"
	// ArtifactErrorType fails a step whose declared outputs cannot be collected: a pattern
	// that matched no file, a file over MaxArtifactBytes, a symbolic link; not retried.
	ArtifactErrorType = "gateflow.Artifact"
)

// MaxArtifactBytes bounds one artifact file: artifacts pass through the worker's memory.
const MaxArtifactBytes = 256 << 20

// ArtifactInput is an artifact of an earlier step of the run, placed in the step's work
// directory before the command runs.
type ArtifactInput struct {
	// Step names the producing step (its name, or its ID as runs.Step.ActivityID shows it).
	// The closest earlier step of that name in the same run attempt that produced Name
	// wins.
	Step string `json:"step"`
	// Name is the artifact's name: its path relative to the producer's work directory
	// ("dist/app.txt").
	Name string `json:"name"`
	// Path is where the file goes, relative to the step's work directory; empty: Name.
	Path string `json:"path,omitempty"`
	// Key is the artifact's blob key. The run fills it in when it dispatches the step (it is
	// in the step's input in history); a step given a Key uses it as is.
	Key string `json:"key,omitempty"`
}

// ArtifactStore keeps artifact contents by key; the worker's blob store is one.
type ArtifactStore interface {
	Put(ctx context.Context, key string, data []byte) error
	Get(ctx context.Context, key string) ([]byte, error)
}

type artifactStoreKey struct{}

// WithArtifactStore returns ctx carrying the store shell steps keep artifacts in. A worker
// built with flow.NewWorker and a BlobURL registers RunShell with it; without one, a step
// that declares artifacts fails with ArtifactsUnavailableErrorType.
func WithArtifactStore(ctx context.Context, s ArtifactStore) context.Context {
	return context.WithValue(ctx, artifactStoreKey{}, s)
}

func artifactStoreOf(ctx context.Context) ArtifactStore {
	s, _ := ctx.Value(artifactStoreKey{}).(ArtifactStore)
	return s
}

// HasArtifacts reports whether the step declares inputs or outputs.
func (s Shell) HasArtifacts() bool { return len(s.Inputs) > 0 || len(s.Outputs) > 0 }

// validateArtifacts is the artifact part of Shell.Validate.
func (s Shell) validateArtifacts() error {
	for i, o := range s.Outputs {
		if err := artifactname.Check(o); err != nil {
			return fmt.Errorf("shell: output %d %q %w", i+1, o, err)
		}
		if _, err := path.Match(o, ""); err != nil {
			return fmt.Errorf("shell: output %d %q is not a valid glob: %w", i+1, o, err)
		}
	}
	places := map[string]int{}
	for i, in := range s.Inputs {
		if strings.TrimSpace(in.Step) == "" {
			return fmt.Errorf("shell: input %d (%q) names no step", i+1, in.Name)
		}
		if err := artifactname.Check(in.Name); err != nil {
			return fmt.Errorf("shell: input %d name %q %w", i+1, in.Name, err)
		}
		p := in.place()
		if err := artifactname.Check(p); err != nil {
			return fmt.Errorf("shell: input %d path %q %w", i+1, p, err)
		}
		if j, dup := places[p]; dup {
			return fmt.Errorf("shell: inputs %d and %d both go to %q; give one a Path", j, i+1, p)
		}
		places[p] = i + 1
	}
	return nil
}

// place is where the input goes under the work directory.
func (in ArtifactInput) place() string {
	if in.Path != "" {
		return in.Path
	}
	return in.Name
}

// artifactRun is one attempt's artifact work: its store, work directory and key prefix.
type artifactRun struct {
	store   ArtifactStore
	dir     string
	prefix  string
	tmp     string // a temporary work directory to remove afterwards
	attempt int
}

// transfer runs fn (one download or upload) while heartbeating what it does every second,
// so a big artifact does not outlast the step's heartbeat timeout.
func (a *artifactRun) transfer(ctx context.Context, what string, fn func() error) error {
	if !activity.IsActivity(ctx) {
		return fn()
	}
	beat := func() { heartbeat(ctx, artifacts.LiveOutput{Attempt: a.attempt, Progress: what, At: time.Now()}) }
	beat()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
			beat()
		}
	}
}

// prepareArtifacts gets a step that declares artifacts ready to run: the store, a work
// directory (a fresh temporary one when in.Dir is empty, which it sets) and the inputs in
// place. Nil for a step without artifacts.
func prepareArtifacts(ctx context.Context, in *Shell, attempt int) (*artifactRun, error) {
	if !in.HasArtifacts() {
		return nil, nil
	}
	store := artifactStoreOf(ctx)
	if store == nil {
		return nil, temporal.NewNonRetryableApplicationError(
			"shell: the step declares artifacts but the worker has no blob store to keep them in "+
				"(set flow.WorkerOptions.BlobURL, or flow-worker --blob-url; every worker of the task queue needs the same store)",
			ArtifactsUnavailableErrorType, nil)
	}
	a := &artifactRun{store: store, dir: in.Dir, prefix: artifactPrefix(ctx, attempt), attempt: attempt}
	if a.dir == "" {
		tmp, err := os.MkdirTemp("", "gateflow-step-")
		if err != nil {
			return nil, fmt.Errorf("shell: artifacts: work directory: %w", err)
		}
		a.dir, a.tmp, in.Dir = tmp, tmp, tmp
	}
	for _, input := range in.Inputs {
		if err := a.place(ctx, input); err != nil {
			a.cleanup()
			return nil, err
		}
	}
	return a, nil
}

// place downloads one input into the work directory.
func (a *artifactRun) place(ctx context.Context, in ArtifactInput) error {
	label := in.Step + "/" + in.Name
	if in.Key == "" {
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("shell: input %s has no blob key: it was not resolved when the step was dispatched", label),
			ArtifactNotFoundErrorType, nil)
	}
	var data []byte
	err := a.transfer(ctx, "downloading input "+label, func() (err error) {
		data, err = a.store.Get(ctx, in.Key)
		return err
	})
	if err != nil {
		if isNotFound(err) {
			return temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("shell: input %s: its blob %s is gone from the store", label, in.Key), ArtifactNotFoundErrorType, err)
		}
		return fmt.Errorf("shell: input %s: %w", label, err)
	}
	dst := filepath.Join(a.dir, filepath.FromSlash(in.place()))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("shell: input %s: %w", label, err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		return fmt.Errorf("shell: input %s: %w", label, err)
	}
	return nil
}

// isNotFound matches the blob store's not-found errors.
func isNotFound(err error) bool {
	return errors.Is(err, blob.ErrNotFound) || errors.Is(err, fs.ErrNotExist)
}

// collect uploads the declared outputs. For a step that succeeded, a pattern that matches
// no file or an upload that fails is an error; for one that failed it is best effort (what
// can be collected is, and the rest is left out).
func (a *artifactRun) collect(ctx context.Context, patterns []string, succeeded bool) ([]artifacts.Artifact, error) {
	names, err := collectOutputs(a.dir, patterns)
	if err != nil && succeeded {
		return nil, temporal.NewNonRetryableApplicationError("shell: outputs: "+err.Error(), ArtifactErrorType, nil)
	}
	var out []artifacts.Artifact
	for _, name := range names {
		art, err := a.upload(ctx, name)
		if err != nil {
			if succeeded {
				return out, err
			}
			continue
		}
		out = append(out, art)
	}
	return out, nil
}

func (a *artifactRun) upload(ctx context.Context, name string) (artifacts.Artifact, error) {
	p := filepath.Join(a.dir, filepath.FromSlash(name))
	st, err := os.Stat(p)
	if err != nil {
		return artifacts.Artifact{}, fmt.Errorf("shell: output %s: %w", name, err)
	}
	if st.Size() > MaxArtifactBytes {
		return artifacts.Artifact{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("shell: output %s is %d bytes, over the %d bytes an artifact may have", name, st.Size(), MaxArtifactBytes),
			ArtifactErrorType, nil)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return artifacts.Artifact{}, fmt.Errorf("shell: output %s: %w", name, err)
	}
	key := a.prefix + "/" + name
	if err := a.transfer(ctx, "uploading output "+name, func() error { return a.store.Put(ctx, key, data) }); err != nil {
		return artifacts.Artifact{}, fmt.Errorf("shell: output %s: %w", name, err)
	}
	sum := sha256.Sum256(data)
	return artifacts.Artifact{Name: name, Key: key, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}, nil
}

// cleanup removes a temporary work directory.
func (a *artifactRun) cleanup() {
	if a != nil && a.tmp != "" {
		_ = os.RemoveAll(a.tmp)
	}
}

// collectOutputs lists the files under dir that patterns (slash globs relative to dir, as
// path.Match reads them) match, as sorted slash names relative to dir, each once. A matched
// directory stands for every regular file under it. A pattern that matches nothing, or
// only empty directories, is an error naming it, and so is a matched symbolic link or
// other non-regular file; the names found are returned with the error.
func collectOutputs(dir string, patterns []string) ([]string, error) {
	seen := map[string]bool{}
	var names []string
	var errs []error
	for _, pat := range patterns {
		matches, err := filepath.Glob(filepath.Join(dir, filepath.FromSlash(pat)))
		if err != nil {
			errs = append(errs, fmt.Errorf("output %q: %w", pat, err))
			continue
		}
		found := 0
		for _, m := range matches {
			n, err := collectPath(dir, m, func(name string) {
				if !seen[name] {
					seen[name] = true
					names = append(names, name)
				}
			})
			found += n
			if err != nil {
				errs = append(errs, fmt.Errorf("output %q: %w", pat, err))
			}
		}
		if found == 0 && len(matches) == 0 {
			errs = append(errs, fmt.Errorf("output %q matched no file in the work directory", pat))
		} else if found == 0 {
			errs = append(errs, fmt.Errorf("output %q matched only empty directories", pat))
		}
	}
	sort.Strings(names)
	return names, errors.Join(errs...)
}

// collectPath adds the regular file p, or every regular file under the directory p, and
// says how many it added.
func collectPath(dir, p string, add func(string)) (int, error) {
	rel := func(q string) (string, error) {
		r, err := filepath.Rel(dir, q)
		if err != nil || r == "." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || r == ".." {
			return "", fmt.Errorf("%s is outside the work directory", q)
		}
		return filepath.ToSlash(r), nil
	}
	st, err := os.Lstat(p)
	if err != nil {
		return 0, err
	}
	if !st.IsDir() {
		if !st.Mode().IsRegular() {
			return 0, fmt.Errorf("%s is not a regular file (%s); artifacts are regular files", p, st.Mode().Type())
		}
		name, err := rel(p)
		if err != nil {
			return 0, err
		}
		add(name)
		return 1, nil
	}
	n := 0
	err = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file (%s); artifacts are regular files", q, d.Type())
		}
		name, err := rel(q)
		if err != nil {
			return err
		}
		add(name)
		n++
		return nil
	})
	return n, err
}

// artifactPrefix is the blob key prefix of one attempt's outputs:
// artifacts/<workflow ID>/<run ID>/<step ID>/<attempt>, each part path-escaped.
func artifactPrefix(ctx context.Context, attempt int) string {
	wf, run, step := stepKeyParts(ctx)
	return artifactKeyPrefix(wf, run, step, attempt)
}

// stepKeyParts are the workflow ID, run ID and activity ID of the activity of ctx
// ("local" and "shell" outside one).
func stepKeyParts(ctx context.Context) (wf, run, step string) {
	if activity.IsActivity(ctx) {
		info := activity.GetInfo(ctx)
		return info.WorkflowExecution.ID, info.WorkflowExecution.RunID, info.ActivityID
	}
	return "local", "local", "shell"
}

// artifactKeyPrefix is the blob key prefix of the outputs of one attempt of a step:
// artifacts/<workflowID>/<runID>/<stepID>/<attempt>, each part path-escaped (a step ID
// "group/build" is one part).
func artifactKeyPrefix(workflowID, runID, stepID string, attempt int) string {
	return stepKeyPrefix("artifacts", workflowID, runID, stepID, attempt)
}

// stepKeyPrefix is kind/<workflowID>/<runID>/<stepID>/<attempt>, each part path-escaped.
func stepKeyPrefix(kind, workflowID, runID, stepID string, attempt int) string {
	esc := func(s string) string {
		switch s { // keep every part a valid key part
		case "":
			return "_"
		case ".", "..":
			return strings.ReplaceAll(s, ".", "%2E")
		}
		return url.PathEscape(s)
	}
	return kind + "/" + esc(workflowID) + "/" + esc(runID) + "/" + esc(stepID) + "/" + strconv.Itoa(attempt)
}

// RunShell is the shell step activity. A non-zero exit fails with an application error of
// type ShellExitErrorType whose message carries the exit code and the tail of stderr, and
// whose details are a ShellFailure. Cancelling ctx kills the process group.
//
// A step that declares artifacts gets its inputs placed in its work directory first (a
// fresh temporary directory, removed afterwards, when Dir is empty) and its outputs
// uploaded after the command, from the store WithArtifactStore put in ctx.
func RunShell(ctx context.Context, in Shell) (ShellResult, error) {
	if !in.HasArtifacts() {
		return runShell(ctx, in)
	}
	if err := in.Validate(); err != nil {
		return ShellResult{}, temporal.NewNonRetryableApplicationError(err.Error(), InvalidStepErrorType, nil)
	}
	attempt := 1
	if id, ok := Identity(ctx); ok {
		attempt = id.Attempt
	}
	art, err := prepareArtifacts(ctx, &in, attempt)
	if err != nil {
		return ShellResult{Attempt: attempt}, err
	}
	defer art.cleanup()
	res, runErr := runShell(ctx, in)
	if ctx.Err() != nil {
		return res, runErr // cancelled or timed out as a whole: nothing to collect for
	}
	arts, err := art.collect(ctx, in.Outputs, runErr == nil)
	if runErr == nil {
		res.Artifacts = arts
		return res, err
	}
	return res, withFailureArtifacts(runErr, arts)
}

// withFailureArtifacts adds what a failed step collected to its ShellFailure details.
func withFailureArtifacts(err error, arts []artifacts.Artifact) error {
	var app *temporal.ApplicationError
	if len(arts) == 0 || !errors.As(err, &app) || !app.HasDetails() {
		return err
	}
	var f ShellFailure
	if app.Details(&f) != nil {
		return err
	}
	f.Artifacts = arts
	return temporal.NewApplicationErrorWithOptions(app.Message(), app.Type(),
		temporal.ApplicationErrorOptions{NonRetryable: app.NonRetryable(), Cause: app.Unwrap(), Details: []any{f}})
}
