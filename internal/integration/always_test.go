package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/integration/testflows"
)

// TestAlwaysRunsAfterACancelledRun: cancelled while its sleep step runs, the run kills the
// step's process, runs OnError, then its Always step with the status "cancelled".
func TestAlwaysRunsAfterACancelledRun(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	dir := t.TempDir()
	in := testflows.AlwaysInput{Log: filepath.Join(dir, "log"), PIDFile: filepath.Join(dir, "pid")}
	run, err := shared.client.Start(ctx, "test.always", in, core.StartOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, err := os.Stat(in.PIDFile); return err == nil }, 20*time.Second, 20*time.Millisecond)
	require.NoError(t, shared.tc.CancelWorkflow(ctx, run.ID, ""))
	d, err := shared.client.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.NotNil(t, d.State, d.StateError)
	assert.Equal(t, runs.StatusCancelled, d.Status)
	assertProcessGone(t, in.PIDFile)
	assert.Equal(t, []string{"cleanup", "cancelled"}, lines(t, in.Log), "OnError, then Always, once each")
	assert.Equal(t, runs.StepCancelled, stepNamed(t, d.State.Steps, "work").Status)
	report := stepNamed(t, d.State.Steps, "report")
	assert.Equal(t, runs.StepCompleted, report.Status)
	assert.True(t, report.Always)
	assert.Equal(t, "completed (always)", report.StatusText())
}

// TestAlwaysRunsAfterACompletedRun: no OnError, the Always step once, with "completed".
func TestAlwaysRunsAfterACompletedRun(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log")
	d := runFlow(t, "test.always", testflows.AlwaysInput{Log: log})
	assert.Equal(t, runs.StatusCompleted, d.Status)
	assert.Equal(t, []string{"completed"}, lines(t, log))
	assert.True(t, stepNamed(t, d.State.Steps, "report").Always)
	var out string
	require.NoError(t, json.Unmarshal(d.Result, &out))
	assert.Equal(t, "work\n", out)
	assert.Empty(t, d.Output, "a completed run's output is its Result")
}

// TestOnStepErrorRunsARealStepAfterAnAllowedFailure: the handler's shell step runs after
// the allowed failure and before the work step; the run ends warning.
func TestOnStepErrorRunsARealStepAfterAnAllowedFailure(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log")
	d := runFlow(t, "test.always", testflows.AlwaysInput{Log: log, Flaky: true})
	assert.Equal(t, runs.StatusWarning, d.Status)
	assert.Equal(t, []string{"handler:flaky", "warning"}, lines(t, log))
	var names []string
	for _, s := range d.State.Steps {
		names = append(names, s.Name)
	}
	assert.Equal(t, []string{"flaky", "on-step-error", "work", "report"}, names)
	assert.True(t, stepNamed(t, d.State.Steps, "flaky").AllowedFailure)
}

// TestFailedHandlerOutputIsVisibleThroughDescribeAndFlowctl: the output the handler
// returned with its error is in the state, in Describe's Output and in `flowctl show`.
func TestFailedHandlerOutputIsVisibleThroughDescribeAndFlowctl(t *testing.T) {
	d := runFlow(t, "test.failed.output", nil)
	assert.Equal(t, runs.StatusFailed, d.Status)
	assert.Equal(t, "Failed", d.TemporalStatus)
	assert.JSONEq(t, `{"built":["a"],"failed":"b"}`, string(d.Output))
	assert.JSONEq(t, `{"built":["a"],"failed":"b"}`, string(d.State.Output))
	assert.Empty(t, d.Result, "Result stays the completed result")
	assert.Contains(t, d.Error, "exit code 5")

	r := flowctlRun(t, "", "show", d.ID)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)^Output    \{"built":\["a"\],"failed":"b"\}$`, r.stdout)
	assert.Regexp(t, `(?m)^Error     .*exit code 5`, r.stdout)
}
