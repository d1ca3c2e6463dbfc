package integration

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
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
	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/flowdef/interp"
	"github.com/gateflow/gateflow/signals"
	"github.com/gateflow/gateflow/testsuite"
)

// loadFlowdef parses and validates testdata/flowdef/<file>.
func loadFlowdef(t *testing.T, file string) *flowdef.Definition {
	t.Helper()
	path := filepath.Join("testdata", "flowdef", file)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	def, err := flowdef.Check(path, data, &flowdef.StaticRegistry{})
	require.NoError(t, err)
	return def
}

// flowdefWorker serves interpreted flows on its own queue, agents answered by rules.
func flowdefWorker(t *testing.T, queue string, rules []llm.ScriptRule, flows ...flow.Definition) *flowclient.Client {
	t.Helper()
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, Directory: approval.StaticDirectory{}, StopTimeout: 5 * time.Second,
		Providers: map[string]llm.Provider{llm.ProviderScripted: llm.NewScripted(rules...)}}, flows...)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue, Identity: "tester"})
}

// recorder is an HTTP server that keeps the JSON bodies it was sent.
type recorder struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
}

func startRecorder(t *testing.T) *recorder {
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var v map[string]any
		_ = json.Unmarshal(b, &v)
		r.mu.Lock()
		r.bodies = append(r.bodies, v)
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok": true}`))
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) got() []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]any(nil), r.bodies...)
}

func buildInterp(t *testing.T, def *flowdef.Definition) flow.Definition {
	t.Helper()
	f, err := interp.Flow(def, interp.DefaultModel("scripted"))
	require.NoError(t, err)
	return f
}

func stepStatuses(d *runs.Description) map[string]runs.StepStatus {
	out := map[string]runs.StepStatus{}
	for _, s := range d.State.Steps {
		out[s.Name] = s.Status
	}
	return out
}

func TestFlowdefReview(t *testing.T) {
	srv := startRecorder(t)
	c := flowdefWorker(t, "flowdef-review", []llm.ScriptRule{
		{Match: "Review a.go", Text: `{"score": 90, "comments": []}`},
		{Match: "Review b.go", Text: `{"score": 70, "comments": ["naming"]}`},
		{Match: "Summarise", Text: `{"score": 85}`},
	}, buildInterp(t, loadFlowdef(t, "review.yaml")))
	ctx := ctxT(t, 2*time.Minute)

	run, err := c.Start(ctx, "it-code-review", map[string]any{
		"repo": "gateflow", "pr": 14, "files": []string{"a.go", "b.go"}, "post_url": srv.URL + "/comments",
	}, core.StartOptions{})
	require.NoError(t, err)
	_, err = c.Vote(ctx, run.ID, approval.Vote{Gate: "human_ok", Kind: approval.Approve, By: "leads"})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.JSONEq(t, `{"verdict": "good"}`, string(d.Result))

	st := stepStatuses(d)
	for _, name := range []string{"checkout", "review_one", "summary", "quality", "human_ok", "post", "cleanup"} {
		assert.Equal(t, runs.StepCompleted, st[name], name)
	}
	var reviews []string
	for _, s := range d.State.Steps {
		if s.Name == "review_one" {
			reviews = append(reviews, s.Branch)
		}
	}
	assert.ElementsMatch(t, []string{"review_files/1", "review_files/2"}, reviews, "one agent step per item, under the fan-out")
	require.Len(t, srv.got(), 1)
	assert.Equal(t, float64(2), srv.got()[0]["reviewed"])
	assert.Equal(t, map[string]any{"score": float64(85)}, srv.got()[0]["body"])
	assert.Equal(t, "Merge PR 14? Score 85", d.State.Gates[0].Request.Message)

	// Input the definition's schema refuses is refused before anything starts.
	_, err = c.Start(ctx, "it-code-review", map[string]any{"repo": "gateflow"}, core.StartOptions{})
	var ie *core.InputError
	assert.ErrorAs(t, err, &ie)
}

func TestFlowdefIncident(t *testing.T) {
	srv := startRecorder(t)
	def := loadFlowdef(t, "incident.yaml")
	c := flowdefWorker(t, "flowdef-incident", []llm.ScriptRule{
		{Match: "db-down", Text: `{"severity": "high", "summary": "database down"}`},
		{Match: "disk-full", Text: `{"severity": "medium", "summary": "disk"}`},
		{Match: "noise", Text: `{"severity": "low", "summary": "noise"}`},
	}, buildInterp(t, def))
	ctx := ctxT(t, 2*time.Minute)
	start := func(alert string) *core.Run {
		run, err := c.Start(ctx, "it-incident", map[string]any{
			"alert": map[string]any{"name": alert}, "service": "api", "page_url": srv.URL + "/page",
		}, core.StartOptions{})
		require.NoError(t, err)
		return run
	}

	// High: page, then wait for the keyed ack.
	high := start("db-down")
	_, err := c.Signal(ctx, high.ID, signals.Envelope{Name: "ack", Key: "api", Payload: json.RawMessage(`{"by": "carol"}`)})
	require.NoError(t, err)
	d, err := c.Wait(ctx, high.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.JSONEq(t, `{"severity": "high", "acked_by": "carol"}`, string(d.Result))
	st := stepStatuses(d)
	assert.Equal(t, runs.StepCompleted, st["page"])
	assert.Equal(t, runs.StepCompleted, st["ack"])
	require.NotEmpty(t, srv.got())
	assert.Equal(t, map[string]any{"service": "api", "summary": "database down"}, srv.got()[0])

	// Medium: a ticket, no wait.
	d, err = c.Wait(ctx, start("disk-full").ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.JSONEq(t, `{"severity": "medium", "acked_by": ""}`, string(d.Result))
	assert.Equal(t, runs.StepCompleted, stepStatuses(d)["ticket"])

	// Low: the default branch only sets a variable.
	d, err = c.Wait(ctx, start("noise").ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	_, paged := stepStatuses(d)["page"]
	assert.False(t, paged)
}

func TestFlowdefIncidentEscalatesAndReports(t *testing.T) {
	def := loadFlowdef(t, "incident.yaml")
	c := flowdefWorker(t, "flowdef-escalate", []llm.ScriptRule{
		{Match: "Triage", Text: `not json at all`},
	}, buildInterp(t, def))
	ctx := ctxT(t, 3*time.Minute)
	run, err := c.Start(ctx, "it-incident", map[string]any{"alert": map[string]any{"name": "weird"}, "service": "api", "page_url": "http://127.0.0.1:1/"}, core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusFailed, d.Status)
	assert.Contains(t, d.Error, "escalate")
	st := stepStatuses(d)
	assert.Equal(t, runs.StepFailed, st["triage"])
	assert.Equal(t, runs.StepFailed, st["escalate"])
	assert.Equal(t, runs.StepCompleted, st["incident-failed"], "on_error sends to the mailbox")
	_, routed := st["route"]
	assert.False(t, routed)
}

const pinnedV1 = `
name: it-pinned
steps:
  - {id: wait, gate: {type: signal, signal: go}}
  - {id: v1, uses: shell, with: {command: echo one}}
  - {id: done, finish: {output: {version: 1, said: "${{ steps.v1.output }}"}}}
`

const pinnedV2 = `
name: it-pinned
steps:
  - {id: wait, gate: {type: signal, signal: go}}
  - {id: v2, uses: shell, with: {command: echo two}}
  - {id: done, finish: {output: {version: 2, said: "${{ steps.v2.output }}"}}}
`

// A run keeps the definition it started with while the Live one is replaced; new runs
// use the new one; and the first run's history replays on a worker that only ever had
// the new definition (it reads the recorded one).
func TestFlowdefPinnedDefinition(t *testing.T) {
	v1, err := flowdef.Parse("v1.yaml", []byte(pinnedV1))
	require.NoError(t, err)
	v2, err := flowdef.Parse("v2.yaml", []byte(pinnedV2))
	require.NoError(t, err)
	live, err := interp.NewLive(v1)
	require.NoError(t, err)
	f, err := live.Flow()
	require.NoError(t, err)
	c := flowdefWorker(t, "flowdef-pinned", nil, f)
	ctx := ctxT(t, 2*time.Minute)

	old, err := c.Start(ctx, "it-pinned", map[string]any{}, core.StartOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		d, err := c.Describe(ctx, old.ID)
		return err == nil && d.Status == runs.StatusWaitingSignal
	}, time.Minute, 100*time.Millisecond)
	require.NoError(t, live.Set(v2))
	fresh, err := c.Start(ctx, "it-pinned", map[string]any{}, core.StartOptions{})
	require.NoError(t, err)
	for _, id := range []string{old.ID, fresh.ID} {
		_, err := c.Signal(ctx, id, signals.Envelope{Name: "go"})
		require.NoError(t, err)
	}
	d, err := c.Wait(ctx, old.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.JSONEq(t, `{"version": 1, "said": "one"}`, string(d.Result))
	d, err = c.Wait(ctx, fresh.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.JSONEq(t, `{"version": 2, "said": "two"}`, string(d.Result))

	file := filepath.Join(t.TempDir(), "pinned.json")
	require.NoError(t, testsuite.RecordHistory(ctx, shared.tc, old.ID, file))
	onlyV2, err := interp.Flow(v2)
	require.NoError(t, err)
	assert.NoError(t, testsuite.Replay(file, flow.WorkerOptions{}, onlyV2), "the run replays its recorded definition")
}
