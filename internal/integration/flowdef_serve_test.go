package integration

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/flowdef/interp"
	"github.com/gateflow/gateflow/flowdef/serve"
	"github.com/gateflow/gateflow/internal/proc"
	"github.com/gateflow/gateflow/internal/protocol"
)

const servedGated = `name: serve-gated
version: "%s"
steps:
  - {id: wait, gate: {type: approval, prompt: "go?", approvers: [tester]}}
  - {id: work, uses: shell, with: {command: "echo %s"}}
  - {id: done, finish: {output: {said: "${{ steps.work.output }}"}}}
`

// serveWorker serves dir (or only the generic definition flow when dir is "") on its
// own queue, reloading every 100ms.
func serveWorker(t *testing.T, queue, dir string) (*flowclient.Client, *serve.Loader, *proc.Buffer) {
	t.Helper()
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, Directory: approval.StaticDirectory{}, StopTimeout: 5 * time.Second,
		Providers: map[string]llm.Provider{llm.ProviderScripted: llm.NewScripted()}})
	logs := &proc.Buffer{}
	var l *serve.Loader
	if dir == "" {
		require.NoError(t, serve.EnsureDefinitionFlow(w))
	} else {
		var err error
		l, err = serve.Dir(w, dir, serve.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
		require.NoError(t, err)
	}
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	if l != nil {
		ctx := ctxT(t, 5*time.Minute)
		go func() { _ = l.Watch(ctx, 100*time.Millisecond) }()
	}
	return flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue, Identity: "tester"}), l, logs
}

func writeDef(t *testing.T, path, version, word string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(strings.ReplaceAll(strings.ReplaceAll(servedGated, `"%s"`, `"`+version+`"`), "%s", word)), 0o644))
}

// waitFor polls cond every 50ms until it holds or the test's minute is up.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestFlowdefServe: a run keeps the definition it started with across an edit of its
// file, the next run uses the edited one, and the catalog has the new hash.
func TestFlowdefServe(t *testing.T) {
	const queue = "flowdef-serve"
	dir := t.TempDir()
	path := filepath.Join(dir, "gated.yaml")
	writeDef(t, path, "1", "one")
	c, l, logs := serveWorker(t, queue, dir)
	ctx := ctxT(t, 3*time.Minute)

	cat, err := c.Workflows(ctx)
	require.NoError(t, err)
	e1, ok := cat.Lookup("serve-gated")
	require.True(t, ok)
	assert.Equal(t, protocol.KindYAMLFlow, e1.Kind)
	assert.Equal(t, path, e1.Source)
	assert.Equal(t, l.Current("serve-gated").Hash(), e1.Hash)

	waiting := func(id string) func() bool {
		return func() bool {
			d, err := c.Describe(ctx, id)
			return err == nil && d.State != nil && len(d.State.Waiting) > 0
		}
	}
	first, err := c.Start(ctx, "serve-gated", nil, core.StartOptions{})
	require.NoError(t, err)
	waitFor(t, "the first run's gate", waiting(first.ID))

	// An invalid edit keeps the served version, and says why.
	require.NoError(t, os.WriteFile(path, []byte("name: serve-gated\nsteps:\n  - {id: x, uses: nope}\n"), 0o644))
	waitFor(t, "the invalid edit's log", func() bool { return strings.Contains(logs.String(), "'nope'") })
	assert.Equal(t, e1.Hash, l.Current("serve-gated").Hash())

	writeDef(t, path, "2", "two")
	var e2 core.WorkflowInfo
	waitFor(t, "the catalog's new hash", func() bool {
		cat, err := c.Workflows(ctx)
		if err != nil {
			return false
		}
		e2, _ = cat.Lookup("serve-gated")
		return e2.Hash != e1.Hash && e2.Hash == l.Current("serve-gated").Hash()
	})
	assert.Equal(t, "2", e2.Version)
	second, err := c.Start(ctx, "serve-gated", nil, core.StartOptions{})
	require.NoError(t, err)
	waitFor(t, "the second run's gate", waiting(second.ID))

	for _, id := range []string{first.ID, second.ID} {
		_, err := c.Vote(ctx, id, approval.Vote{Gate: "wait", Kind: approval.Approve, By: "tester"})
		require.NoError(t, err)
	}
	for id, want := range map[string]string{first.ID: "one", second.ID: "two"} {
		d, err := c.Wait(ctx, id)
		require.NoError(t, err)
		require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
		assert.JSONEq(t, `{"said": "`+want+`"}`, string(d.Result), id)
	}

	r := flowctlRunOn(t, queue, "flows")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)^serve-gated\s+2\s+`+e2.Hash[:12]+`\s+`+regexp.QuoteMeta(path)+`\s`, r.stdout)
	r = flowctlRunOn(t, queue, "flows", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var defs []core.WorkflowInfo
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &defs))
	require.Len(t, defs, 1)
	assert.Equal(t, e2.Hash, defs[0].Hash)

	// A removed file: new starts are refused, saying so; nothing starts.
	require.NoError(t, os.Remove(path))
	waitFor(t, "the removal", func() bool { return l.Current("serve-gated") == nil })
	_, err = c.Start(ctx, "serve-gated", nil, core.StartOptions{ID: "serve-gated-gone"})
	var unknown *core.UnknownWorkflowError
	require.ErrorAs(t, err, &unknown)
	assert.Contains(t, err.Error(), "definition serve-gated was removed")
	_, err = c.Describe(ctx, "serve-gated-gone")
	var nf *flowclient.RunNotFoundError
	assert.ErrorAs(t, err, &nf)
}

// TestFlowctlStartFile runs a definition no worker loaded, validated by flowctl first.
func TestFlowctlStartFile(t *testing.T) {
	const queue = "flowdef-startfile"
	serveWorker(t, queue, "")
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.yaml")
	require.NoError(t, os.WriteFile(plain, []byte(`name: adhoc-plain
inputs: {type: object, required: [who], properties: {who: {type: string}}}
steps:
  - {id: greet, uses: shell, with: {command: "echo hello ${{ inputs.who }}"}}
  - {id: done, finish: {output: {said: "${{ steps.greet.output }}"}}}
`), 0o644))
	r := flowctlRunOn(t, queue, "start", "--file", plain, "--input", `{"who":"Ada"}`, "--id", "adhoc-plain-1", "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "Started gateflow.definition run adhoc-plain-1")
	assert.Regexp(t, `(?m)^Status\s+completed$`, r.stdout)
	assert.Regexp(t, `(?m)^greet\s+shell\s+completed\s`, r.stdout)
	d, err := shared.tc.DescribeWorkflowExecution(ctxT(t, time.Minute), "adhoc-plain-1", "")
	require.NoError(t, err)
	assert.Equal(t, interp.DefinitionFlowName, d.WorkflowExecutionInfo.Type.Name)

	// Invalid: every error printed, nothing started.
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("name: adhoc-bad\nsteps:\n  - {id: a, uses: nope}\n  - {id: b, call: nowhere}\n"), 0o644))
	r = flowctlRunOn(t, queue, "start", "--file", bad)
	assert.Equal(t, 2, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stderr, bad+":3:")
	assert.Contains(t, r.stderr, "'nope'")
	assert.Contains(t, r.stderr, "nowhere")
	assert.Contains(t, r.stderr, "flowctl: "+bad+": 2 errors, not started")

	// The definition's input schema is checked before the start: nothing starts.
	r = flowctlRunOn(t, queue, "start", "--file", plain, "--input", `{"who": 3}`, "--id", "adhoc-plain-bad")
	assert.Equal(t, 2, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stderr, plain+":2:9: input:")
	assert.Contains(t, r.stderr, "not started")
	_, err = shared.tc.DescribeWorkflowExecution(ctxT(t, time.Minute), "adhoc-plain-bad", "")
	assert.Error(t, err, "no run was started")

	// The envelope rides along as start options: the cap, the labels and the limits.
	limited := filepath.Join(dir, "limited.yaml")
	require.NoError(t, os.WriteFile(limited, []byte(`name: adhoc-limited
limits: {steps: 1, max_cost_usd: "0.40"}
labels: {team: web}
steps:
  - {id: one, uses: shell, with: {command: "echo one"}}
  - {id: two, uses: shell, with: {command: "echo two"}}
`), 0o644))
	r = flowctlRunOn(t, queue, "start", "--file", limited, "--id", "adhoc-limited-1", "--label", "env=ci", "--wait")
	assert.Equal(t, 5, r.code, r.stdout+r.stderr)
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})
	d2, err := c.Describe(ctxT(t, time.Minute), "adhoc-limited-1")
	require.NoError(t, err)
	assert.Equal(t, runs.StatusFailed, d2.Status)
	assert.Contains(t, d2.Error, "guard: steps 2 exceeds the limit of 1 at step two")
	assert.Equal(t, 1, d2.State.Guards.MaxSteps)
	require.NotNil(t, d2.State.Budget)
	assert.Equal(t, "0.4", d2.State.Budget.Cap.Amount.String())
	for _, label := range []string{"team=web", "env=ci"} {
		assert.Eventually(t, func() bool {
			found, err := c.List(ctxT(t, time.Minute), flowclient.ListOptions{Label: label})
			return err == nil && slices.ContainsFunc(found, func(r runs.Summary) bool { return r.ID == "adhoc-limited-1" })
		}, 20*time.Second, 200*time.Millisecond, "the run has the label %s", label)
	}
}
