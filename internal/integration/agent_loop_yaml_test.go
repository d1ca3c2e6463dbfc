package integration

import (
	"path/filepath"
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

// agentLoopYAML is agentLoopFlow (agent_loop_test.go) written in YAML.
const agentLoopYAML = `name: test.agent.loop.yaml
steps:
  - id: triage
    uses: agent
    with:
      prompt: "are hosts 1-3 up?"
      model: gpt-4o-mini
      max_budget_usd: "1"
      tools:
        - name: lookup
          action: LoopLookup
          description: the address of a host
          parameters: {type: object, properties: {host: {type: string}}, required: [host], additionalProperties: false}
        - name: uptime
          action: LoopUptime
          description: the uptime in days
  - {id: done, finish: {output: "${{ steps.triage.output }}"}}
`

// The 4-turn loop of TestAgentLoopFourTurnsWithActivityTools, from YAML: the same turns,
// tool steps, cost and tokens, and its history replays.
func TestAgentLoopYAMLFourTurns(t *testing.T) {
	turns := []loopTurn{
		{calls: [][2]string{{"lookup", `{"host":"1"}`}, {"lookup", `{"host":"2"}`}}, in: 1000, out: 40},
		{calls: [][2]string{{"uptime", `{}`}}, in: 1200, out: 20},
		{calls: [][2]string{{"lookup", `{"host":"3"}`}}, in: 1300, out: 20},
		{text: "hosts 1-3 are up", in: 1400, out: 30},
	}
	srv := startLoopProvider(t, turns)
	def, err := flowdef.Check("agent-loop.yaml", []byte(agentLoopYAML), &flowdef.StaticRegistry{Actions: []string{"LoopLookup", "LoopUptime"}})
	require.NoError(t, err)
	f, err := interp.Flow(def)
	require.NoError(t, err)
	queue := uniqueQueue("agent-loop-yaml")
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, StopTimeout: time.Second,
		Providers: map[string]llm.Provider{llm.ProviderOpenAI: llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: "sk-test"})}},
		f)
	w.RegisterActivity(LoopLookup, "")
	w.RegisterActivity(LoopUptime, "")
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})
	ctx := ctxT(t, 2*time.Minute)

	run, err := c.Start(ctx, def.Name, nil, core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.JSONEq(t, `"hosts 1-3 are up"`, string(d.Result))

	assert.Len(t, srv.requests(), 4, "the provider is called once per turn")
	_, scheduled, _ := historyCount(t, ctx, run.ID, activities.AgentTurnActivity)
	assert.Equal(t, 4, scheduled, "one gateflow.agent.turn activity per turn")
	_, single, _ := historyCount(t, ctx, run.ID, activities.AgentActivity)
	assert.Zero(t, single)
	var ids []string
	for _, s := range d.State.Steps {
		ids = append(ids, s.ActivityID)
	}
	assert.Equal(t, []string{"triage", "triage/turn-1", "triage/lookup", "triage/lookup#2", "triage/turn-2",
		"triage/uptime", "triage/turn-3", "triage/lookup#3", "triage/turn-4"}, ids)

	want := decimal.Zero
	for _, tr := range turns {
		want = want.Add(priced(t, tr.in, tr.out))
	}
	assert.True(t, want.Equal(d.State.CostUSD), "the run's cost is the sum of the turns: want %s, got %s", want, d.State.CostUSD)
	assert.True(t, want.Equal(d.State.Steps[0].CostUSD), "the agent step sums its turns: %s", d.State.Steps[0].CostUSD)
	assert.Equal(t, runs.Tokens{Input: 4900, Output: 110}, d.State.Tokens)

	file := filepath.Join(t.TempDir(), "history.json")
	require.NoError(t, testsuite.RecordHistory(ctx, shared.tc, run.ID, file))
	assert.NoError(t, testsuite.Replay(file, flow.WorkerOptions{}, f))
	assert.Len(t, srv.requests(), 4, "replaying calls no provider")
}
