package integration

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/integration/testflows"
	"github.com/gateflow/gateflow/runs"
	"github.com/gateflow/gateflow/signals"
)

// fakeS3 serves the S3 protocol on a loopback port with an in-memory bucket and returns
// the s3:// URL of that bucket. It sets the AWS environment (static credentials, no
// instance metadata) for this process and the worker processes it starts, so the test
// cannot run in parallel.
func fakeS3(t *testing.T, bucket string) string {
	t.Helper()
	backend := s3mem.New()
	require.NoError(t, backend.CreateBucket(bucket))
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ACCESS_KEY_ID", "gateflow")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "gateflow-secret")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	return "s3://" + bucket + "?region=us-east-1&use_path_style=true&disable_https=true&endpoint=" + srv.URL
}

// An artifact made by one step on worker process A is read by the next step on worker
// process B (A has stopped): both share an S3 store. flowctl lists and downloads it, and an
// input no step produced fails its step before dispatch.
func TestArtifactMadeOnOneWorkerIsReadOnAnother(t *testing.T) {
	store := fakeS3(t, "gateflow-artifacts")
	queue := fmt.Sprintf("artifacts-%d", time.Now().UnixNano())
	workerA := startTestworker(t, queue, "--artifacts", store, "--identity", "artifacts-A")

	ctx := ctxT(t, time.Minute)
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})
	content := "line 1\nlíne 2 ✓ $HOME `x` 'q' \"dq\"\n\ttabbed\x01 and no newline at the end"
	run, err := c.Start(ctx, testflows.ArtifactHandoff.Name(), testflows.ArtifactInput{Content: content}, core.StartOptions{})
	require.NoError(t, err)
	d := eventually(t, c, run.ID, "build is done and the run waits for go", waitingFor("signal:go"))
	require.Len(t, d.State.Steps, 2) // build and the signal wait
	build := d.State.Steps[0]
	require.Equal(t, runs.StepCompleted, build.Status, build.Error)
	require.Len(t, build.Artifacts, 2)
	app := build.Artifacts[0]
	assert.Equal(t, "dist/app.txt", app.Name)
	assert.Equal(t, "dist/notes/readme.md", build.Artifacts[1].Name)
	assert.EqualValues(t, len(content), app.Size)
	assert.Regexp(t, `^artifacts/`+run.ID+`/[^/]+/build/1/dist/app\.txt$`, app.Key)

	// Worker A goes away; worker B takes over.
	require.NoError(t, workerA.Process.Signal(syscall.SIGTERM))
	_ = workerA.Wait()
	startTestworker(t, queue, "--artifacts", store, "--identity", "artifacts-B")
	_, err = c.Signal(ctx, run.ID, signals.Envelope{Name: "go", Payload: json.RawMessage(`{}`)})
	require.NoError(t, err)
	d, err = c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	var out string
	require.NoError(t, json.Unmarshal(d.State.Output, &out))
	assert.Equal(t, content, out, "step use printed the artifact byte for byte")
	assert.Equal(t, map[string]string{"build": "artifacts-A", "use": "artifacts-B"}, shellStepWorkers(t, run.ID))

	// flowctl lists the run's artifacts and downloads one.
	r := flowctlRunOn(t, queue, "artifacts", run.ID, "--blob-url", store)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)^STEP\s+NAME\s+SIZE\s+SHA256$`, r.stdout)
	assert.Regexp(t, fmt.Sprintf(`(?m)^build\s+dist/app\.txt\s+%d\s+%s$`, app.Size, app.SHA256), r.stdout)
	r = flowctlRunOn(t, queue, "artifacts", run.ID, "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var rows []struct {
		Step, Name, Key, SHA256 string
		Size                    int64
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows))
	require.Len(t, rows, 2)
	assert.Equal(t, app.Key, rows[0].Key)
	r = flowctlRunOn(t, queue, "artifacts", "get", run.ID, "build", "dist/app.txt", "--blob-url", store)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, content, r.stdout)
	file := filepath.Join(t.TempDir(), "app.txt")
	r = flowctlRunOn(t, queue, "artifacts", "get", run.ID, "build", "dist/app.txt", "--blob-url", store, "--out", file)
	require.Equal(t, 0, r.code, r.stderr)
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, content, string(got))
	r = flowctlRunOn(t, queue, "artifacts", "get", run.ID, "build", "dist/missing.txt", "--blob-url", store)
	assert.Equal(t, 3, r.code, "not found")
	assert.Contains(t, r.stderr, `step build has no artifact "dist/missing.txt": it has dist/app.txt, dist/notes/readme.md`)
	r = flowctlRunOn(t, queue, "show", run.ID, "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `"key": "`+app.Key+`"`, "show -o json has the step's artifacts")

	// An input no earlier step produced fails its step with the name, before dispatch.
	miss, err := c.Start(ctx, testflows.ArtifactMissing.Name(), struct{}{}, core.StartOptions{})
	require.NoError(t, err)
	d, err = c.Wait(ctx, miss.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusFailed, d.Status)
	use := d.State.Steps[len(d.State.Steps)-1]
	assert.Equal(t, "use", use.Name)
	assert.Equal(t, runs.StepFailed, use.Status)
	assert.Equal(t, `artifact "dist/app.txt" of step "build" not found: no earlier step "build" produced it (the closest, build, is completed and produced out.txt)`, use.Error)
	assert.Equal(t, map[string]string{"build": "artifacts-B"}, shellStepWorkers(t, miss.ID), "no activity was scheduled for use")
}

// shellStepWorkers maps each shell activity of a run's history to the identity of the worker
// that started it (the last attempt's).
func shellStepWorkers(t *testing.T, runID string) map[string]string {
	t.Helper()
	ctx := ctxT(t, 10*time.Second)
	scheduled := map[int64]string{}
	who := map[string]string{}
	it := shared.tc.GetWorkflowHistory(ctx, runID, "", false, 0)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			if a.GetActivityType().GetName() == activities.ShellActivity {
				scheduled[ev.GetEventId()] = a.GetActivityId()
			}
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil {
			if id, ok := scheduled[a.GetScheduledEventId()]; ok {
				who[id] = a.GetIdentity()
			}
		}
	}
	return who
}
