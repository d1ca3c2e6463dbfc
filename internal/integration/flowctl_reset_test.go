package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/internal/integration/testflows"
	"github.com/gateflow/gateflow/runs"
)

// TestFlowctlResetToStep: a run whose third step failed is reset to its second step once
// the cause is fixed. The new execution keeps the first step's result (it does not run
// again), runs step2 again and completes step3; flowctl prints the new Temporal run ID.
func TestFlowctlResetToStep(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	file := filepath.Join(t.TempDir(), "lines")
	run, err := shared.client.Start(ctx, testflows.Resettable.Name(), testflows.FileInput{File: file}, core.StartOptions{})
	require.NoError(t, err)
	d, err := shared.client.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusFailed, d.Status, d.Error)
	first := d.RunID

	r := flowctlRun(t, "", "reset", run.ID, "--to-step", "step2")
	assert.Equal(t, flowctl.ExitUsage, r.code)
	assert.Contains(t, r.stderr, "reset needs --reason")

	require.NoError(t, os.WriteFile(file+".ready", nil, 0o600))
	r = flowctlRun(t, "", "reset", run.ID, "--to-step", "step2", "--reason", "the ready file is there now")
	require.Equal(t, 0, r.code, r.stderr)
	m := regexp.MustCompile(`^Run ` + regexp.QuoteMeta(run.ID) + ` reset to before step step2 \(as \S+, unverified\): new execution (\S+)\.\n  ` +
		regexp.QuoteMeta(sharedHint("flowctl watch "+run.ID)) + `\n$`).FindStringSubmatch(r.stdout)
	require.NotNil(t, m, r.stdout)
	assert.NotEqual(t, first, m[1], "a new execution")

	d, err = shared.client.Wait(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, m[1], d.RunID, "the run's latest execution is the one printed")
	assert.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "step1\nstep2\nstep2\nstep3\n", string(b), "step1 ran once, step2 twice, step3 once to its end")
	var names []string
	for _, s := range d.State.Steps {
		names = append(names, s.Name+":"+string(s.Status))
	}
	assert.Equal(t, []string{"step1:completed", "step2:completed", "step3:completed"}, names)

	r = flowctlRun(t, "", "reset", run.ID, "--to-step", "step3", "--reason", "again", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var out struct {
		Run           string `json:"run"`
		Step          string `json:"step"`
		EventID       int64  `json:"event_id"`
		RunID         string `json:"run_id"`
		PreviousRunID string `json:"previous_run_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	assert.Equal(t, run.ID, out.Run)
	assert.Equal(t, "step3", out.Step)
	assert.Equal(t, m[1], out.PreviousRunID)
	assert.NotEmpty(t, out.RunID)
	assert.Positive(t, out.EventID)
	_, err = shared.client.Wait(ctx, run.ID)
	require.NoError(t, err)
	b, err = os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "step1\nstep2\nstep2\nstep3\nstep3\n", string(b))
}

// TestFlowctlResetRefusals: an unknown step is refused with the run's step names, an
// unknown run is not found, and nothing is reset.
func TestFlowctlResetRefusals(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	file := filepath.Join(t.TempDir(), "lines")
	run, err := shared.client.Start(ctx, testflows.Resettable.Name(), testflows.FileInput{File: file}, core.StartOptions{})
	require.NoError(t, err)
	d, err := shared.client.Wait(ctx, run.ID)
	require.NoError(t, err)

	r := flowctlRun(t, "", "reset", run.ID, "--to-step", "step4", "--reason", "typo")
	assert.Equal(t, flowctl.ExitNotFound, r.code, r.stderr)
	assert.Equal(t, fmt.Sprintf("flowctl: run %s has no step \"step4\" (a step it never started cannot be reset to); its steps: step1, step2, step3\n", run.ID), r.stderr)
	r = flowctlRun(t, "", "reset", run.ID, "--reason", "no step")
	assert.Equal(t, flowctl.ExitUsage, r.code)
	assert.Contains(t, r.stderr, "reset needs --to-step NAME")
	r = flowctlRun(t, "", "reset", "no-such-run", "--to-step", "step1", "--reason", "x")
	assert.Equal(t, flowctl.ExitNotFound, r.code, r.stderr)

	after, err := shared.client.Describe(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, d.RunID, after.RunID, "refusals reset nothing")
}

// TestFlowctlJSONDurations: in -o json, durations are Go duration strings: the sign-off
// gate's 24h timeout reads "24h0m0s", not nanoseconds.
func TestFlowctlJSONDurations(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	run, err := shared.client.Start(ctx, "rollout", examples.RolloutInput{Version: "9.9.9", Regions: []string{"eu"}}, core.StartOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = shared.tc.TerminateWorkflow(ctxT(t, 10*time.Second), run.ID, "", "test over") })
	eventually(t, shared.client, run.ID, "the sign-off gate", waitingFor("approval:sign-off"))
	r := flowctlRun(t, "", "show", run.ID, "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var d struct {
		State struct {
			Gates []struct {
				Name    string `json:"name"`
				Request struct {
					Timeout any `json:"timeout"`
				} `json:"request"`
			} `json:"gates"`
		} `json:"state"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &d), r.stdout)
	require.Len(t, d.State.Gates, 1, r.stdout)
	assert.Equal(t, "24h0m0s", d.State.Gates[0].Request.Timeout)
	assert.NotContains(t, r.stdout, "86400000000000")
	assert.True(t, strings.Contains(r.stdout, `"timeout": "24h0m0s"`), r.stdout)
}
