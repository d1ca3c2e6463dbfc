package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/integration/testflows"
)

// scriptAnswer is one answer of the scripted OpenAI server: a status, headers and the
// assistant's text with its usage (for 200 answers).
type scriptAnswer struct {
	status  int
	header  map[string]string
	text    string
	in, out int64
}

// scriptServer speaks the OpenAI Chat Completions wire format and answers each prompt
// with its script, one answer per call (the last one repeats), counting the calls.
type scriptServer struct {
	*httptest.Server
	mu      sync.Mutex
	scripts map[string][]scriptAnswer
	calls   map[string]int
}

func startScriptServer(t *testing.T, scripts map[string][]scriptAnswer) *scriptServer {
	s := &scriptServer{scripts: scripts, calls: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		data, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(data, &body)
		prompt := ""
		if n := len(body.Messages); n > 0 {
			prompt = body.Messages[n-1].Content
		}
		s.mu.Lock()
		script := s.scripts[prompt]
		i := s.calls[prompt]
		s.calls[prompt]++
		s.mu.Unlock()
		if len(script) == 0 {
			http.Error(w, `{"error":{"message":"no script for this prompt"}}`, http.StatusBadRequest)
			return
		}
		a := script[min(i, len(script)-1)]
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		if a.status != 0 && a.status != http.StatusOK {
			w.WriteHeader(a.status)
			_, _ = io.WriteString(w, `{"error":{"message":"slow down","type":"rate_limit_exceeded"}}`)
			return
		}
		text, _ := json.Marshal(a.text)
		_, _ = fmt.Fprintf(w, `{"id":"c","object":"chat.completion","model":"gpt-4o-mini",
			"choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],
			"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`, text, a.in, a.out, a.in+a.out)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *scriptServer) count(prompt string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[prompt]
}

// paidWorker serves the paid-attempt flows on their own task queue, with the scripted
// OpenAI server as the only provider.
func paidWorker(t *testing.T, queue string, srv *scriptServer) *flowclient.Client {
	t.Helper()
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, Directory: approval.StaticDirectory{},
		Providers: map[string]llm.Provider{llm.ProviderOpenAI: llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: "sk-test"})}},
		testflows.PaidFlows()...)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue, Identity: "tester"})
}

func priced(t *testing.T, in, out int64) decimal.Decimal {
	t.Helper()
	p, ok := llm.DefaultPrices().Lookup("gpt-4o-mini")
	require.True(t, ok)
	return p.Cost(llm.Usage{InputTokens: in, OutputTokens: out})
}

func TestPaidAgentChargesEveryAttemptAndStopsAtTheCap(t *testing.T) {
	bad := scriptAnswer{text: "Sure! Here is the JSON you asked for.", in: 1000, out: 100}
	good := scriptAnswer{text: `{"summary":"ok"}`, in: 2000, out: 50}
	srv := startScriptServer(t, map[string][]scriptAnswer{
		"summarize json":   {bad, bad, good},
		"summarize capped": {bad, bad, good},
	})
	c := paidWorker(t, "paid", srv)
	ctx := ctxT(t, 2*time.Minute)

	run, err := c.Start(ctx, "test.paid", testflows.PaidInput{Prompt: "summarize json", Model: "gpt-4o-mini", JSON: true}, core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.Equal(t, 3, srv.count("summarize json"), "two bad answers, then a good one")
	want := priced(t, 1000, 100).Add(priced(t, 1000, 100)).Add(priced(t, 2000, 50))
	assert.Equal(t, "0.00075", want.String(), "the price table's figures")
	assert.Equal(t, want.String(), d.State.CostUSD.String(), "all three paid attempts are charged, exactly")
	assert.Equal(t, runs.Tokens{Input: 4000, Output: 250}, d.State.Tokens)
	step := d.State.Steps[0]
	assert.Equal(t, 3, step.Attempt)
	require.Len(t, step.Attempts, 3)
	for i, a := range step.Attempts {
		assert.Equal(t, i+1, a.Attempt)
	}
	assert.Equal(t, priced(t, 1000, 100).String(), step.Attempts[0].CostUSD.String())
	assert.Contains(t, step.Attempts[1].Error, "not JSON")
	assert.Empty(t, step.Attempts[2].Error)
	assert.Equal(t, want.String(), d.State.Budget.Spent.String(), "the run's ledger")
	// In the history: one activity per attempt, and a timer between attempts.
	events := historyEvents(t, run.ID)
	assert.Equal(t, 3, countEvents(events, "ActivityTaskScheduled:gateflow.agent"), "one activity attempt each")
	assert.GreaterOrEqual(t, countEvents(events, "TimerStarted"), 2, "a durable backoff between attempts")
	out := flowctlRunOn(t, "paid", "show", run.ID)
	require.Equal(t, 0, out.code, out.stderr)
	assert.Contains(t, out.stdout, "\nAttempts\n  summarize  attempt 1  $0.0002  agent: the answer is not JSON", out.stdout)
	assert.Contains(t, out.stdout, "  summarize  attempt 3  $0.0003\n", out.stdout)

	// A cap that pays for two attempts of $0.001 but not a third: the third is not made.
	run, err = c.Start(ctx, "test.paid", testflows.PaidInput{Prompt: "summarize capped", Model: "gpt-4o-mini", JSON: true, LimitUSD: "0.001"},
		core.StartOptions{MaxCostUSD: usd("0.0013")})
	require.NoError(t, err)
	d, err = c.Wait(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusBudgetExceeded, d.Status, d.Error)
	assert.Equal(t, 2, srv.count("summarize capped"), "the third attempt is not made")
	two := priced(t, 1000, 100).Mul(decimal.NewFromInt(2))
	assert.Equal(t, two.String(), d.State.CostUSD.String())
	step = d.State.Steps[0]
	assert.Len(t, step.Attempts, 2)
	assert.Contains(t, step.Error, "attempt 3 not made")
	assert.True(t, d.State.Budget.Reserved.IsZero(), "nothing stays reserved")
}

func TestPaidAgentWaitsForCapacityThenSucceeds(t *testing.T) {
	srv := startScriptServer(t, map[string][]scriptAnswer{
		"summarize busy": {{status: http.StatusTooManyRequests, header: map[string]string{"Retry-After": "2"}}, {text: "done", in: 10, out: 5}},
	})
	c := paidWorker(t, "paid-429", srv)
	ctx := ctxT(t, 2*time.Minute)
	run, err := c.Start(ctx, "test.paid", testflows.PaidInput{Prompt: "summarize busy", Model: "gpt-4o-mini"},
		core.StartOptions{})
	require.NoError(t, err)
	d := eventually(t, c, run.ID, "waiting for capacity", func(d *runs.Description) bool {
		return d.Status == runs.StatusWaitingCapacity
	})
	assert.Equal(t, []string{"capacity:summarize"}, d.State.Waiting)
	assert.Equal(t, runs.StepWaitingCapacity, d.State.Steps[0].Status)
	d, err = c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.Equal(t, 2, srv.count("summarize busy"))
	step := d.State.Steps[0]
	assert.Equal(t, 1, step.Attempt, "the rate limit used no attempt")
	require.Len(t, step.Attempts, 1)
	assert.Equal(t, int64(2000), step.Attempts[0].WaitedMS, "the provider's Retry-After")
	assert.GreaterOrEqual(t, step.DurationMS, int64(2000))
	assert.Equal(t, priced(t, 10, 5).String(), d.State.CostUSD.String())
}

func TestPaidWaveThatDoesNotFitIsRecordedAsRefused(t *testing.T) {
	srv := startScriptServer(t, map[string][]scriptAnswer{
		"summarize wave": {{text: "ok", in: 10, out: 5}},
		"summarize long": {{text: "long", in: 10, out: 5000}},
	})
	c := paidWorker(t, "paid-wave", srv)
	ctx := ctxT(t, 2*time.Minute)
	run, err := c.Start(ctx, "test.paid.wave", testflows.PaidInput{Prompt: "summarize wave", Model: "gpt-4o-mini", LimitUSD: "0.001"},
		core.StartOptions{MaxCostUSD: usd("0.002")})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusBudgetExceeded, d.Status)
	assert.Equal(t, 0, srv.count("summarize wave"), "no step of the wave ran")
	require.Len(t, d.State.Steps, 3)
	for _, s := range d.State.Steps {
		assert.Equal(t, runs.StepRefused, s.Status, s.Name)
		assert.Contains(t, s.Error, "need $0.003 together", s.Name)
	}
	out := flowctlRunOn(t, "paid-wave", "show", run.ID)
	require.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, 3, strings.Count(out.stdout, "  refused  "), out.stdout)
	assert.NotContains(t, out.stdout, "No steps yet.")

	// An answer longer than the estimate costs more than the step's limit: flagged.
	run, err = c.Start(ctx, "test.paid", testflows.PaidInput{Prompt: "summarize long", Model: "gpt-4o-mini", LimitUSD: "0.001"}, core.StartOptions{})
	require.NoError(t, err)
	d, err = c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.True(t, d.State.Steps[0].Overshoot)
	out = flowctlRunOn(t, "paid-wave", "show", run.ID)
	require.Equal(t, 0, out.code, out.stderr)
	assert.Contains(t, out.stdout, "$0.0030 > $0.001 limit", out.stdout)
}

// historyEvents is a run's history as event type names ("TimerStarted", ...), scheduled
// activities with their type ("ActivityTaskScheduled:gateflow.agent").
func historyEvents(t *testing.T, run string) []string {
	t.Helper()
	it := shared.tc.GetWorkflowHistory(ctxT(t, 30*time.Second), run, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var out []string
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		name := e.GetEventType().String()
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			name += ":" + a.GetActivityType().GetName()
		}
		out = append(out, name)
	}
	return out
}

// countEvents counts the events of one type ("TimerStarted", "ActivityTaskScheduled:gateflow.agent").
func countEvents(events []string, kind string) int {
	n := 0
	for _, e := range events {
		if e == kind {
			n++
		}
	}
	return n
}
