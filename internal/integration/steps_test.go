package integration

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/internal/integration/testflows"
)

// runFlow starts name with input on the shared worker and waits for the run to end.
func runFlow(t *testing.T, name string, input any) *runs.Description {
	t.Helper()
	ctx := ctxT(t, 2*time.Minute)
	run, err := shared.client.Start(ctx, name, input, core.StartOptions{})
	require.NoError(t, err)
	d, err := shared.client.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.NotNil(t, d.State, "state of %s: %s", run.ID, d.StateError)
	return d
}

func stepNamed(t *testing.T, steps []runs.Step, name string) runs.Step {
	t.Helper()
	for _, s := range steps {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no step %q in %+v", name, steps)
	return runs.Step{}
}

func lines(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Fields(string(b))
}

func count(list []string, s string) int {
	n := 0
	for _, l := range list {
		if l == s {
			n++
		}
	}
	return n
}

func TestHTTPStepAgainstALocalServerKeepsSecretsOutOfRecords(t *testing.T) {
	const token = "tok-3f8a9c-very-secret"
	t.Setenv("GATEFLOW_TEST_TOKEN", token) // the worker runs in this process
	var mu sync.Mutex
	var gotAuth, gotBody string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		gotAuth, gotBody = r.Header.Get("Authorization"), string(b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"created":true}`)
	}))
	defer srv.Close()

	d := runFlow(t, "test.http", testflows.FileInput{URL: srv.URL + "/items"})
	assert.Equal(t, runs.StatusCompleted, d.Status)
	assert.Equal(t, "201", string(d.Result))
	mu.Lock()
	assert.Equal(t, "Bearer "+token, gotAuth, "the server got the real secret")
	assert.JSONEq(t, `{"hello":"world"}`, gotBody)
	mu.Unlock()
	s := stepNamed(t, d.State.Steps, "call")
	assert.Equal(t, runs.KindHTTP, s.Kind)
	assert.Equal(t, 201, s.HTTPStatus)
	assert.Equal(t, `{"created":true}`, s.Output)

	// The secret is nowhere in the run's history, state or description.
	raw, err := json.Marshal(d)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), token)
	hist := shared.tc.GetWorkflowHistory(ctxT(t, time.Minute), d.ID, "", false, 0)
	for hist.HasNext() {
		ev, err := hist.Next()
		require.NoError(t, err)
		b, err := json.Marshal(ev)
		require.NoError(t, err)
		assert.NotContains(t, string(b), token)
	}
}

func TestAgentStepsSpeakOpenAIAndAnthropicWireFormatsAndChargeExactCosts(t *testing.T) {
	before := len(shared.llm.received())
	d := runFlow(t, "test.agents", testflows.AgentInput{Prompt: "Should we ship 1.2.3?"})
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.JSONEq(t, `["OpenAI says ship it.","Claude says ship it."]`, string(d.Result))

	reqs := shared.llm.received()[before:]
	require.Len(t, reqs, 2)
	assert.Equal(t, "/v1/chat/completions", reqs[0].Path)
	assert.Equal(t, "Bearer sk-test-openai", reqs[0].Header.Get("Authorization"))
	assert.Equal(t, "gpt-4o-mini", reqs[0].Body["model"])
	assert.Equal(t, "/v1/messages", reqs[1].Path)
	assert.Equal(t, "sk-test-anthropic", reqs[1].Header.Get("X-Api-Key"))
	assert.Equal(t, "Be brief.", reqs[1].Body["system"])

	// gpt-4o-mini: 12,345 in × $0.15/M + 567 out × $0.60/M = $0.00185175 + $0.0003402.
	o := stepNamed(t, d.State.Steps, "ask-openai")
	assert.Equal(t, runs.KindAgent, o.Kind)
	assert.Equal(t, "0.00219195", o.CostUSD.String())
	require.NotNil(t, o.Tokens)
	assert.Equal(t, runs.Tokens{Input: 12345, Output: 567}, *o.Tokens)
	// claude-sonnet-4: 2,000 in × $3/M + 400 out × $15/M = $0.006 + $0.006.
	a := stepNamed(t, d.State.Steps, "ask-anthropic")
	assert.Equal(t, "0.012", a.CostUSD.String())
	assert.Equal(t, runs.Tokens{Input: 2000, Output: 400}, *a.Tokens)

	assert.Equal(t, "0.01419195", d.State.CostUSD.String(), "the run's cost is the sum, exactly")
	assert.Equal(t, "0.01", d.State.CostUSD.Round(2).String(), "to the cent")
	assert.Equal(t, int64(15312), d.State.Tokens.Total())
}

func TestReleaseExampleRunsEveryStepKind(t *testing.T) {
	health := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	defer health.Close()
	d := runFlow(t, "release", examples.ReleaseInput{Version: "1.2.3", HealthURL: health.URL})
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	var out examples.ReleaseOutput
	require.NoError(t, json.Unmarshal(d.Result, &out))
	assert.Equal(t, "1.2.3", out.Version)
	assert.Equal(t, 200, out.Health)
	assert.Contains(t, out.Review, "LGTM")
	assert.Equal(t, 3, out.Smoke.Passed)

	var names []string
	for _, s := range d.State.Steps {
		names = append(names, s.Group+"/"+s.Name)
	}
	assert.Equal(t, []string{"/build", "checks/unit", "checks/lint", "/health", "/review", "/smoke"}, names)
	review := stepNamed(t, d.State.Steps, "review")
	// scripted: 15,000 in × $1/M + 180 out × $2/M.
	assert.Equal(t, "0.01536", review.CostUSD.String())
	smoke := stepNamed(t, d.State.Steps, "smoke")
	require.NotNil(t, smoke.Child)
	assert.Equal(t, d.ID+"/smoke", smoke.Child.ID)
	assert.Equal(t, runs.StatusCompleted, smoke.Child.Status)
	require.Len(t, smoke.Child.Steps, 2, "the child's steps show in the parent's state")
	assert.Equal(t, "boot", smoke.Child.Steps[0].Name)
	assert.Equal(t, "probe", smoke.Child.Steps[1].Name)
	assert.True(t, d.State.CostUSD.Equal(decimal.RequireFromString("0.01536")))

	// The child is a run of its own, listed and described like any other.
	cd, err := shared.client.Describe(ctxT(t, time.Minute), smoke.Child.ID)
	require.NoError(t, err)
	assert.Equal(t, "smoke", cd.Workflow)
	assert.Equal(t, 1, cd.State.Depth)
	assert.Equal(t, d.ID, cd.State.ParentID)
}

func TestFailFastCancelsASleepingSibling(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	d := runFlow(t, "test.failfast", testflows.FileInput{File: pidFile})
	assert.Less(t, time.Since(start), 20*time.Second, "the sleeper did not run its 30s")
	assert.Equal(t, runs.StatusFailed, d.Status)
	assert.Contains(t, d.Error, "parallel pair: step breaker: exit code 1: broken")
	assert.Contains(t, d.Error, "(cancelled: sleeper)")
	assert.Equal(t, runs.StepCancelled, stepNamed(t, d.State.Steps, "sleeper").Status)
	assert.Equal(t, runs.StepFailed, stepNamed(t, d.State.Steps, "breaker").Status)
	assertProcessGone(t, pidFile)
}

// assertProcessGone reads a pid from file and waits until no such process runs.
func assertProcessGone(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	assert.Eventually(t, func() bool {
		if syscall.Kill(pid, 0) != nil {
			return true
		}
		st, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		return err == nil && strings.Contains(string(st), ") Z ") // a zombie is dead
	}, 10*time.Second, 50*time.Millisecond, "process %d was killed with its group", pid)
}

func TestAllowedFailureEndsTheRunWithWarning(t *testing.T) {
	d := runFlow(t, "test.allowed", nil)
	assert.Equal(t, runs.StatusWarning, d.Status)
	assert.Equal(t, "Completed", d.TemporalStatus)
	flaky := stepNamed(t, d.State.Steps, "flaky")
	assert.Equal(t, runs.StepFailed, flaky.Status)
	assert.True(t, flaky.AllowedFailure)
	assert.Equal(t, 4, *flaky.ExitCode)
	assert.Equal(t, 1, d.State.AllowedFailures)
	assert.Equal(t, runs.StepCompleted, stepNamed(t, d.State.Steps, "main").Status)
}

func TestStepRetriesStopAtTheLimitAndNonRetryableStopsAtOnce(t *testing.T) {
	dir := t.TempDir()
	f1 := filepath.Join(dir, "retried")
	d := runFlow(t, "test.retried", testflows.RetryInput{File: f1})
	assert.Equal(t, runs.StatusFailed, d.Status)
	assert.Len(t, lines(t, f1), 3, "three attempts, then the step fails")
	s := stepNamed(t, d.State.Steps, "always-fails")
	assert.Equal(t, 3, s.Attempt)
	assert.Equal(t, 9, *s.ExitCode)

	f2 := filepath.Join(dir, "nonretryable")
	d = runFlow(t, "test.retried", testflows.RetryInput{File: f2, NonRetryable: true})
	assert.Equal(t, runs.StatusFailed, d.Status)
	assert.Len(t, lines(t, f2), 1, "a non-retryable error stops at once")
	assert.Equal(t, 1, stepNamed(t, d.State.Steps, "always-fails").Attempt)
}

func TestOnErrorRunsOnceWhenTheRunIsRetried(t *testing.T) {
	file := filepath.Join(t.TempDir(), "log")
	d := runFlow(t, "test.attempts", testflows.FileInput{File: file})
	assert.Equal(t, runs.StatusFailed, d.Status)
	assert.Equal(t, 3, d.State.Attempt)
	assert.Equal(t, 3, d.State.MaxAttempts)
	got := lines(t, file)
	assert.Equal(t, 3, count(got, "work"), "the handler ran three times")
	assert.Equal(t, 1, count(got, "cleanup"), "the cleanup step ran once")
	assert.Equal(t, "cleanup", got[len(got)-1], "after the last attempt")
	var attempts []int
	for _, s := range d.State.Steps {
		if s.Name == "work" {
			attempts = append(attempts, s.RunAttempt)
		}
	}
	assert.Equal(t, []int{1, 2, 3}, attempts)
	assert.True(t, stepNamed(t, d.State.Steps, "cleanup").OnError)
}

func TestCustomActivityStepReportsCostAndSleepAndSkipAreRecorded(t *testing.T) {
	d := runFlow(t, "test.counting", testflows.AgentInput{Prompt: "one two three four"})
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.Equal(t, "4", string(d.Result))
	c := stepNamed(t, d.State.Steps, "count")
	assert.Equal(t, runs.KindActivity, c.Kind)
	assert.Equal(t, "0.004", c.CostUSD.String())
	assert.Equal(t, "0.004", d.State.CostUSD.String())
	p := stepNamed(t, d.State.Steps, "pause")
	assert.Equal(t, runs.KindSleep, p.Kind)
	assert.GreaterOrEqual(t, p.DurationMS, int64(200))
	s := stepNamed(t, d.State.Steps, "publish")
	assert.Equal(t, runs.StepSkipped, s.Status)
	assert.Equal(t, "dry run", s.Output)
}
