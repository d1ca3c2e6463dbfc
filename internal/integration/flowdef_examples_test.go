package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/flowdef/interp"
	"github.com/gateflow/gateflow/flowdef/serve"
	"github.com/gateflow/gateflow/mcptools"
	"github.com/gateflow/gateflow/signals"
)

// examplesFlowsDir is the repository's examples/flows, served as they are (no copies).
const examplesFlowsDir = "../../examples/flows"

// examplesRunners run each example of examples/flows end to end, by definition name.
// TestFlowdefExamplesAllRun fails on a file with no entry here.
var examplesRunners = map[string]func(t *testing.T, c *flowclient.Client){
	"code-review": runCodeReviewExample,
	"incident":    runIncidentExample,
	// triage_example_test.go
	"triage-agent-yaml": runTriageAgentYAMLExample,
}

// examplesRules are the dev worker's scripted answers (examples.ScriptedRules), after
// a few more that steer the examples down their other paths: a file whose review is not
// JSON, a file whose review drags the summary below the quality threshold, a high
// severity and a triage that is not JSON.
func examplesRules() []llm.ScriptRule {
	return append([]llm.ScriptRule{
		{Match: "Code review of broken.go", Text: "I could not read this file."},
		{Match: "Code review of legacy.c", Text: `{"score": 40, "comments": ["legacy-code"]}`},
		{Match: "legacy-code", Text: `{"score": 55, "summary": "Legacy code needs work."}`},
		{Match: "db-down", Text: `{"severity": "high", "summary": "database down"}`},
		{Match: "garbled", Text: "severity: who knows"},
	}, examples.ScriptedRules()...)
}

// examplesWorker serves examples/flows as flow-worker --dev does (serve.Dir, the
// scripted provider as the default model, the examples' approver directory, the example
// MCP server triage-tools as a real process) on its own queue.
func examplesWorker(t *testing.T, queue string) (*flowclient.Client, *serve.Loader) {
	t.Helper()
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, Directory: examples.Directory(), StopTimeout: 5 * time.Second,
		Providers:  map[string]llm.Provider{llm.ProviderScripted: llm.NewScripted(examplesRules()...)},
		MCPServers: []mcptools.Server{{Name: examples.TriageServer, Command: []string{triageToolsBin(t)}}}})
	l, err := serve.Dir(w, examplesFlowsDir, serve.Options{Interp: []interp.Option{interp.DefaultModel(llm.ProviderScripted)}})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue, Identity: "tester"}), l
}

// TestFlowdefExamplesAllRun serves every file of examples/flows and runs each one end to
// end; a file no runner covers fails the test.
func TestFlowdefExamplesAllRun(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(examplesFlowsDir, "*"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	c, l := examplesWorker(t, "flowdef-examples")
	for _, f := range files {
		assert.True(t, slices.ContainsFunc(serve.Extensions, func(ext string) bool { return strings.HasSuffix(f, ext) }),
			"%s: examples/flows holds only definitions", f)
	}
	names := l.Names()
	require.Len(t, names, len(files), "one served definition per file")
	for _, name := range names {
		runner, ok := examplesRunners[name]
		if !assert.True(t, ok, "example %s has no end-to-end run in examplesRunners", name) {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runner(t, c)
		})
	}
}

// replayExample replays run's history on examples/flows/<file>.
func replayExample(t *testing.T, run, file string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(examplesFlowsDir, file))
	require.NoError(t, err)
	replayDef(t, run, string(src))
}

// stepRecords are the records of the steps named name, in order.
func stepRecords(d *runs.Description, name string) []runs.Step {
	var out []runs.Step
	for _, s := range d.State.Steps {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

func runCodeReviewExample(t *testing.T, c *flowclient.Client) {
	ctx := ctxT(t, 2*time.Minute)
	start := func(files ...string) *core.Run {
		run, err := c.Start(ctx, "code-review", map[string]any{"repo": "gateflow", "pr": 42, "files": files}, core.StartOptions{})
		require.NoError(t, err)
		eventually(t, c, run.ID, "waits for the human approval", waitingFor("approval:human_ok"))
		return run
	}

	// Three files, one review unreadable (on_item_fail: continue), approved by alice.
	good := start("flow/worker.go", "broken.go", "README.md")
	_, err := c.Vote(ctx, good.ID, approval.Vote{Gate: "human_ok", Kind: approval.Approve, By: "alice"})
	require.NoError(t, err)
	d, err := c.Wait(ctx, good.ID)
	require.NoError(t, err)
	// A foreach item that fails under on_item_fail: continue is recorded failed and the
	// run went on after it: it ends warning, as a run with an allowed failure does.
	require.Equal(t, runs.StatusWarning, d.Status, d.Error)
	assert.JSONEq(t, `{"verdict": "good", "reviewed": 3}`, string(d.Result))
	st := stepStatuses(d)
	for _, name := range []string{"checkout", "summary", "quality", "human_ok", "post", "cleanup"} {
		assert.Equal(t, runs.StepCompleted, st[name], name)
	}
	reviews := stepRecords(d, "review_one")
	require.Len(t, reviews, 3, "one agent step per file")
	byBranch := map[string]runs.StepStatus{}
	for _, r := range reviews {
		byBranch[r.Branch] = r.Status
		assert.Equal(t, runs.KindAgent, r.Kind)
	}
	assert.Equal(t, map[string]runs.StepStatus{"review_files/1": runs.StepCompleted, "review_files/2": runs.StepFailed,
		"review_files/3": runs.StepCompleted}, byBranch)
	assert.Equal(t, "checked out gateflow pr-42", strings.TrimSpace(stepRecords(d, "checkout")[0].Output))
	assert.Equal(t, "posted the review of 3 files on PR 42", strings.TrimSpace(stepRecords(d, "post")[0].Output))
	cleanup := stepRecords(d, "cleanup")[0]
	assert.Equal(t, "cleanup", d.State.Steps[len(d.State.Steps)-1].Name, "the always node runs last")
	assert.Equal(t, "cleaned", strings.TrimSpace(cleanup.Output))
	require.Len(t, d.State.Gates, 1)
	assert.Equal(t, "Merge PR 42? Score 88", d.State.Gates[0].Request.Message)
	assert.True(t, d.State.CostUSD.IsPositive(), "the agent steps cost money")
	replayExample(t, good.ID, "code-review.yaml")

	// A low summary score: the quality gate fails and continues; the verdict says so.
	low := start("legacy.c")
	_, err = c.Vote(ctx, low.ID, approval.Vote{Gate: "human_ok", Kind: approval.Approve, By: "bob"})
	require.NoError(t, err)
	d, err = c.Wait(ctx, low.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusWarning, d.Status, d.Error)
	assert.JSONEq(t, `{"verdict": "needs work", "reviewed": 1}`, string(d.Result))
	assert.Equal(t, runs.KindQuality, stepRecords(d, "quality")[0].Kind)

	// Rejected by a person: nothing is posted, the cleanup still runs.
	rejected := start("README.md")
	_, err = c.Vote(ctx, rejected.ID, approval.Vote{Gate: "human_ok", Kind: approval.Reject, By: "carol", Comment: "not now"})
	require.NoError(t, err)
	d, err = c.Wait(ctx, rejected.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusRejected, d.Status, d.Error)
	st = stepStatuses(d)
	_, posted := st["post"]
	assert.False(t, posted, "a rejected review is not posted")
	assert.Equal(t, runs.StepCompleted, st["cleanup"])
}

func runIncidentExample(t *testing.T, c *flowclient.Client) {
	ctx := ctxT(t, 2*time.Minute)
	start := func(alert string) *core.Run {
		run, err := c.Start(ctx, "incident", map[string]any{"alert": map[string]any{"name": alert, "host": "db-1"}, "service": "db"}, core.StartOptions{})
		require.NoError(t, err)
		return run
	}

	// Medium (the dev answer): a ticket is filed by a real shell step, no wait; with a
	// status_url the severity is POSTed to it by a real http step.
	status := startRecorder(t)
	run, err := c.Start(ctx, "incident", map[string]any{"alert": map[string]any{"name": "disk-full", "host": "db-1"}, "service": "db",
		"status_url": status.URL + "/status"}, core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.Equal(t, []map[string]any{{"service": "db", "severity": "medium"}}, status.got(), "the status page got the severity")
	assert.Equal(t, runs.StepCompleted, stepStatuses(d)["status_page"])
	d, err = c.Wait(ctx, start("disk-full").ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.Equal(t, runs.StepSkipped, stepStatuses(d)["status_page"], "no status_url: skipped")
	assert.JSONEq(t, `{"severity": "medium", "ticket": "filed a ticket for db: disk 91% full on the primary database", "acked_by": ""}`, string(d.Result))
	st := stepStatuses(d)
	assert.Equal(t, runs.StepCompleted, st["ticket"])
	for _, name := range []string{"page", "ack", "escalate", "incident-failed"} {
		_, ran := st[name]
		assert.False(t, ran, name)
	}

	// High: page, then wait for the ack keyed by the service, at most 15m; an ack for
	// another service does not end the wait.
	high := start("db-down")
	dw := eventually(t, c, high.ID, "waits for the keyed ack", waitingFor("signal:ack/db"))
	require.NotEmpty(t, dw.State.SignalWaits)
	w := dw.State.SignalWaits[len(dw.State.SignalWaits)-1]
	assert.Equal(t, "db", w.Key)
	require.NotNil(t, w.Deadline, "the wait has the node's timeout")
	assert.Equal(t, 15*time.Minute, w.Deadline.Sub(w.Since))
	_, err = c.Signal(ctx, high.ID, signals.Envelope{Name: "ack", Key: "web", Payload: json.RawMessage(`{"by": "mallory"}`)})
	require.NoError(t, err)
	_, err = c.Signal(ctx, high.ID, signals.Envelope{Name: "ack", Key: "db", Payload: json.RawMessage(`{"by": "carol"}`)})
	require.NoError(t, err)
	d, err = c.Wait(ctx, high.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.JSONEq(t, `{"severity": "high", "ticket": "", "acked_by": "carol"}`, string(d.Result))
	assert.Equal(t, "paging the on-call of db", strings.TrimSpace(stepRecords(d, "page")[0].Output))
	assert.Equal(t, runs.StepCompleted, stepStatuses(d)["ack"])
	replayExample(t, high.ID, "incident.yaml")

	// A triage that is not JSON fails its output schema: on_error goto escalate, whose
	// shell exits 7, so the run fails and on_error reports to the incidents mailbox.
	for _, alert := range []string{"garbled"} {
		d, err = c.Wait(ctx, start(alert).ID)
		require.NoError(t, err)
		require.Equal(t, runs.StatusFailed, d.Status, alert)
		assert.Contains(t, d.Error, "node escalate (step)", alert)
		assert.Contains(t, d.Error, "exit code 7", alert)
		st = stepStatuses(d)
		assert.Equal(t, runs.StepFailed, st["triage"], alert)
		assert.Equal(t, runs.StepFailed, st["escalate"], alert)
		assert.Equal(t, runs.StepCompleted, st["incident-failed"], alert)
		_, routed := st["route"]
		assert.False(t, routed, alert)
		for _, name := range []string{"page", "ticket", "log_only"} {
			_, ran := st[name]
			assert.False(t, ran, "%s: %s", alert, name)
		}
	}

	// The budget: the triage reserves its cost_limit (0.10) against the run's cap before
	// it is dispatched, so under a 0.05 cap it never runs and the run ends budget_exceeded.
	capped := decimal.RequireFromString("0.05")
	run, err = c.Start(ctx, "incident", map[string]any{"alert": map[string]any{"name": "disk-full"}, "service": "db"},
		core.StartOptions{MaxCostUSD: &capped})
	require.NoError(t, err)
	d, err = c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusBudgetExceeded, d.Status, d.Error)
	assert.True(t, d.State.CostUSD.IsZero(), "nothing was spent: %s", d.State.CostUSD)
	assert.NotEqual(t, runs.StepCompleted, stepStatuses(d)["triage"])
	_, routed := stepStatuses(d)["route"]
	assert.False(t, routed)
}
