package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gateflow/gateflow/quality"

	"github.com/gateflow/gateflow/runs"
	"github.com/shopspring/decimal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/integration/testflows"
)

func TestQualityGateFailsAt79Of80AndPassesAt80(t *testing.T) {
	fail := runWith(t, "test.quality", testflows.QualityInput{Prompt: "quality-review-79", Threshold: 80}, core.StartOptions{})
	assert.Equal(t, runs.StatusFailed, fail.Status, fail.Error)
	assert.Contains(t, fail.Error, "quality gate review-quality: score 79 (at review.score) is below the threshold 80")
	g := stepNamed(t, fail.State.Steps, "review-quality")
	assert.Equal(t, runs.KindQuality, g.Kind)
	assert.Equal(t, runs.StepFailed, g.Status)
	require.NotNil(t, g.Quality)
	assert.Equal(t, 79.0, g.Quality.Score)
	assert.Equal(t, 80.0, g.Quality.Threshold)
	assert.False(t, g.Quality.Passed)
	assert.Equal(t, string(quality.Fail), g.Quality.OnFail)
	assert.Equal(t, "review.score", g.Quality.Field)
	assert.True(t, g.CostUSD.IsZero(), "the gate itself costs nothing")
	review := stepNamed(t, fail.State.Steps, "review")
	assert.True(t, review.CostUSD.IsPositive(), "the review was paid for")
	assert.True(t, fail.State.CostUSD.Equal(review.CostUSD))

	pass := runWith(t, "test.quality", testflows.QualityInput{Prompt: "quality-review-80", Threshold: 80}, core.StartOptions{})
	require.Equal(t, runs.StatusCompleted, pass.Status, pass.Error)
	g = stepNamed(t, pass.State.Steps, "review-quality")
	assert.Equal(t, runs.StepCompleted, g.Status)
	require.NotNil(t, g.Quality)
	assert.Equal(t, runs.Quality{Score: 80, Threshold: 80, Field: "review.score", Passed: true, OnFail: string(quality.Fail)}, *g.Quality)
	var out runs.Quality
	require.NoError(t, json.Unmarshal(pass.State.Output, &out))
	assert.Equal(t, *g.Quality, out, "the handler got the record")

	cont := runWith(t, "test.quality", testflows.QualityInput{Prompt: "quality-review-79", Threshold: 80, OnFail: quality.Continue}, core.StartOptions{})
	assert.Equal(t, runs.StatusWarning, cont.Status, "a failing score allowed to fail: %s", cont.Error)
	g = stepNamed(t, cont.State.Steps, "review-quality")
	assert.Equal(t, runs.StepFailed, g.Status)
	assert.True(t, g.AllowedFailure)
	assert.Equal(t, 1, cont.State.AllowedFailures)
}

func TestDecideByAgentPicksAValidOptionAndIsCharged(t *testing.T) {
	before := shared.llm.scripted.Calls()
	d := runWith(t, "test.decide", testflows.DecideInput{Prompt: "decide-ship: the release checks are green. Ship v2?",
		Options: []string{"ship", "hold"}, Model: "scripted"}, core.StartOptions{MaxCostUSD: usd("1.00")})
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.Equal(t, 1, shared.llm.scripted.Calls()-before)
	var out testflows.Verdict
	require.NoError(t, json.Unmarshal(d.State.Output, &out))
	assert.Equal(t, testflows.Verdict("ship"), out)

	s := stepNamed(t, d.State.Steps, "ship-or-hold")
	assert.Equal(t, runs.KindDecision, s.Kind)
	assert.Equal(t, runs.StepCompleted, s.Status)
	require.NotNil(t, s.Decision)
	assert.Equal(t, runs.Decision{Options: []string{"ship", "hold"}, Choice: "ship", Reason: "all checks are green", By: "agent:scripted"}, *s.Decision)
	// The scripted model costs $1/M input and $2/M output tokens: 2,000 and 30.
	assert.Equal(t, "0.00206", s.CostUSD.String())
	assert.Equal(t, "0.00206", d.State.CostUSD.String(), "the decision's cost is charged to the run")
	require.NotNil(t, s.Tokens)
	assert.Equal(t, runs.Tokens{Input: 2000, Output: 30}, *s.Tokens)
	require.NotNil(t, d.State.Budget)
	require.Len(t, d.State.Budget.Charges, 1, "the decision reserved and settled like an agent step")
}

// sequenceOpenAI is a local server speaking OpenAI's Chat Completions wire format that
// gives answers in turn (the last one again once they run out).
type sequenceOpenAI struct {
	*httptest.Server
	mu      sync.Mutex
	answers []string
	calls   int
}

func newSequenceOpenAI(t *testing.T, answers ...string) *sequenceOpenAI {
	s := &sequenceOpenAI{answers: answers}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		s.mu.Lock()
		answer := s.answers[min(s.calls, len(s.answers)-1)]
		s.calls++
		s.mu.Unlock()
		content, _ := json.Marshal(answer)
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"id":"chatcmpl-q","object":"chat.completion","model":"gpt-4o-mini-2024-07-18",
			"choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],
			"usage":{"prompt_tokens":500,"completion_tokens":20,"total_tokens":520}}`, content)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *sequenceOpenAI) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func TestDecideByAgentRefusesAChoiceOutsideTheOptionsAndAsksAgain(t *testing.T) {
	srv := newSequenceOpenAI(t, `{"choice":"maybe later","reason":"unsure"}`, `{"choice":"hold","reason":"the tests are red"}`)
	queue := "quality-decide-retry"
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, StopTimeout: 5 * time.Second, Directory: approval.StaticDirectory{},
		Providers: map[string]llm.Provider{llm.ProviderOpenAI: llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: "sk-test"})}},
		testflows.QualityFlows()...)
	require.NoError(t, w.Start())
	defer w.Stop()
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue, Identity: "tester"})

	ctx := ctxT(t, 2*time.Minute)
	run, err := c.Start(ctx, "test.decide", testflows.DecideInput{Prompt: "Ship v3?", Options: []string{"ship", "hold"}, Model: "gpt-4o-mini"},
		core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.NotNil(t, d.State, d.StateError)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.Equal(t, 2, srv.count(), "the answer outside the options was refused by the schema and the model asked again")

	s := stepNamed(t, d.State.Steps, "ship-or-hold")
	assert.Equal(t, runs.StepCompleted, s.Status)
	assert.Equal(t, 2, s.Attempt, "the second attempt decided")
	require.NotNil(t, s.Decision)
	assert.Equal(t, "hold", s.Decision.Choice)
	assert.Equal(t, "the tests are red", s.Decision.Reason)
	assert.Equal(t, "agent:gpt-4o-mini-2024-07-18", s.Decision.By)
	price, ok := llm.DefaultPrices().Lookup("gpt-4o-mini")
	require.True(t, ok)
	one := price.Cost(llm.Usage{InputTokens: 500, OutputTokens: 20})
	// Both calls were paid for, and the run retries cost-bearing steps itself, so both are
	// charged: the refused one and the one that decided.
	assert.Equal(t, one.Mul(decimal.NewFromInt(2)).String(), s.CostUSD.String(), "both paid calls, exactly")
	assert.True(t, d.State.CostUSD.Equal(s.CostUSD))
	require.Len(t, s.Attempts, 2)
	assert.Contains(t, s.Attempts[0].Error, "does not match the response schema")
	assert.Contains(t, s.Attempts[0].Error, `got "maybe later"`)
}

func TestDecideByPeopleAnsweredThroughTheClient(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	c := shared.client
	run, err := c.Start(ctx, "test.decide", testflows.DecideInput{Prompt: "Ship v4?", Options: []string{"ship", "hold"},
		AssignTo: []string{"alice"}, Timeout: time.Minute}, core.StartOptions{})
	require.NoError(t, err)
	waiting := eventually(t, c, run.ID, "waiting for the decision", waitingFor("input:ship-or-hold"))
	assert.Equal(t, runs.StatusAwaitingInput, waiting.Status)
	s := stepNamed(t, waiting.State.Steps, "ship-or-hold")
	require.NotNil(t, s.Decision, "the options show while the run waits")
	assert.Equal(t, []string{"ship", "hold"}, s.Decision.Options)

	_, err = c.Answer(ctx, flowclient.AnswerRequest{Run: run.ID, Name: "ship-or-hold", Data: json.RawMessage(`"ship"`), By: "mallory"})
	refused(t, err, `"mallory" is not among the assignees`)
	_, err = c.Answer(ctx, flowclient.AnswerRequest{Run: run.ID, Name: "ship-or-hold", Data: json.RawMessage(`"maybe"`), By: "alice"})
	refused(t, err, `want one of "ship", "hold", got "maybe"`)
	ans, err := c.Answer(ctx, flowclient.AnswerRequest{Run: run.ID, Name: "ship-or-hold",
		Data: json.RawMessage(`{"choice":"hold","reason":"waiting for the security review"}`), By: "alice"})
	require.NoError(t, err)
	assert.Equal(t, "alice", ans.By)

	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	var out testflows.Verdict
	require.NoError(t, json.Unmarshal(d.State.Output, &out))
	assert.Equal(t, testflows.Verdict("hold"), out)
	s = stepNamed(t, d.State.Steps, "ship-or-hold")
	assert.Equal(t, runs.KindDecision, s.Kind)
	require.NotNil(t, s.Decision)
	assert.Equal(t, runs.Decision{Options: []string{"ship", "hold"}, Choice: "hold", Reason: "waiting for the security review",
		By: "alice", AssignTo: []string{"alice"}}, *s.Decision)
	assert.True(t, d.State.CostUSD.IsZero(), "a person's decision costs nothing")
}
