package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/flowdef/interp"
	"github.com/gateflow/gateflow/runs"
	"github.com/gateflow/gateflow/testsuite"
)

// chatProvider is a local server speaking the OpenAI chat-completions wire format: it
// keeps every request body, and answers the n-th (from 0) with answer(n, body).
type chatProvider struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
}

func startChatProvider(t *testing.T, answer func(n int, body []byte, r *http.Request) (loopTurn, bool)) *chatProvider {
	p := &chatProvider{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		n := len(p.bodies)
		p.bodies = append(p.bodies, string(body))
		p.mu.Unlock()
		turn, ok := answer(n, body, r)
		if !ok {
			http.Error(w, `{"error":{"message":"no answer"}}`, http.StatusBadRequest)
			return
		}
		_, _ = w.Write(turn.wire(n))
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *chatProvider) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.bodies...)
}

// chatRequest is what the tests read of a chat-completions request.
type chatRequest struct {
	MaxTokens  int             `json:"max_tokens"`
	ToolChoice string          `json:"tool_choice"`
	Messages   json.RawMessage `json:"messages"`
}

func decodeChat(t *testing.T, body string) chatRequest {
	t.Helper()
	var r chatRequest
	require.NoError(t, json.Unmarshal([]byte(body), &r))
	return r
}

// The money test's price: input free and output $10 a million tokens, so a turn of 1000
// output tokens (its MaxTokens) costs exactly X = $0.01 and so is its worst case.
var (
	moneyPrices = llm.PriceTable{"gpt-4o-mini": {InputPerMTok: decimal.Zero, OutputPerMTok: decimal.RequireFromString("10")}}
	moneyX      = decimal.RequireFromString("0.01")
	moneyCap    = moneyX.Mul(decimal.RequireFromString("2.5"))
)

// moneyLoopInput says whether the loop answers at its limit.
type moneyLoopInput struct {
	Answer bool `json:"answer"`
}

var moneyLoopFlow = flow.Define("test.agent.money", func(ctx *flow.Context, in moneyLoopInput) (string, error) {
	a := flow.AgentLoop{
		Agent: activities.Agent{Prompt: "are hosts 1-9 up?", Model: "gpt-4o-mini", MaxTokens: 1000, MaxBudgetUSD: moneyCap},
		Tools: []flow.Tool{flow.ActivityTool("lookup", LoopLookup, flow.ToolDescription("the address of a host"))},
	}
	if in.Answer {
		a.AnswerOnLimit = true
	}
	res, err := ctx.AgentLoop("triage", a)
	return res.Text, err
})

// moneyLoopYAML is moneyLoopFlow with on_limit: answer, in YAML.
const moneyLoopYAML = `name: test.agent.money.yaml
steps:
  - id: triage
    uses: agent
    with:
      prompt: "are hosts 1-9 up?"
      model: gpt-4o-mini
      max_tokens: 1000
      max_budget_usd: "0.025"
      on_limit: answer
      tools:
        - name: lookup
          action: LoopLookup
          description: the address of a host
          parameters: {type: object, properties: {host: {type: string}}, required: [host], additionalProperties: false}
  - {id: done, finish: {output: "${{ steps.triage.output }}"}}
`

// moneyAnswers answer every turn with a lookup call using all its max_tokens, and the
// answer turn (tool_choice none) with text, also using all its max_tokens.
func moneyAnswers(n int, body []byte, _ *http.Request) (loopTurn, bool) {
	var req chatRequest
	if json.Unmarshal(body, &req) != nil {
		return loopTurn{}, false
	}
	out := int64(req.MaxTokens)
	if req.ToolChoice == "none" {
		return loopTurn{text: "hosts 1-2 are up; the rest unknown", in: 300, out: out}, true
	}
	return loopTurn{calls: [][2]string{{"lookup", fmt.Sprintf(`{"host":"%d"}`, n+1)}}, in: 250, out: out}, true
}

// TestAgentLoopCostLimitFitsTwoAndAHalfTurns: a loop capped at 2.5 turns' worth of money,
// on a model the worker prices, stops after turn 2 with the cost *AgentLimitError naming
// the limit and what was spent; the provider got exactly 2 calls and the run's cost is
// exactly 2 turns (nothing under-recorded). Every turn, the first too, reserved its worst
// case, at the price pinned in the run's history (a worker with another price table
// replays it). With AnswerOnLimit (in Go and in YAML) the loop instead makes a last turn
// without tools whose max_tokens is what the half turn left pays for.
func TestAgentLoopCostLimitFitsTwoAndAHalfTurns(t *testing.T) {
	def, err := flowdef.Check("money.yaml", []byte(moneyLoopYAML), &flowdef.StaticRegistry{Actions: []string{"LoopLookup"}})
	require.NoError(t, err)
	yamlFlow, err := interp.Flow(def)
	require.NoError(t, err)
	for _, tt := range []struct {
		name   string
		f      flow.Definition
		input  any
		answer bool
	}{
		{"fail", moneyLoopFlow, moneyLoopInput{}, false},
		{"answer", moneyLoopFlow, moneyLoopInput{Answer: true}, true},
		{"yaml answer", yamlFlow, nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := startChatProvider(t, moneyAnswers)
			queue := uniqueQueue("agent-money")
			w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, StopTimeout: time.Second, Prices: moneyPrices,
				Providers: map[string]llm.Provider{llm.ProviderOpenAI: llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: "sk-test"})}},
				tt.f)
			w.RegisterActivity(LoopLookup, "")
			require.NoError(t, w.Start())
			t.Cleanup(w.Stop)
			c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})
			ctx := ctxT(t, 2*time.Minute)
			run, err := c.Start(ctx, tt.f.Name(), tt.input, core.StartOptions{})
			require.NoError(t, err)
			d, err := c.Wait(ctx, run.ID)
			require.NoError(t, err)

			// The price was pinned in the run's history: a worker whose table prices the model
			// so high that no turn would fit replays it as it ran.
			file := filepath.Join(t.TempDir(), "history.json")
			require.NoError(t, testsuite.RecordHistory(ctx, shared.tc, run.ID, file))
			dear := llm.PriceTable{"gpt-4o-mini": {InputPerMTok: decimal.Zero, OutputPerMTok: decimal.RequireFromString("1000000")}}
			assert.NoError(t, testsuite.Replay(file, flow.WorkerOptions{Prices: dear}, tt.f))

			reqs := srv.requests()
			for _, name := range []string{"turn-1", "turn-2"} {
				s := stepNamed(t, d.State.Steps, name)
				require.NotNil(t, s.CostLimitUSD, name)
				assert.True(t, moneyX.Equal(*s.CostLimitUSD), "%s reserved its worst case X: %s", name, s.CostLimitUSD)
				assert.True(t, moneyX.Equal(s.CostUSD), "%s cost X: %s", name, s.CostUSD)
			}
			if !tt.answer {
				require.Equal(t, runs.StatusFailed, d.Status)
				assert.Len(t, reqs, 2, "the third turn's worst case does not fit the half turn left: not made")
				assert.Contains(t, d.Error, "agent: cost limit reached after 2 turns (", "the limit, in the run's failure")
				assert.Contains(t, d.Error, "$0.02 spent)", "what was spent, in the run's failure")
				assert.True(t, moneyX.Mul(decimal.NewFromInt(2)).Equal(d.State.CostUSD), "exactly 2 X: %s", d.State.CostUSD)
				agent := stepNamed(t, d.State.Steps, "triage")
				assert.Equal(t, runs.StepFailed, agent.Status)
				assert.True(t, d.State.CostUSD.Equal(agent.CostUSD))
				for _, s := range d.State.Steps {
					assert.NotEqual(t, "turn-3", s.Name, "no third turn is recorded")
				}
				return
			}
			require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
			require.Len(t, reqs, 3)
			last := decodeChat(t, reqs[2])
			assert.Equal(t, "none", last.ToolChoice, "the answer turn may not call tools")
			assert.Equal(t, 500, last.MaxTokens, "the answer is as long as the $0.005 left pays for at $10 a million")
			assert.True(t, moneyCap.Equal(d.State.CostUSD), "2 X and the half turn: %s", d.State.CostUSD)
			var out string
			require.NoError(t, json.Unmarshal(d.Result, &out))
			assert.Equal(t, "hosts 1-2 are up; the rest unknown", out)
		})
	}
}
