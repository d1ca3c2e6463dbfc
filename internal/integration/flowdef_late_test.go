package integration

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/testsuite"
)

// lateQueue is a task queue of its own for each call, so -count=N starts afresh.
func lateQueue(prefix string) string {
	return prefix + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
}

// gatedV1 and gatedV2 wait on an approval gate, then differ: v2 says another word and
// runs one more step.
const (
	gatedV1 = `name: late-gated
version: "1"
steps:
  - {id: wait, gate: {type: approval, prompt: "go?", approvers: [tester]}}
  - {id: work, uses: shell, with: {command: "echo one"}}
  - {id: done, finish: {output: {version: 1, said: "${{ steps.work.output }}"}}}
`
	gatedV2 = `name: late-gated
version: "2"
steps:
  - {id: wait, gate: {type: approval, prompt: "go?", approvers: [tester]}}
  - {id: work, uses: shell, with: {command: "echo two"}}
  - {id: extra, uses: shell, with: {command: "echo more"}}
  - {id: done, finish: {output: {version: 2, said: "${{ steps.work.output }}", extra: "${{ steps.extra.output }}"}}}
`
	lateGreet = `name: late-greet
description: added while the worker runs
inputs: {type: object, properties: {who: {type: string}}}
steps:
  - {id: greet, uses: shell, with: {command: "echo hello ${{ inputs.who }}"}}
  - {id: done, finish: {output: {said: "${{ steps.greet.output }}"}}}
`
)

// stepNames are the names of a run's steps.
func stepNames(d *runs.Description) []string {
	var out []string
	if d.State != nil {
		for _, s := range d.State.Steps {
			out = append(out, s.Name)
		}
	}
	return out
}

// waitingOn reports whether run id waits for something (its gate).
func waitingOn(t *testing.T, c *flowclient.Client, id string) func() bool {
	ctx := ctxT(t, time.Minute)
	return func() bool {
		d, err := c.Describe(ctx, id)
		return err == nil && d.State != nil && len(d.State.Waiting) > 0
	}
}

// TestFlowdefServeAdded: a file added to the served directory after the worker started
// is served by its name at once (no restart): it is in the catalog, flowclient.Client and
// `flowctl start NAME` run it to completion, `flowctl flows` and `flowctl workflows` list
// it, and its history replays against the flow registered by name (what a worker
// started after the addition has).
func TestFlowdefServeAdded(t *testing.T) {
	t.Parallel()
	queue := lateQueue("flowdef-added")
	dir := t.TempDir()
	writeDef(t, filepath.Join(dir, "gated.yaml"), "1", "one")
	c, l, logs := serveWorker(t, queue, dir)
	ctx := ctxT(t, 3*time.Minute)

	path := filepath.Join(dir, "greet.yaml")
	require.NoError(t, os.WriteFile(path, []byte(lateGreet), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "late-gated.yaml"), []byte(gatedV1), 0o644))
	var e core.WorkflowInfo
	waitFor(t, "the added definitions in the catalog", func() bool {
		cat, err := c.Workflows(ctx)
		if err != nil {
			return false
		}
		_, gated := cat.Lookup("late-gated")
		var ok bool
		e, ok = cat.Lookup("late-greet")
		return ok && gated
	})
	assert.Equal(t, protocol.KindYAMLFlow, e.Kind)
	assert.Equal(t, path, e.Source)
	assert.Equal(t, l.Current("late-greet").Hash(), e.Hash)
	assert.Equal(t, "added while the worker runs", e.Description)
	// The loader logs the addition once the worker published it.
	waitFor(t, "the log of the addition", func() bool {
		return strings.Contains(logs.String(), `msg="flow definitions: added" definition=late-greet`)
	})
	assert.NotContains(t, logs.String(), "restart")

	run, err := c.Start(ctx, "late-greet", map[string]any{"who": "Ada"}, core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.JSONEq(t, `{"said": "hello Ada"}`, string(d.Result))
	assert.Equal(t, "late-greet", d.Workflow)
	assert.Contains(t, stepNames(d), "greet")
	desc, err := shared.tc.DescribeWorkflowExecution(ctx, run.ID, "")
	require.NoError(t, err)
	assert.Equal(t, "late-greet", desc.WorkflowExecutionInfo.Type.Name, "its own workflow type, not the generic flow")

	r := flowctlRunOn(t, queue, "start", "late-greet", "--input", `{"who":"Bo"}`, "--id", queue+"-flowctl", "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "Started late-greet run "+queue+"-flowctl")
	assert.Regexp(t, `(?m)^Status\s+completed$`, r.stdout)
	assert.Regexp(t, `(?m)^greet\s+shell\s+completed\s`, r.stdout)
	assert.Contains(t, r.stdout, "hello Bo")

	r = flowctlRunOn(t, queue, "flows")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)^late-greet\s+-?\s*`+e.Hash[:12]+`\s+`+regexp.QuoteMeta(path)+`\s`, r.stdout)
	assert.Regexp(t, `(?m)^serve-gated\s`, r.stdout)
	r = flowctlRunOn(t, queue, "workflows")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)^late-greet\s`, r.stdout)

	// A late flow's run has the run wrapper's parts: the state query, the search
	// attributes, the approval Update, the memo once it ended.
	gated, err := c.Start(ctx, "late-gated", nil, core.StartOptions{})
	require.NoError(t, err)
	waitFor(t, "the late gated run's gate", waitingOn(t, c, gated.ID))
	waitFor(t, "the late gated run in the listing of runs waiting", func() bool {
		found, err := c.List(ctx, flowclient.ListOptions{Workflow: "late-gated", WaitingFor: "approval:wait"})
		return err == nil && len(found) == 1 && found[0].ID == gated.ID
	})
	_, err = c.Vote(ctx, gated.ID, approval.Vote{Gate: "wait", Kind: approval.Approve, By: "tester"})
	require.NoError(t, err)
	d, err = c.Wait(ctx, gated.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.JSONEq(t, `{"version": 1, "said": "one"}`, string(d.Result))
	assert.Contains(t, stepNames(d), "work")
	require.NotNil(t, d.State)
	assert.Equal(t, "1", d.State.Version)
	require.Len(t, d.State.Gates, 1)
	assert.Equal(t, "tester", d.State.Gates[0].Votes[0].By)

	hdir := t.TempDir()
	for _, id := range []string{run.ID, gated.ID} {
		file := filepath.Join(hdir, id+".json")
		require.NoError(t, testsuite.RecordHistory(ctx, shared.tc, id, file))
		assert.NoError(t, testsuite.Replay(file, flow.WorkerOptions{Directory: approval.StaticDirectory{}}, l.Flows()...),
			"a run of the dynamic workflow replays against the flow registered by name: %s", id)
	}
}

// TestFlowdefServeUnknownTypeRetried: a run of a type no worker serves fails its workflow
// task (retried), not the run, as Temporal does without a dynamic workflow; once its
// definition file appears, the same run completes.
func TestFlowdefServeUnknownTypeRetried(t *testing.T) {
	t.Parallel()
	queue := lateQueue("flowdef-unknown")
	dir := t.TempDir()
	writeDef(t, filepath.Join(dir, "gated.yaml"), "1", "one")
	c, _, _ := serveWorker(t, queue, dir)
	ctx := ctxT(t, 3*time.Minute)

	id := queue + "-early"
	_, err := shared.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue, WorkflowTaskTimeout: time.Second}, "late-greet", map[string]any{"who": "early"})
	require.NoError(t, err)
	waitFor(t, "the failed workflow task", func() bool {
		hist := shared.tc.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for hist.HasNext() {
			ev, err := hist.Next()
			if err != nil {
				return false
			}
			if f := ev.GetWorkflowTaskFailedEventAttributes(); f != nil {
				return strings.Contains(f.GetFailure().GetMessage(), `no flow named "late-greet" is served by this worker of task queue `+queue)
			}
		}
		return false
	})
	desc, err := shared.tc.DescribeWorkflowExecution(ctx, id, "")
	require.NoError(t, err)
	assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, desc.WorkflowExecutionInfo.Status, "the run is not failed")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "greet.yaml"), []byte(lateGreet), 0o644))
	d, err := c.Wait(ctx, id)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.JSONEq(t, `{"said": "hello early"}`, string(d.Result))
}

// TestFlowdefServeEditWhileWaiting is issue 14's "done when": three runs wait on the
// approval gate of a definition, the file is edited (another word and one more step),
// a fourth run starts; all four are approved. The three finish on the old definition,
// the fourth on the new one, and the recorded histories of both kinds replay against
// the worker's flow as it is now (serving the edited definition).
func TestFlowdefServeEditWhileWaiting(t *testing.T) {
	t.Parallel()
	queue := lateQueue("flowdef-edit3")
	dir := t.TempDir()
	path := filepath.Join(dir, "gated.yaml")
	require.NoError(t, os.WriteFile(path, []byte(gatedV1), 0o644))
	c, l, _ := serveWorker(t, queue, dir)
	ctx := ctxT(t, 3*time.Minute)
	h1 := l.Current("late-gated").Hash()

	var old []string
	for range 3 {
		run, err := c.Start(ctx, "late-gated", nil, core.StartOptions{})
		require.NoError(t, err)
		old = append(old, run.ID)
	}
	for _, id := range old {
		waitFor(t, "the gate of "+id, waitingOn(t, c, id))
	}

	require.NoError(t, os.WriteFile(path, []byte(gatedV2), 0o644))
	waitFor(t, "the edited definition in the catalog", func() bool {
		cat, err := c.Workflows(ctx)
		if err != nil {
			return false
		}
		e, _ := cat.Lookup("late-gated")
		return e.Hash != h1 && e.Version == "2"
	})
	fresh, err := c.Start(ctx, "late-gated", nil, core.StartOptions{})
	require.NoError(t, err)
	waitFor(t, "the gate of the new run", waitingOn(t, c, fresh.ID))

	for _, id := range append(cloneIDs(old), fresh.ID) {
		_, err := c.Vote(ctx, id, approval.Vote{Gate: "wait", Kind: approval.Approve, By: "tester"})
		require.NoError(t, err)
	}
	for _, id := range old {
		d, err := c.Wait(ctx, id)
		require.NoError(t, err)
		require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
		assert.JSONEq(t, `{"version": 1, "said": "one"}`, string(d.Result), id)
		assert.NotContains(t, stepNames(d), "extra", id)
		assert.Equal(t, "1", d.State.Version, id)
	}
	d, err := c.Wait(ctx, fresh.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.JSONEq(t, `{"version": 2, "said": "two", "extra": "more"}`, string(d.Result))
	assert.Contains(t, stepNames(d), "extra")

	hdir := t.TempDir()
	for i, id := range append(cloneIDs(old), fresh.ID) {
		require.NoError(t, testsuite.RecordHistory(ctx, shared.tc, id, filepath.Join(hdir, strconv.Itoa(i)+".json")))
	}
	require.Equal(t, "2", l.Current("late-gated").Version, "replays run against the edited definition")
	for i, id := range append(cloneIDs(old), fresh.ID) {
		assert.NoError(t, testsuite.Replay(filepath.Join(hdir, strconv.Itoa(i)+".json"), flow.WorkerOptions{Directory: approval.StaticDirectory{}}, l.Flows()...), id)
	}
}

// TestFlowdefServeRemovedWhileRunning: removing a file stops new starts of its
// definition, with an error saying so, while a run of it in progress finishes on it.
func TestFlowdefServeRemovedWhileRunning(t *testing.T) {
	t.Parallel()
	queue := lateQueue("flowdef-removed")
	dir := t.TempDir()
	path := filepath.Join(dir, "gated.yaml")
	require.NoError(t, os.WriteFile(path, []byte(gatedV1), 0o644))
	c, l, logs := serveWorker(t, queue, dir)
	ctx := ctxT(t, 3*time.Minute)

	going, err := c.Start(ctx, "late-gated", nil, core.StartOptions{})
	require.NoError(t, err)
	waitFor(t, "the gate", waitingOn(t, c, going.ID))
	require.NoError(t, os.Remove(path))
	waitFor(t, "the removal", func() bool { return l.Current("late-gated") == nil })
	assert.Contains(t, logs.String(), "definition late-gated was removed")

	r := flowctlRunOn(t, queue, "start", "late-gated", "--id", queue+"-after", "--wait")
	assert.Equal(t, 2, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stderr, `workflow "late-gated" on task queue `+queue+" is not served for new runs: definition late-gated was removed ("+path+")")
	_, err = c.Describe(ctx, queue+"-after")
	var nf *flowclient.RunNotFoundError
	assert.ErrorAs(t, err, &nf, "the refused start started nothing")
	// A raw start (not through Client.Start) of the removed type still fails at once.
	raw, err := shared.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: queue + "-raw", TaskQueue: queue}, "late-gated")
	require.NoError(t, err)
	d, err := c.Wait(ctx, raw.GetID())
	require.NoError(t, err)
	assert.Equal(t, runs.StatusFailed, d.Status)
	assert.Contains(t, d.Error, "was removed")
	assert.NotContains(t, stepNames(d), "work", "nothing of the old definition ran")

	_, err = c.Vote(ctx, going.ID, approval.Vote{Gate: "wait", Kind: approval.Approve, By: "tester"})
	require.NoError(t, err)
	d, err = c.Wait(ctx, going.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.JSONEq(t, `{"version": 1, "said": "one"}`, string(d.Result))
}

// cloneIDs is a copy of ids, to append to without sharing.
func cloneIDs(ids []string) []string { return append([]string(nil), ids...) }

// TestFlowdefServeAddedStarts: a definition added while the worker runs gets its once
// start and its schedules at once, as one loaded at the worker's start does.
func TestFlowdefServeAddedStarts(t *testing.T) {
	t.Parallel()
	queue := lateQueue("flowdef-added-starts")
	dir := t.TempDir()
	writeDef(t, filepath.Join(dir, "gated.yaml"), "1", "one")
	c, l, _ := serveWorker(t, queue, dir)
	ctx := ctxT(t, 3*time.Minute)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "nightly.yaml"), []byte(`name: late-nightly
once: true
schedules: [{cron: "0 3 * * *"}]
steps:
  - {id: tick, uses: shell, with: {command: "echo tick"}}
`), 0o644))
	waitFor(t, "the added definition", func() bool { return l.Current("late-nightly") != nil })
	sid := protocol.ScheduleID("late-nightly", 0, queue)
	t.Cleanup(func() {
		ctx := ctxT(t, time.Minute)
		_ = shared.tc.ScheduleClient().GetHandle(ctx, sid).Delete(ctx)
	})
	var d *runs.Description
	waitFor(t, "the once run", func() bool {
		var err error
		d, err = c.Describe(ctx, protocol.OnceID("late-nightly", queue))
		return err == nil && d.Status == runs.StatusCompleted
	})
	assert.Equal(t, "late-nightly", d.Workflow)
	assert.Contains(t, stepNames(d), "tick")
	s, err := shared.tc.ScheduleClient().GetHandle(ctx, sid).Describe(ctx)
	require.NoError(t, err)
	act, ok := s.Schedule.Action.(*client.ScheduleWorkflowAction)
	require.True(t, ok, "%T", s.Schedule.Action)
	assert.Equal(t, "late-nightly", act.Workflow)
	assert.Equal(t, queue, act.TaskQueue)
	assert.NotEmpty(t, s.Schedule.Spec.Calendars, "the cron spec")
}
