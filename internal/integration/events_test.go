package integration

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/events"
	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/integration/testflows"
	"github.com/gateflow/gateflow/signals"
)

// eventReceiver is a webhook endpoint that keeps every delivery.
type eventReceiver struct {
	mu     sync.Mutex
	events []events.Event
	keys   []string
}

func (r *eventReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	var e events.Event
	if json.Unmarshal(b, &e) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.events = append(r.events, e)
	r.keys = append(r.keys, req.Header.Get("Idempotency-Key"))
	r.mu.Unlock()
}

func (r *eventReceiver) forRun(run string) []events.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []events.Event
	for _, e := range r.events {
		if e.Run == run {
			out = append(out, e)
		}
	}
	return out
}

// The webhook sink receives each event of a run exactly once, across a worker restart in
// the middle of the run.
func TestWebhookSinkGetsEachEventOnceAcrossAWorkerRestart(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	rec := &eventReceiver{}
	hook := httptest.NewServer(rec)
	defer hook.Close()
	queue := "events"
	opts := flow.WorkerOptions{TaskQueue: queue, Directory: examples.Directory(), StopTimeout: time.Second,
		Providers:  map[string]llm.Provider{llm.ProviderScripted: llm.NewScripted(testflows.BudgetRules()...)},
		EventSinks: []events.Sink{events.Webhook{URL: hook.URL}}}
	w1 := flow.NewWorker(shared.tc, opts, append(examples.All(), testflows.All()...)...)
	require.NoError(t, w1.Start())
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})
	maxCost := decimal.RequireFromString("0.30")
	run, err := c.Start(ctx, "ship", examples.ShipInput{Version: "8.0.0"}, core.StartOptions{MaxCostUSD: &maxCost})
	require.NoError(t, err)
	eventually(t, c, run.ID, "input asked", waitingFor("input:release-notes"))
	w1.Stop()

	w2 := flow.NewWorker(shared.tc, opts, append(examples.All(), testflows.All()...)...)
	require.NoError(t, w2.Start())
	defer w2.Stop()
	_, err = c.Answer(ctx, flowclient.AnswerRequest{Run: run.ID, Name: "release-notes", Data: json.RawMessage(`{"summary":"Events, once each","risk":"low"}`), By: "alice"})
	require.NoError(t, err)
	eventually(t, c, run.ID, "approval asked", waitingFor("approval:ship"))
	for _, by := range []string{"alice", "bob"} {
		_, err = c.Vote(ctx, run.ID, approval.Vote{Gate: "ship", Kind: approval.Approve, By: by})
		require.NoError(t, err)
	}
	eventually(t, c, run.ID, "signal awaited", waitingFor("signal:deploy-done/8.0.0"))
	_, err = c.Signal(ctx, "", signals.Envelope{Name: "deploy-done", Key: "8.0.0", Payload: json.RawMessage(`{"environment":"prod"}`)})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)

	// A budget run for the budget events: $0.25 of $0.30 crosses 80%, the next step is refused.
	spend, err := c.Start(ctx, "test.spend", testflows.SpendInput{Steps: []testflows.SpendStep{
		{Name: "a", Prompt: "cost-25c", LimitUSD: "0.25"}, {Name: "b", Prompt: "cost-25c", LimitUSD: "0.25"}}},
		core.StartOptions{MaxCostUSD: &maxCost})
	require.NoError(t, err)
	_, err = c.Wait(ctx, spend.ID)
	require.NoError(t, err)

	seen := map[string]int{}
	count := map[string]int{}
	for _, e := range append(rec.forRun(run.ID), rec.forRun(spend.ID)...) {
		seen[e.ID]++
		count[string(e.Type)+" "+e.Step+" "+e.Status]++
	}
	for id, n := range seen {
		assert.Equal(t, 1, n, "event %s delivered once", id)
	}
	for _, want := range []string{
		"input.requested release-notes ", "input.received release-notes ",
		"approval.requested ship ", "approval.decided ship approved",
		"signal.awaited deploy-done ", "signal.received deploy-done ",
		"run.status_changed  awaiting_input", "run.status_changed  awaiting_approval", "run.status_changed  completed",
		"step.started a running", "step.completed a completed", "budget.warning a ", "budget.exceeded  ",
		"run.status_changed  budget_exceeded",
	} {
		assert.Equal(t, 1, count[want], "%q once; got %v", want, count)
	}
	rec.mu.Lock()
	for i, e := range rec.events {
		assert.Equal(t, e.ID, rec.keys[i], "the Idempotency-Key header is the event ID")
	}
	rec.mu.Unlock()
}
