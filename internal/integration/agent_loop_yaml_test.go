package integration

import (
	"context"
	"path/filepath"
	"testing"
	"time"

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

// loopRun is one run of an agent loop flow against its own local provider.
type loopRun struct {
	srv *loopProvider
	d   *runs.Description
	ids []string
}

// runAgentLoop runs the flow f (named name) on a worker of its own, its provider
// answering turns, and waits for the run to complete.
func runAgentLoop(ctx context.Context, t *testing.T, f flow.Definition, name string, input any, turns []loopTurn) loopRun {
	srv := startLoopProvider(t, turns)
	queue := uniqueQueue("agent-loop-yaml")
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, StopTimeout: time.Second,
		Providers: map[string]llm.Provider{llm.ProviderOpenAI: llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: "sk-test"})}},
		f)
	w.RegisterActivity(LoopLookup, "")
	w.RegisterActivity(LoopUptime, "")
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})
	run, err := c.Start(ctx, name, input, core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	r := loopRun{srv: srv, d: d}
	for _, s := range d.State.Steps {
		r.ids = append(r.ids, s.ActivityID)
	}
	return r
}

// The 4-turn loop of TestAgentLoopFourTurnsWithActivityTools written in YAML gives the
// records of the Go loop: the same turn activities, tool steps, cost and tokens; and its
// history replays.
func TestAgentLoopYAMLFourTurns(t *testing.T) {
	turns := []loopTurn{
		{calls: [][2]string{{"lookup", `{"host":"1"}`}, {"lookup", `{"host":"2"}`}}, in: 1000, out: 40},
		{calls: [][2]string{{"uptime", `{}`}}, in: 1200, out: 20},
		{calls: [][2]string{{"lookup", `{"host":"3"}`}}, in: 1300, out: 20},
		{text: "hosts 1-3 are up", in: 1400, out: 30},
	}
	def, err := flowdef.Check("agent-loop.yaml", []byte(agentLoopYAML), &flowdef.StaticRegistry{Actions: []string{"LoopLookup", "LoopUptime"}})
	require.NoError(t, err)
	f, err := interp.Flow(def)
	require.NoError(t, err)
	ctx := ctxT(t, 2*time.Minute)
	inGo := runAgentLoop(ctx, t, agentLoopFlow, agentLoopFlow.Name(), "are hosts 1-3 up?", turns)
	inYAML := runAgentLoop(ctx, t, f, def.Name, nil, turns)

	assert.JSONEq(t, `"hosts 1-3 are up"`, string(inYAML.d.Result))
	assert.Len(t, inYAML.srv.requests(), 4, "the provider is called once per turn")
	for _, act := range []string{activities.AgentTurnActivity, activities.AgentActivity} {
		_, wantN, _ := historyCount(t, ctx, inGo.d.ID, act)
		_, gotN, _ := historyCount(t, ctx, inYAML.d.ID, act)
		assert.Equal(t, wantN, gotN, "%s activities", act)
	}
	assert.Equal(t, inGo.ids, inYAML.ids, "one step per turn and per tool call, named as in Go")
	assert.Len(t, inYAML.ids, 9)
	assert.True(t, inYAML.d.State.CostUSD.IsPositive())
	assert.True(t, inGo.d.State.CostUSD.Equal(inYAML.d.State.CostUSD), "cost: Go %s, YAML %s", inGo.d.State.CostUSD, inYAML.d.State.CostUSD)
	assert.True(t, inGo.d.State.Steps[0].CostUSD.Equal(inYAML.d.State.Steps[0].CostUSD), "the agent step sums its turns")
	assert.Equal(t, inGo.d.State.Tokens, inYAML.d.State.Tokens)

	file := filepath.Join(t.TempDir(), "history.json")
	require.NoError(t, testsuite.RecordHistory(ctx, shared.tc, inYAML.d.ID, file))
	assert.NoError(t, testsuite.Replay(file, flow.WorkerOptions{}, f))
	assert.Len(t, inYAML.srv.requests(), 4, "replaying calls no provider")
}
