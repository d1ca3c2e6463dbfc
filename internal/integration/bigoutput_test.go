package integration

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/blob"
	"github.com/gateflow/gateflow/internal/proc"
	"github.com/gateflow/gateflow/runs"
)

// bigOutputDef prints 5 MiB of numbered 64-byte lines on stdout and one line on stderr, then
// waits for the gate file, so `flowctl logs -f` can start while the step runs.
const bigOutputDef = `name: test-bigoutput
inputs:
  type: object
  required: [gate]
  properties:
    gate: {type: string}
steps:
  - id: print
    uses: shell
    with:
      command: |
        awk 'BEGIN { for (i = 1; i <= 81920; i++) printf "%063d\n", i }'
        echo the-last-stderr-line >&2
        while [ ! -e '${{ inputs.gate }}' ]; do sleep 0.1; done
`

// bigOutputParentDef runs bigOutputDef as a child run.
const bigOutputParentDef = `name: test-bigoutput-parent
inputs:
  type: object
  required: [gate]
  properties:
    gate: {type: string}
steps:
  - id: sub
    call: test-bigoutput
    with: {gate: "${{ inputs.gate }}"}
`

// bigOutputStdout is what bigOutputDef prints on stdout: exactly 5 MiB.
func bigOutputStdout() string {
	var b strings.Builder
	for i := 1; i <= 81920; i++ {
		fmt.Fprintf(&b, "%063d\n", i)
	}
	return b.String()
}

// startFlowWorker runs the flow-worker binary against the shared server on queue with args
// and returns it once it is ready; it is killed when the test ends.
func startFlowWorker(t *testing.T, queue string, args ...string) *exec.Cmd {
	t.Helper()
	workerBin, _ := binaries(t)
	worker := exec.Command(workerBin, append([]string{"--address", shared.srv.FrontendAddress(),
		"--namespace", shared.srv.Namespace(), "--task-queue", queue, "--stop-timeout", "2s"}, args...)...)
	worker.Env = withoutEnv(os.Environ(), "GATEFLOW_BLOB_URL", "TEMPORAL_ADDRESS", "TEMPORAL_PROFILE")
	stdout, err := worker.StdoutPipe()
	require.NoError(t, err)
	var stderr proc.Buffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("flow-worker stderr: %s", stderr.String())
		}
	})
	worker.Stderr = &stderr
	require.NoError(t, worker.Start())
	t.Cleanup(func() { _ = worker.Process.Kill(); _ = worker.Wait() })
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "flow-worker: ready") {
				ready <- true
			}
		}
		close(ready)
	}()
	select {
	case ok := <-ready:
		require.True(t, ok, "flow-worker exited early: %s", stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("flow-worker not ready: %s", stderr.String())
	}
	return worker
}

// withoutEnv is env without the variables named.
func withoutEnv(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, n := range names {
			keep = keep && name != n
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

// historyPayloads sums the serialized size of every payload in the run's history and
// counts the references to offloaded ones among them.
func historyPayloads(ctx context.Context, t *testing.T, id string) (size, refs int) {
	t.Helper()
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if p, ok := m.Interface().(*commonpb.Payload); ok {
			size += proto.Size(p)
			if blob.IsRef(p) {
				refs++
			}
			return
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				for i := range v.List().Len() {
					walk(v.List().Get(i).Message())
				}
			case fd.IsMap() && fd.MapValue().Message() != nil:
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					walk(mv.Message())
					return true
				})
			case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
				walk(v.Message())
			}
			return true
		})
	}
	it := shared.tc.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		walk(e.ProtoReflect())
	}
	return size, refs
}

func TestBigShellOutputIsCompleteInFlowctlLogsAndTheHistoryStaysSmall(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t, 3*time.Minute)
	_, ctlBin := binaries(t)
	dir := t.TempDir()
	defs := filepath.Join(dir, "flows")
	require.NoError(t, os.MkdirAll(defs, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(defs, "bigoutput.yaml"), []byte(bigOutputDef), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(defs, "parent.yaml"), []byte(bigOutputParentDef), 0o644))
	blobURL := mustFileURL(t, filepath.Join(dir, "blobs"))
	queue := fmt.Sprintf("bigoutput-%d", time.Now().UnixNano())
	startFlowWorker(t, queue, "--blob-url", blobURL, "--flows", defs, "--reload-interval", "0")

	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue, Identity: "tester"})
	gate := filepath.Join(dir, "gate")
	run, err := c.Start(ctx, "test-bigoutput", map[string]string{"gate": gate}, core.StartOptions{})
	require.NoError(t, err)

	// flowctl's environment names no store; TMPDIR hides any dev server's store.
	ctlEnv := append(withoutEnv(os.Environ(), "GATEFLOW_BLOB_URL", "TEMPORAL_ADDRESS", "TEMPORAL_PROFILE", "TMPDIR"),
		"TMPDIR="+t.TempDir())
	flowctl := func(args ...string) *exec.Cmd {
		cmd := exec.Command(ctlBin, append([]string{"--address", shared.srv.FrontendAddress(),
			"--namespace", shared.srv.Namespace(), "--task-queue", queue}, args...)...)
		cmd.Env = ctlEnv
		return cmd
	}
	// logs -f starts while the step runs and prints the full output once it has ended.
	var follow, followErr proc.Buffer
	followCmd := flowctl("--blob-url", blobURL, "logs", run.ID, "print", "-f", "--interval", "100ms")
	followCmd.Stdout, followCmd.Stderr = &follow, &followErr
	require.NoError(t, followCmd.Start())
	t.Cleanup(func() { _ = followCmd.Process.Kill() })
	// The live tail shows the last stdout line (the stderr line may come before it: the two
	// pipes are read apart, so the tail's 50 lines may have lost it).
	last := fmt.Sprintf("%063d\n", 81920)
	require.Eventually(t, func() bool { return strings.Contains(follow.String(), last) },
		60*time.Second, 100*time.Millisecond, "logs -f shows the live tail")
	require.NoError(t, os.WriteFile(gate, nil, 0o644))
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, "%s %s", d.Error, d.StateError)
	require.NoError(t, followCmd.Wait(), followErr.String())

	stdout := bigOutputStdout()
	require.Len(t, stdout, 5<<20)
	want := stdout + "stderr| the-last-stderr-line\n"
	checkFinal := func(what, out string) {
		t.Helper()
		_, final, ok := strings.Cut(out, "--- print shell completed after ")
		require.True(t, ok, "%s prints the ended step: %.2000q", what, out)
		_, final, ok = strings.Cut(final, "\n")
		require.True(t, ok)
		assert.Equal(t, len(want), len(final), "%s: the length of the output", what)
		assert.Equal(t, sha256.Sum256([]byte(want)), sha256.Sum256([]byte(final)), "%s: the SHA-256 of the output", what)
	}
	checkFinal("logs -f", follow.String())

	// logs of the ended step.
	var out, errb bytes.Buffer
	cmd := flowctl("--blob-url", blobURL, "logs", run.ID, "print")
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Run(), errb.String())
	checkFinal("logs", out.String())
	assert.NotContains(t, out.String(), "output cut at")

	// Without the store flowctl says which flag names it.
	out.Reset()
	errb.Reset()
	cmd = flowctl("logs", run.ID, "print")
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "logs without the store: %s", out.String())
	assert.Equal(t, 1, exit.ExitCode())
	assert.Contains(t, errb.String(), "is kept in the workers' blob store, which flowctl has not opened: name it with --blob-url or GATEFLOW_BLOB_URL")
	assert.NotContains(t, errb.String(), "decode")

	// The history holds references, not the output: its payloads stay small.
	size, refs := historyPayloads(ctx, t, run.ID)
	t.Logf("history payloads: %d bytes, %d references", size, refs)
	assert.Less(t, size, 64<<10, "the payloads of the history")
	assert.GreaterOrEqual(t, refs, 1, "the shell result is a reference")

	// The step record keeps a bounded preview.
	require.NotNil(t, d.State)
	var rec *runs.Step
	for i := range d.State.Steps {
		if d.State.Steps[i].Name == "print" {
			rec = &d.State.Steps[i]
		}
	}
	require.NotNil(t, rec, "the print step's record")
	assert.LessOrEqual(t, utf8.RuneCountInString(rec.Output), 200)
	assert.True(t, strings.HasPrefix(stdout, strings.TrimSuffix(rec.Output, "…")), "the preview is the output's head: %q", rec.Output)

	// A step of a child run: CHILD/STEP (the gate is open, so it ends at once).
	parent, err := c.Start(ctx, "test-bigoutput-parent", map[string]string{"gate": gate}, core.StartOptions{})
	require.NoError(t, err)
	pd, err := c.Wait(ctx, parent.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, pd.Status, "%s %s", pd.Error, pd.StateError)
	out.Reset()
	errb.Reset()
	cmd = flowctl("--blob-url", blobURL, "logs", parent.ID, "sub/print")
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Run(), errb.String())
	checkFinal("logs of the child's step", out.String())
}
