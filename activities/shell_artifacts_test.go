package activities

import (
	"github.com/gateflow/gateflow/artifacts"

	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/gateflow/gateflow/internal/blob"
)

func TestShellValidateArtifacts(t *testing.T) {
	tests := []struct {
		name    string
		in      Shell
		wantErr string
	}{
		{"outputs and inputs", Shell{Command: "true", Outputs: []string{"dist/*.txt", "report.json"},
			Inputs: []ArtifactInput{{Step: "build", Name: "dist/app.txt"}, {Step: "build", Name: "a", Path: "in/a"}}}, ""},
		{"absolute output", Shell{Command: "true", Outputs: []string{"/etc/passwd"}},
			`shell: output 1 "/etc/passwd" is absolute; want a path relative to the work directory, like dist/app.txt`},
		{"dot-dot output", Shell{Command: "true", Outputs: []string{"ok", "../x"}}, `shell: output 2 "../x" has a ".." part; want a path inside the work directory`},
		{"empty output", Shell{Command: "true", Outputs: []string{""}}, `shell: output 1 "" is empty`},
		{"trailing slash", Shell{Command: "true", Outputs: []string{"dist/"}}, `shell: output 1 "dist/" has an empty part (// or a trailing /)`},
		{"backslash", Shell{Command: "true", Outputs: []string{`dist\a`}}, `shell: output 1 "dist\\a" has a backslash; use / between directories`},
		{"bad glob", Shell{Command: "true", Outputs: []string{"dist/[a"}}, `shell: output 1 "dist/[a" is not a valid glob: syntax error in pattern`},
		{"input without step", Shell{Command: "true", Inputs: []ArtifactInput{{Name: "a"}}}, `shell: input 1 ("a") names no step`},
		{"input with dot-dot name", Shell{Command: "true", Inputs: []ArtifactInput{{Step: "b", Name: "a/../../x"}}},
			`shell: input 1 name "a/../../x" has a ".." part; want a path inside the work directory`},
		{"input with absolute path", Shell{Command: "true", Inputs: []ArtifactInput{{Step: "b", Name: "a", Path: "/tmp/a"}}},
			`shell: input 1 path "/tmp/a" is absolute; want a path relative to the work directory, like dist/app.txt`},
		{"two inputs in one place", Shell{Command: "true", Inputs: []ArtifactInput{{Step: "b", Name: "a"}, {Step: "c", Name: "a"}}},
			`shell: inputs 1 and 2 both go to "a"; give one a Path`},
		{"control character", Shell{Command: "true", Outputs: []string{"a\nb"}}, `shell: output 1 "a\nb" has a control character`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assertValidation(t, tt.in.Validate(), tt.wantErr) })
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

func TestCollectOutputs(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"dist/app.txt": "a", "dist/sub/deep.bin": "b", "report.json": "{}", "notes.md": "n"})
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "empty"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(dir, "notes.md"), filepath.Join(dir, "link.md")))

	tests := []struct {
		name     string
		patterns []string
		want     []string
		wantErr  string
	}{
		{"one file", []string{"report.json"}, []string{"report.json"}, ""},
		{"glob", []string{"*.json", "*.md"}, []string{"notes.md", "report.json"}, "output \"*.md\": " + filepath.Join(dir, "link.md") + " is not a regular file (L---------); artifacts are regular files"},
		{"directory is every file under it", []string{"dist"}, []string{"dist/app.txt", "dist/sub/deep.bin"}, ""},
		{"overlapping patterns count a file once", []string{"dist/*", "dist/app.txt"}, []string{"dist/app.txt", "dist/sub/deep.bin"}, ""},
		{"nothing matched", []string{"report.json", "missing/*.txt"}, []string{"report.json"}, `output "missing/*.txt" matched no file in the work directory`},
		{"only an empty directory", []string{"empty"}, nil, `output "empty" matched only empty directories`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := collectOutputs(dir, tt.patterns)
			assert.Equal(t, tt.want, got)
			assertValidation(t, err, tt.wantErr)
		})
	}
}

// memStore is an ArtifactStore in memory.
type memStore struct {
	mu   sync.Mutex
	data map[string][]byte
}

func (m *memStore) Put(_ context.Context, key string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.data == nil {
		m.data = map[string][]byte{}
	}
	m.data[key] = append([]byte(nil), data...)
	return nil
}

func (m *memStore) Get(_ context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.data[key]
	if !ok {
		return nil, &blob.NotFoundError{Key: key, Store: "mem"}
	}
	return d, nil
}

func (m *memStore) keys() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ks []string
	for k := range m.data {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func appErrorOf(t *testing.T, err error, typ string) *temporal.ApplicationError {
	t.Helper()
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "want an application error, got %v", err)
	assert.Equal(t, typ, app.Type())
	return app
}

func TestRunShellArtifactsRoundTrip(t *testing.T) {
	store := &memStore{}
	ctx := WithArtifactStore(context.Background(), store)
	res, err := RunShell(ctx, Shell{Command: "mkdir -p dist && printf 'hello\\n' > dist/app.txt && pwd > where", Outputs: []string{"dist/*"}})
	require.NoError(t, err)
	sum := sha256.Sum256([]byte("hello\n"))
	key := "artifacts/local/local/shell/1/dist/app.txt"
	assert.Equal(t, []artifacts.Artifact{{Name: "dist/app.txt", Key: key, Size: 6, SHA256: hex.EncodeToString(sum[:])}}, res.Artifacts)
	assert.Equal(t, []string{key}, store.keys())

	// The next step gets it in its own (temporary) work directory, under a path of its own.
	res, err = RunShell(ctx, Shell{Command: "cat in/app.txt; pwd",
		Inputs: []ArtifactInput{{Step: "build", Name: "dist/app.txt", Path: "in/app.txt", Key: key}}})
	require.NoError(t, err)
	lines := splitLines(res.Stdout)
	require.Len(t, lines, 2)
	assert.Equal(t, "hello", lines[0])
	_, statErr := os.Stat(lines[1])
	assert.True(t, os.IsNotExist(statErr), "the temporary work directory %s is removed afterwards", lines[1])

	// A Dir of its own is used as is, and kept.
	dir := t.TempDir()
	_, err = RunShell(ctx, Shell{Command: "test -f dist/app.txt", Dir: dir, Inputs: []ArtifactInput{{Step: "build", Name: "dist/app.txt", Key: key}}})
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(dir, "dist", "app.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hello\n", string(got))
}

func splitLines(s string) []string { return strings.Split(strings.TrimSpace(s), "\n") }

func TestRunShellArtifactFailures(t *testing.T) {
	t.Run("no store", func(t *testing.T) {
		_, err := RunShell(context.Background(), Shell{Command: "true", Outputs: []string{"x"}})
		app := appErrorOf(t, err, ArtifactsUnavailableErrorType)
		assert.True(t, app.NonRetryable())
		assert.Contains(t, app.Message(), "set flow.WorkerOptions.BlobURL, or flow-worker --blob-url")
	})
	t.Run("steps without artifacts need no store", func(t *testing.T) {
		_, err := RunShell(context.Background(), Shell{Command: "true"})
		assert.NoError(t, err)
	})
	ctx := WithArtifactStore(context.Background(), &memStore{})
	t.Run("an output that matches nothing fails a successful step", func(t *testing.T) {
		_, err := RunShell(ctx, Shell{Command: "true", Outputs: []string{"dist/*.tar.gz"}})
		app := appErrorOf(t, err, ArtifactErrorType)
		assert.Equal(t, `shell: outputs: output "dist/*.tar.gz" matched no file in the work directory`, app.Message())
		assert.True(t, app.NonRetryable())
	})
	t.Run("a failed step keeps what it collected", func(t *testing.T) {
		_, err := RunShell(ctx, Shell{Command: "echo partial > log.txt; exit 3", Outputs: []string{"log.txt", "missing"}})
		app := appErrorOf(t, err, ShellExitErrorType)
		var f ShellFailure
		require.NoError(t, app.Details(&f))
		assert.Equal(t, 3, f.ExitCode)
		require.Len(t, f.Artifacts, 1)
		assert.Equal(t, "log.txt", f.Artifacts[0].Name)
		assert.EqualValues(t, 8, f.Artifacts[0].Size)
	})
	t.Run("a timed-out step keeps what it collected", func(t *testing.T) {
		_, err := RunShell(ctx, Shell{Command: "echo partial > log.txt; sleep 5", Timeout: 300 * time.Millisecond, Outputs: []string{"log.txt"}})
		app := appErrorOf(t, err, ShellTimeoutErrorType)
		var f ShellFailure
		require.NoError(t, app.Details(&f))
		require.Len(t, f.Artifacts, 1)
		assert.Equal(t, "log.txt", f.Artifacts[0].Name)
	})
	t.Run("an input gone from the store", func(t *testing.T) {
		_, err := RunShell(ctx, Shell{Command: "true", Inputs: []ArtifactInput{{Step: "build", Name: "a", Key: "artifacts/x/y/build/1/a"}}})
		app := appErrorOf(t, err, ArtifactNotFoundErrorType)
		assert.Equal(t, "shell: input build/a: its blob artifacts/x/y/build/1/a is gone from the store", app.Message())
	})
	t.Run("an unresolved input", func(t *testing.T) {
		_, err := RunShell(ctx, Shell{Command: "true", Inputs: []ArtifactInput{{Step: "build", Name: "a"}}})
		appErrorOf(t, err, ArtifactNotFoundErrorType)
	})
}

func TestArtifactKeyPrefix(t *testing.T) {
	assert.Equal(t, "artifacts/wf/run/build/2", artifactKeyPrefix("wf", "run", "build", 2))
	assert.Equal(t, "artifacts/wf/run/review%2Fbuild%232/1", artifactKeyPrefix("wf", "run", "review/build#2", 1))
	assert.Equal(t, "artifacts/_/%2E%2E/%2E/1", artifactKeyPrefix("", "..", ".", 1))
}

// slowStore is a memStore whose Get takes a while.
type slowStore struct {
	memStore
	delay time.Duration
}

func (s *slowStore) Get(ctx context.Context, key string) ([]byte, error) {
	time.Sleep(s.delay)
	return s.memStore.Get(ctx, key)
}

func TestArtifactTransfersHeartbeat(t *testing.T) {
	store := &slowStore{delay: 1500 * time.Millisecond}
	require.NoError(t, store.Put(context.Background(), "artifacts/k/app", []byte("app")))
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(func(ctx context.Context, in Shell) (ShellResult, error) {
		return RunShell(WithArtifactStore(ctx, store), in)
	}, activity.RegisterOptions{Name: ShellActivity})
	var mu sync.Mutex
	var progress []string
	env.SetOnActivityHeartbeatListener(func(_ *activity.Info, d converter.EncodedValues) {
		var lo artifacts.LiveOutput
		if d.HasValues() && d.Get(&lo) == nil && lo.Progress != "" {
			mu.Lock()
			progress = append(progress, lo.Progress)
			mu.Unlock()
		}
	})
	val, err := env.ExecuteActivity(ShellActivity, Shell{Command: "cat app", Inputs: []ArtifactInput{{Step: "build", Name: "app", Key: "artifacts/k/app"}}})
	require.NoError(t, err)
	var res ShellResult
	require.NoError(t, val.Get(&res))
	assert.Equal(t, "app", res.Stdout)
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, progress, "a download heartbeats while it runs")
	assert.Equal(t, "downloading input build/app", progress[0])
}
