package flow

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/internal/blob"
)

// cacheEnv is newUnitEnv with the cache activities on the file store at url ("" for a
// worker without a store).
func cacheEnv(t *testing.T, url string, flows ...Definition) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	env := newUnitEnv(t, runConfig{}, flows...)
	a := &cacheActivities{url: url}
	env.RegisterActivityWithOptions(a.lookup, activity.RegisterOptions{Name: cacheLookupActivity})
	env.RegisterActivityWithOptions(a.put, activity.RegisterOptions{Name: cacheStoreActivity})
	return env
}

func tempStore(t *testing.T) string {
	t.Helper()
	u, err := blob.FileURL(t.TempDir())
	require.NoError(t, err)
	return u
}

func cachedShellFlow(name string, opt StepOption) Definition {
	return Define(name, func(ctx *Context, _ none) (string, error) {
		res, err := ctx.Shell("build", activities.Shell{Command: "build"}, opt)
		return res.Stdout, err
	})
}

// runCached runs f once in a fresh environment on the store and returns the result, the
// state and how often the shell step ran.
func runCached(t *testing.T, url string, f Definition) (string, runs.State, int) {
	t.Helper()
	env := cacheEnv(t, url, f)
	calls := mockShell(env, func(activities.Shell) (activities.ShellResult, error) {
		return activities.ShellResult{Stdout: "built", Attempt: 1}, nil
	})
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	var out string
	require.NoError(t, env.GetWorkflowResult(&out))
	return out, queryState(t, env), len(calls.all())
}

func TestCacheMissRunsAndStoresThenHitReusesWithoutRunning(t *testing.T) {
	url := tempStore(t)
	f := cachedShellFlow("unit/cache", Cache("build-v1", 10*time.Minute))
	out, st, n := runCached(t, url, f)
	assert.Equal(t, "built", out)
	assert.Equal(t, 1, n, "a miss runs the step")
	assert.False(t, stepByName(t, st, "build").Cached)

	out, st, n = runCached(t, url, f)
	assert.Equal(t, "built", out, "the hit returns the stored result")
	assert.Equal(t, 0, n, "a hit does not run the step")
	s := stepByName(t, st, "build")
	assert.Equal(t, runs.StepCompleted, s.Status)
	assert.True(t, s.Cached)
	assert.Contains(t, s.Detail(100), "cached ")
	assert.Contains(t, s.Detail(100), " ago")
}

func TestCacheKeysArePerFlowUnlessShared(t *testing.T) {
	url := tempStore(t)
	_, _, n := runCached(t, url, cachedShellFlow("unit/cache-a", Cache("k", time.Hour)))
	assert.Equal(t, 1, n)
	_, _, n = runCached(t, url, cachedShellFlow("unit/cache-b", Cache("k", time.Hour)))
	assert.Equal(t, 1, n, "another flow's entry of the same key is not used")

	_, _, n = runCached(t, url, cachedShellFlow("unit/cache-c", SharedCache("k", time.Hour)))
	assert.Equal(t, 1, n)
	_, st, n := runCached(t, url, cachedShellFlow("unit/cache-d", SharedCache("k", time.Hour)))
	assert.Equal(t, 0, n, "a shared key is shared across flows")
	assert.True(t, stepByName(t, st, "build").Cached)
}

func TestCacheExpiredEntryIsAMiss(t *testing.T) {
	url := tempStore(t)
	s, err := blob.Open(context.Background(), url)
	require.NoError(t, err)
	defer s.Close()
	cs := &cacheSpec{key: "old", ttl: 10 * time.Minute}
	data, err := json.Marshal(cacheEntry{StoredAt: time.Now().Add(-time.Hour), Result: json.RawMessage(`{"stdout":"stale"}`)})
	require.NoError(t, err)
	require.NoError(t, s.Put(context.Background(), cacheBlobKey("unit/cache-old", cs), data))

	out, st, n := runCached(t, url, cachedShellFlow("unit/cache-old", Cache("old", 10*time.Minute)))
	assert.Equal(t, 1, n, "an entry older than the ttl is a miss")
	assert.Equal(t, "built", out)
	assert.False(t, stepByName(t, st, "build").Cached)
	// The miss overwrote the entry: it is fresh now.
	out, _, n = runCached(t, url, cachedShellFlow("unit/cache-old", Cache("old", 10*time.Minute)))
	assert.Equal(t, 0, n)
	assert.Equal(t, "built", out)
}

func TestCacheHitOfAPaidStepCostsNothing(t *testing.T) {
	url := tempStore(t)
	f := Define("unit/cache-agent", func(ctx *Context, _ none) (string, error) {
		a, err := ctx.Agent("summarize", activities.Agent{Prompt: "p", Model: "m", MaxBudgetUSD: dec("0.50")}, Cache("sum", time.Hour))
		return a.Text, err
	})
	run := func() (string, runs.State, int) {
		env := cacheEnv(t, url, f)
		calls := mockAgent(env, func(activities.Agent) (activities.AgentResult, error) {
			return activities.AgentResult{Text: "summary", CostUSD: dec("0.05"), CostKnown: true, Attempt: 1}, nil
		})
		env.ExecuteWorkflow(f.Name(), none{})
		require.NoError(t, env.GetWorkflowError())
		var out string
		require.NoError(t, env.GetWorkflowResult(&out))
		return out, queryState(t, env), len(calls.all())
	}
	out, st, n := run()
	assert.Equal(t, "summary", out)
	assert.Equal(t, 1, n)
	assert.Equal(t, "0.05", st.Budget.Spent.String())

	out, st, n = run()
	assert.Equal(t, "summary", out)
	assert.Equal(t, 0, n, "the hit makes no agent call")
	s := stepByName(t, st, "summarize")
	assert.True(t, s.Cached)
	assert.True(t, s.CostUSD.IsZero(), "a hit costs nothing: %s", s.CostUSD)
	assert.True(t, st.Budget.Spent.IsZero(), "nothing charged: %s", st.Budget.Spent)
	assert.True(t, st.Budget.Reserved.IsZero(), "nothing reserved: %s", st.Budget.Reserved)
	assert.Empty(t, s.Attempts, "no attempt made")
}

func TestCacheWithoutAStoreFailsTheStepBeforeDispatch(t *testing.T) {
	f := cachedShellFlow("unit/cache-none", Cache("k", time.Hour))
	env := cacheEnv(t, "", f)
	calls := mockShell(env, func(activities.Shell) (activities.ShellResult, error) {
		return activities.ShellResult{Stdout: "built"}, nil
	})
	env.ExecuteWorkflow(f.Name(), none{})
	err := env.GetWorkflowError()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no blob store")
	assert.Empty(t, calls.all(), "the step is not dispatched")
	s := stepByName(t, queryState(t, env), "build")
	assert.Equal(t, runs.StepFailed, s.Status)
	assert.Contains(t, s.Error, "WorkerOptions.BlobURL")
}

func TestCacheRejectsAnEmptyKeyAndABadTTL(t *testing.T) {
	for _, opt := range []StepOption{Cache(" ", time.Hour), Cache("k", 0)} {
		f := cachedShellFlow("unit/cache-bad", opt)
		env := cacheEnv(t, tempStore(t), f)
		mockShell(env, func(activities.Shell) (activities.ShellResult, error) { return activities.ShellResult{}, nil })
		env.ExecuteWorkflow(f.Name(), none{})
		err := env.GetWorkflowError()
		require.Error(t, err)
		assert.Regexp(t, "key is empty|ttl must be positive", err.Error())
	}
}

func TestCacheInParallelAndOnACustomStep(t *testing.T) {
	url := tempStore(t)
	f := Define("unit/cache-par", func(ctx *Context, _ none) (string, error) {
		res, err := ctx.Parallel("wave", WaitAll,
			AgentStep("a", activities.Agent{Prompt: "a", Model: "m", MaxBudgetUSD: dec("0.20")}, Cache("a", time.Hour)),
			ShellStep("s", activities.Shell{Command: "s"}, Cache("s", time.Hour)))
		if err != nil {
			return "", err
		}
		n, err := Step[int](ctx.With(Cache("custom", time.Hour)), "count", "unit.count")
		return fmt.Sprintf("%s %s %d", res[0].Agent.Text, res[1].Shell.Stdout, n), err
	})
	run := func() (string, runs.State, int) {
		env := cacheEnv(t, url, f)
		var made atomic.Int32
		env.RegisterActivityWithOptions(func(context.Context) (int, error) { made.Add(1); return 7, nil }, activity.RegisterOptions{Name: "unit.count"})
		mockAgent(env, func(activities.Agent) (activities.AgentResult, error) {
			made.Add(1)
			return activities.AgentResult{Text: "agent", CostUSD: dec("0.05"), CostKnown: true, Attempt: 1}, nil
		})
		mockShell(env, func(activities.Shell) (activities.ShellResult, error) {
			made.Add(1)
			return activities.ShellResult{Stdout: "shell", Attempt: 1}, nil
		})
		env.ExecuteWorkflow(f.Name(), none{})
		require.NoError(t, env.GetWorkflowError())
		var out string
		require.NoError(t, env.GetWorkflowResult(&out))
		return out, queryState(t, env), int(made.Load())
	}
	out, _, made := run()
	assert.Equal(t, "agent shell 7", out)
	assert.Equal(t, 3, made)
	out, st, made := run()
	assert.Equal(t, "agent shell 7", out, "the cached results decode as the steps' own")
	assert.Equal(t, 0, made, "nothing ran")
	for _, name := range []string{"a", "s", "count"} {
		assert.True(t, stepByName(t, st, name).Cached, name)
	}
	assert.True(t, st.Budget.Spent.IsZero(), "spent %s", st.Budget.Spent)
	assert.True(t, st.Budget.Reserved.IsZero(), "the wave's reservation is released: %s", st.Budget.Reserved)
}

func TestCachePlanDetailNamesTheKey(t *testing.T) {
	d := planDetail(call{opts: stepOptions{cache: &cacheSpec{key: "build-v1", ttl: 10 * time.Minute}}})
	assert.Contains(t, d, `cached "build-v1" for 10m0s`)
}
