package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/blob"
	"github.com/gateflow/gateflow/testsuite"
)

// cachedBuild appends a line to its input's file (a real process) under a step cache.
var cachedBuild = flow.Define("test.cache.build", func(ctx *flow.Context, file string) (string, error) {
	res, err := ctx.Shell("build", activities.Shell{Command: fmt.Sprintf("echo ran >> %q && echo built", file)},
		flow.Cache("build-v1", 10*time.Minute))
	return strings.TrimSpace(res.Stdout), err
})

// lineCount is how many lines file has (0 when missing).
func lineCount(t *testing.T, file string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(data), "\n")
}

func cachedStep(t *testing.T, d *runs.Description, name string) runs.Step {
	t.Helper()
	require.NotNil(t, d.State, d.StateError)
	return stepNamed(t, d.State.Steps, name)
}

// A cached shell step runs once across two runs of the flow: the second run's step is
// recorded cached with its age, costs nothing, and flowctl show says so.
func TestCacheShellStepRunsOnceAcrossRuns(t *testing.T) {
	t.Parallel()
	u, err := blob.FileURL(t.TempDir())
	require.NoError(t, err)
	queue := uniqueQueue("cache")
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, StopTimeout: time.Second, BlobURL: u}, cachedBuild)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue, Identity: "tester"})
	file := filepath.Join(t.TempDir(), "runs.txt")
	ctx := ctxT(t, time.Minute)

	runOnce := func() *runs.Description {
		run, err := c.Start(ctx, cachedBuild.Name(), file, core.StartOptions{})
		require.NoError(t, err)
		d, err := c.Wait(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
		assert.JSONEq(t, `"built"`, string(d.Result))
		return d
	}
	first := runOnce()
	assert.Equal(t, 1, lineCount(t, file))
	assert.False(t, cachedStep(t, first, "build").Cached)

	second := runOnce()
	assert.Equal(t, 1, lineCount(t, file), "the second run reused the result: the command did not run again")
	s := cachedStep(t, second, "build")
	assert.Equal(t, runs.StepCompleted, s.Status)
	assert.True(t, s.Cached, "the step is recorded cached")
	assert.GreaterOrEqual(t, s.CachedAgeMS, int64(0))
	assert.True(t, s.CostUSD.IsZero())
	assert.True(t, second.State.CostUSD.IsZero(), "a cached step costs the run nothing")
	assert.Regexp(t, `^cached (<1s|\d+s) ago`, s.Detail(100))

	// Both runs replay: the lookup's answer is in the history.
	for _, d := range []*runs.Description{first, second} {
		hist := filepath.Join(t.TempDir(), "history.json")
		require.NoError(t, testsuite.RecordHistory(ctx, shared.tc, d.ID, hist))
		assert.NoError(t, testsuite.Replay(hist, flow.WorkerOptions{}, cachedBuild), "the history of %s replays", d.ID)
	}

	r := run(t, queue, "show", second.ID)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `build .*cached (<1s|\d+s) ago`, r.stdout)
}

// A definition's cache: renders its key: the same input reuses the result, another
// input runs the step.
func TestCacheDefinitionStep(t *testing.T) {
	t.Parallel()
	u, err := blob.FileURL(t.TempDir())
	require.NoError(t, err)
	queue := uniqueQueue("cache-def")
	def := `
name: cache-greet
inputs:
  type: object
  properties:
    who: {type: string}
    file: {type: string}
steps:
  - id: greet
    uses: shell
    with:
      command: "echo ${{ inputs.who }} >> '${{ inputs.file }}' && echo hello ${{ inputs.who }}"
    cache: {key: "greet-${{ inputs.who }}", ttl: 10m}
`
	c, _ := serveDefs(t, queue, []string{def}, flow.WorkerOptions{BlobURL: u})
	file := filepath.Join(t.TempDir(), "greets.txt")
	ctx := ctxT(t, time.Minute)
	var ids []string
	runOnce := func(who string) runs.Step {
		run, err := c.Start(ctx, "cache-greet", map[string]string{"who": who, "file": file}, core.StartOptions{})
		require.NoError(t, err)
		d, err := c.Wait(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
		ids = append(ids, d.ID)
		return cachedStep(t, d, "greet")
	}
	assert.False(t, runOnce("ada").Cached)
	s := runOnce("ada")
	assert.True(t, s.Cached, "the same key reuses the result")
	assert.Contains(t, s.Detail(100), "hello ada")
	assert.False(t, runOnce("bob").Cached, "another key runs the step")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "ada\nbob\n", string(data))
	replayDef(t, ids[1], def) // the hit replays
}
