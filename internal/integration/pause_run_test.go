package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/internal/integration/testflows"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/searchattr"
)

func fileLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Fields(string(b))
}

func stepStatus(d *runs.Description, name string) runs.StepStatus {
	for _, s := range d.State.Steps {
		if s.Name == name {
			return s.Status
		}
	}
	return ""
}

func TestPauseRunWithFlowctlWhileAShellStepIsInFlight(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	c := shared.client
	file := filepath.Join(t.TempDir(), "log")
	run, err := c.Start(ctx, testflows.PauseSteps.Name(), testflows.FileInput{File: file}, core.StartOptions{})
	require.NoError(t, err)
	eventually(t, c, run.ID, "first is in flight", func(d *runs.Description) bool { return stepStatus(d, "first") == runs.StepRunning })

	r := flowctlRun(t, "", "pause", run.ID, "--reason", "look at the logs", "--as", "alice")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "Run "+run.ID+" is paused")
	r = flowctlRun(t, "", "pause", run.ID)
	assert.Equal(t, flowctl.ExitRefused, r.code, "pausing twice is refused: %s", r.stderr)
	assert.Contains(t, r.stderr, "the run is already paused (by alice since ")

	d := eventually(t, c, run.ID, "first finished", func(d *runs.Description) bool { return stepStatus(d, "first") == runs.StepCompleted })
	time.Sleep(3 * time.Second)
	d, err = c.Describe(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusPaused, d.Status)
	assert.Equal(t, []string{"resume"}, d.State.Waiting)
	assert.Len(t, d.State.Steps, 1, "second has not started")
	assert.Equal(t, []string{"first-start", "first-end"}, fileLines(t, file))
	require.NotNil(t, d.State.Paused)
	assert.Equal(t, "alice", d.State.Paused.By)
	assert.Equal(t, "look at the logs", d.State.Paused.Reason)

	r = flowctlRun(t, "", "show", run.ID)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "paused")
	assert.Contains(t, r.stdout, "resume")
	assert.Eventually(t, func() bool {
		list, err := c.List(ctx, flowclient.ListOptions{Status: runs.StatusPaused})
		for _, s := range list {
			if err == nil && s.ID == run.ID {
				return true
			}
		}
		return false
	}, 10*time.Second, 100*time.Millisecond, "FlowStatus = 'paused' finds the run")

	r = flowctlRun(t, "", "resume", run.ID, "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	assert.Equal(t, map[string]any{"run": run.ID, "paused": false}, out)
	d, err = c.Wait(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, d.Status)
	assert.Equal(t, []string{"first-start", "first-end", "second"}, fileLines(t, file))
	assert.Nil(t, d.State.Paused)
	assert.Equal(t, 2, updateEvents(t, run.ID), "the pause and the resume; the refused pause left no trace")

	r = flowctlRun(t, "", "pause", run.ID)
	assert.Equal(t, flowctl.ExitRefused, r.code, "an ended run cannot be paused: %s", r.stderr)
	assert.Contains(t, r.stderr, "the run has ended")
	r = flowctlRun(t, "", "resume", "--run", "no-such-run")
	assert.Equal(t, flowctl.ExitNotFound, r.code, r.stderr)
	r = flowctlRun(t, "", "pause", "no-such-thing")
	assert.Equal(t, flowctl.ExitUsage, r.code, r.stderr)
	assert.Contains(t, r.stderr, "no-such-thing is neither a workflow on task queue "+shared.queue)
}

// A run whose ID is also a workflow type's name: the type wins, --run means the run.
func TestPauseRunOrWorkflowTypeOfTheSameName(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	queue := "pausing-runs"
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue}, testflows.PauseFlows()...)
	require.NoError(t, w.Start())
	defer w.Stop()
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})
	name := testflows.PauseSteps.Name()
	file := filepath.Join(t.TempDir(), "log")
	run, err := c.Start(ctx, name, testflows.FileInput{File: file}, core.StartOptions{ID: name})
	require.NoError(t, err)

	eventually(t, c, run.ID, "first is in flight", func(d *runs.Description) bool { return stepStatus(d, "first") == runs.StepRunning })
	r := flowctlRunOn(t, queue, "pause", "--run", name)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "Run "+name+" is paused", "--run means the run")

	r = flowctlRunOn(t, queue, "pause", name)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "New runs of "+name+" wait in pending", "the workflow type wins")
	r = flowctlRunOn(t, queue, "resume", name)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "Runs of "+name+" go on.")
	d := eventually(t, c, run.ID, "first finished", func(d *runs.Description) bool { return stepStatus(d, "first") == runs.StepCompleted })
	assert.Equal(t, runs.StatusPaused, d.Status, "resuming the type does not resume the paused run")

	r = flowctlRunOn(t, queue, "resume", "--run", name)
	require.Equal(t, 0, r.code, r.stderr)
	d, err = c.Wait(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, d.Status)
	assert.Equal(t, []string{"first-start", "first-end", "second"}, fileLines(t, file))
}

// searchAttrs reads a run's Temporal priority and its FlowLabels and FlowPriority.
func searchAttrs(t *testing.T, run string) (int32, []string, int64) {
	t.Helper()
	resp, err := shared.tc.DescribeWorkflowExecution(ctxT(t, 10*time.Second), run, "")
	require.NoError(t, err)
	info := resp.GetWorkflowExecutionInfo()
	fields := info.GetSearchAttributes().GetIndexedFields()
	var labels []string
	if p, ok := fields[searchattr.Labels]; ok {
		require.NoError(t, converter.GetDefaultDataConverter().FromPayload(p, &labels))
	}
	var pr int64
	if p, ok := fields[searchattr.Priority]; ok {
		require.NoError(t, converter.GetDefaultDataConverter().FromPayload(p, &pr))
	}
	return info.GetPriority().GetPriorityKey(), labels, pr
}

func TestFlowDefaultsApplyToStartsWithoutOptions(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	queue := "flow-defaults"
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, Tags: []string{"gpu", "eu"}}, testflows.PauseFlows()...)
	require.NoError(t, w.Start())
	defer w.Stop()
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})
	name := testflows.Defaults.Name()

	cat, err := c.Workflows(ctx)
	require.NoError(t, err)
	info, ok := cat.Lookup(name)
	require.True(t, ok)
	assert.Equal(t, 2, info.Priority)
	assert.Equal(t, map[string]string{"team": "ml", "tier": "batch"}, info.Labels)
	assert.Equal(t, []string{"gpu"}, info.WorkerTags)

	run, err := c.Start(ctx, name, nil, core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, d.Status)
	assert.Equal(t, protocol.TaggedQueue(queue, []string{"gpu"}), d.TaskQueue)
	key, labels, pr := searchAttrs(t, run.ID)
	assert.Equal(t, int32(2), key)
	assert.Equal(t, int64(2), pr)
	assert.Equal(t, []string{"team=ml", "tier=batch"}, labels)

	run, err = c.Start(ctx, name, nil, core.StartOptions{Priority: 4, Labels: map[string]string{"team": "web", "env": "prod"},
		WorkerTags: []string{"eu"}})
	require.NoError(t, err)
	d, err = c.Wait(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, d.Status)
	assert.Equal(t, protocol.TaggedQueue(queue, []string{"eu", "gpu"}), d.TaskQueue, "the tags are the union")
	key, labels, pr = searchAttrs(t, run.ID)
	assert.Equal(t, int32(4), key, "the start's priority wins")
	assert.Equal(t, int64(4), pr)
	assert.Equal(t, []string{"env=prod", "team=web", "tier=batch"}, labels, "the start's value wins for team")

	assert.Eventually(t, func() bool {
		list, err := c.List(ctx, flowclient.ListOptions{Workflow: name, Label: "tier=batch"})
		return err == nil && len(list) >= 2
	}, 10*time.Second, 100*time.Millisecond, "both runs carry the flow's label")
}
