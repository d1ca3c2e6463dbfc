package integration

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	"github.com/gateflow/gateflow/mcptools"
	"github.com/gateflow/gateflow/runs"
	"github.com/gateflow/gateflow/testsuite"
)

// loopServiceArgs are the arguments of the loop's child flow tool.
type loopServiceArgs struct {
	Service string `json:"service"`
}

// loopRestartOut is what the child flow returns; as an activity result it reports its
// cost (activities.CostReporter).
type loopRestartOut struct {
	Restarted string          `json:"restarted"`
	CostUSD   decimal.Decimal `json:"cost_usd"`
}

// StepCostUSD implements activities.CostReporter.
func (o loopRestartOut) StepCostUSD() decimal.Decimal { return o.CostUSD }

// loopRestartCost is what one run of the child flow costs.
var loopRestartCost = decimal.RequireFromString("0.0137")

// LoopPaidRestart is the child flow's one step: an activity that reports a cost.
func LoopPaidRestart(_ context.Context, in loopServiceArgs) (loopRestartOut, error) {
	return loopRestartOut{Restarted: in.Service, CostUSD: loopRestartCost}, nil
}

// loopRestartFlow is the child flow the agent loop calls as a tool.
var loopRestartFlow = flow.Define("test.loop.restart", func(ctx *flow.Context, in loopServiceArgs) (loopRestartOut, error) {
	return flow.Step[loopRestartOut](ctx, "restart", LoopPaidRestart, in)
}, flow.Description("Restarts a service."))

// agentMCPFlow is a loop over three tools: an MCP tool, a child flow and an activity.
var agentMCPFlow = flow.Define("test.agent.mcp", func(ctx *flow.Context, prompt string) (string, error) {
	res, err := ctx.AgentLoop("triage", flow.AgentLoop{
		Agent: activities.Agent{Prompt: prompt, Model: "gpt-4o-mini", MaxBudgetUSD: decimal.RequireFromString("1")},
		Tools: []flow.Tool{
			flow.MCPTool("triage", "lookup_runbook"),
			flow.FlowTool(loopRestartFlow),
			flow.ActivityTool("lookup", LoopLookup, flow.ToolDescription("the address of a host")),
		},
	})
	return res.Text, err
})

// agentMCPYAML is agentMCPFlow written in YAML.
const agentMCPYAML = `name: test.agent.mcp.yaml
steps:
  - id: triage
    uses: agent
    with:
      prompt: "checkout is slow"
      model: gpt-4o-mini
      max_budget_usd: "1"
      tools:
        - mcp: triage
          tool: lookup_runbook
        - flow: test.loop.restart
        - name: lookup
          action: LoopLookup
          description: the address of a host
          parameters: {type: object, properties: {host: {type: string}}, required: [host], additionalProperties: false}
  - {id: done, finish: {output: "${{ steps.triage.output }}"}}
`

// agentMCPBadYAML grants a tool the MCP server does not have.
const agentMCPBadYAML = `name: test.agent.mcp.bad
steps:
  - id: triage
    uses: agent
    with:
      prompt: "checkout is slow"
      model: gpt-4o-mini
      tools:
        - {mcp: triage, tool: reboot_world}
`

// buildTriageTools builds the example MCP server and returns its path.
func buildTriageTools(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "triage-tools")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/gateflow/gateflow/examples/mcp/triage-tools").CombinedOutput()
	require.NoError(t, err, "building triage-tools: %s", out)
	return bin
}

// mcpLoopRun is one run of an agent loop flow on a worker of its own, with the example
// MCP server (its calls counted in count) and a local provider answering turns.
type mcpLoopRun struct {
	srv     *loopProvider
	d       *runs.Description
	ids     []string
	count   string
	servers []mcptools.Server
}

func runMCPAgentLoop(ctx context.Context, t *testing.T, bin string, f flow.Definition, name string, input any, turns []loopTurn) mcpLoopRun {
	t.Helper()
	r := mcpLoopRun{srv: startLoopProvider(t, turns), count: filepath.Join(t.TempDir(), "calls")}
	r.servers = []mcptools.Server{{Name: "triage", Command: []string{bin, "--count-file", r.count}}}
	queue := uniqueQueue("agent-mcp")
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, StopTimeout: time.Second, MCPServers: r.servers,
		Providers: map[string]llm.Provider{llm.ProviderOpenAI: llm.NewOpenAI(llm.OpenAIConfig{BaseURL: r.srv.URL + "/v1", APIKey: "sk-test"})}},
		f, loopRestartFlow)
	w.RegisterActivity(LoopLookup, "")
	w.RegisterActivity(LoopPaidRestart, "")
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})
	run, err := c.Start(ctx, name, input, core.StartOptions{})
	require.NoError(t, err)
	r.d, err = c.Wait(ctx, run.ID)
	require.NoError(t, err)
	for _, s := range r.d.State.Steps {
		r.ids = append(r.ids, s.ActivityID)
	}
	return r
}

// countLines is the MCP server's count file: one line per tool call.
func countLines(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// A 4-turn loop calling three tools (an MCP tool over stdio, a child flow that costs
// money, an activity): one gateflow.agent.turn per turn, one step per tool call, each MCP
// call made once, the run's cost the turns' plus the child's to the cent; the same loop
// in YAML gives the same records; the history replays without the MCP server.
func TestAgentLoopThreeToolsMCPAndChild(t *testing.T) {
	turns := []loopTurn{
		{calls: [][2]string{{"lookup_runbook", `{"service":"checkout"}`}}, in: 1000, out: 30},
		{calls: [][2]string{{"test_loop_restart", `{"service":"checkout"}`}}, in: 1500, out: 25},
		{calls: [][2]string{{"lookup", `{"host":"7"}`}}, in: 1800, out: 20},
		{text: "restarted checkout; host 7 is 10.0.0.7", in: 2000, out: 40},
	}
	bin := buildTriageTools(t)
	ctx := ctxT(t, 4*time.Minute)
	inGo := runMCPAgentLoop(ctx, t, bin, agentMCPFlow, agentMCPFlow.Name(), "checkout is slow", turns)
	d := inGo.d
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.JSONEq(t, `"restarted checkout; host 7 is 10.0.0.7"`, string(d.Result))

	reqs := inGo.srv.requests()
	assert.Len(t, reqs, 4, "the provider is called once per turn")
	_, scheduled, _ := historyCount(t, ctx, d.ID, activities.AgentTurnActivity)
	assert.Equal(t, 4, scheduled, "one gateflow.agent.turn activity per turn")
	_, catalogs, _ := historyCount(t, ctx, d.ID, activities.MCPCatalogActivity)
	assert.Equal(t, 1, catalogs, "the MCP catalog is read once, before turn 1")
	_, mcpCalls, _ := historyCount(t, ctx, d.ID, activities.MCPCallActivity)
	assert.Equal(t, 1, mcpCalls)
	assert.Equal(t, []string{"triage", "triage/tools", "triage/turn-1", "triage/lookup_runbook", "triage/turn-2",
		"triage/test_loop_restart", "triage/turn-3", "triage/lookup", "triage/turn-4"}, inGo.ids)
	assert.Equal(t, runs.KindMCP, stepNamed(t, d.State.Steps, "lookup_runbook").Kind)
	child := stepNamed(t, d.State.Steps, "test_loop_restart")
	assert.Equal(t, runs.KindChild, child.Kind)
	require.NotNil(t, child.Child)
	assert.Equal(t, d.ID+"/triage/test_loop_restart", child.Child.ID, "the child run is nested under the agent step")
	assert.Equal(t, []string{"lookup_runbook checkout"}, countLines(t, inGo.count), "the MCP tool ran exactly once")

	// The model saw the MCP tool as the server lists it, and got the runbook back.
	var first struct {
		Tools []struct {
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal([]byte(reqs[0]), &first))
	require.Len(t, first.Tools, 3)
	assert.Equal(t, "Returns the runbook of a service as text.", first.Tools[0].Function.Description)
	assert.Contains(t, string(first.Tools[0].Function.Parameters), `"service"`)
	assert.Contains(t, reqs[1], "Check the error rate on the checkout dashboard", "the tool's result went back to the model")
	assert.Contains(t, reqs[2], `\"restarted\":\"checkout\"`, "the child's output went back as JSON")

	want := loopRestartCost
	for _, tr := range turns {
		want = want.Add(priced(t, tr.in, tr.out))
	}
	assert.Equal(t, want.StringFixed(2), d.State.CostUSD.StringFixed(2), "the run's cost: the turns' and the child's, to the cent")
	assert.True(t, want.Equal(d.State.CostUSD), "exactly: want %s, got %s", want, d.State.CostUSD)
	assert.True(t, loopRestartCost.Equal(child.CostUSD), "the child step carries the child's cost: %s", child.CostUSD)
	assert.True(t, want.Equal(d.State.Steps[0].CostUSD), "the loop's spend includes the child: %s", d.State.Steps[0].CostUSD)

	// The same loop in YAML: the same steps, activities, MCP calls and cost.
	reg := flowdef.NewStaticRegistry(core.RegistryInfo{Actions: []string{"LoopLookup", "LoopPaidRestart"}, MCPServers: []string{"triage"},
		Flows: []string{loopRestartFlow.Name()}, FlowInputSchemas: map[string]json.RawMessage{loopRestartFlow.Name(): loopRestartFlow.Info().InputSchema}})
	def, err := flowdef.Check("agent-mcp.yaml", []byte(agentMCPYAML), reg)
	require.NoError(t, err)
	f, err := interp.Flow(def, interp.Registry(reg))
	require.NoError(t, err)
	inYAML := runMCPAgentLoop(ctx, t, bin, f, def.Name, nil, turns)
	require.Equal(t, runs.StatusCompleted, inYAML.d.Status, inYAML.d.Error)
	assert.Equal(t, inGo.ids, inYAML.ids, "one step per turn and per tool call, named as in Go")
	for _, act := range []string{activities.AgentTurnActivity, activities.MCPCatalogActivity, activities.MCPCallActivity, activities.AgentActivity} {
		_, wantN, _ := historyCount(t, ctx, d.ID, act)
		_, gotN, _ := historyCount(t, ctx, inYAML.d.ID, act)
		assert.Equal(t, wantN, gotN, "%s activities", act)
	}
	assert.Len(t, inYAML.srv.requests(), 4)
	require.NoError(t, json.Unmarshal([]byte(inYAML.srv.requests()[0]), &first))
	require.Len(t, first.Tools, 3)
	assert.Equal(t, "test_loop_restart", first.Tools[1].Function.Name)
	assert.Contains(t, string(first.Tools[1].Function.Parameters), `"service"`, "the Go flow's input schema, from the registry")
	assert.Equal(t, []string{"lookup_runbook checkout"}, countLines(t, inYAML.count))
	assert.True(t, want.Equal(inYAML.d.State.CostUSD), "YAML cost: want %s, got %s", want, inYAML.d.State.CostUSD)
	assert.True(t, want.Equal(inYAML.d.State.Steps[0].CostUSD), "YAML loop spend: %s", inYAML.d.State.Steps[0].CostUSD)

	// Replays read the catalog and the tool's answer from the history: no server is asked.
	file := filepath.Join(t.TempDir(), "history.json")
	require.NoError(t, testsuite.RecordHistory(ctx, shared.tc, d.ID, file))
	require.NoError(t, os.Remove(bin))
	assert.NoError(t, testsuite.Replay(file, flow.WorkerOptions{MCPServers: inGo.servers}, agentMCPFlow, loopRestartFlow))
	assert.Len(t, inGo.srv.requests(), 4, "replaying calls no provider")
	assert.Equal(t, []string{"lookup_runbook checkout"}, countLines(t, inGo.count), "replaying calls no MCP tool")
}

// agentMCPUnknownFlow grants a tool the MCP server does not list.
var agentMCPUnknownFlow = flow.Define("test.agent.mcp.unknown", func(ctx *flow.Context, prompt string) (string, error) {
	res, err := ctx.AgentLoop("triage", flow.AgentLoop{
		Agent: activities.Agent{Prompt: prompt, Model: "gpt-4o-mini"},
		Tools: []flow.Tool{flow.MCPTool("triage", "reboot_world")},
	})
	return res.Text, err
})

// An MCP tool the server does not have fails the agent step before turn 1 (the provider
// is never called), in Go and in YAML, with the server's tools in the error.
func TestAgentLoopUnknownMCPToolFailsBeforeTurnOne(t *testing.T) {
	bin := buildTriageTools(t)
	ctx := ctxT(t, 3*time.Minute)
	def, err := flowdef.Check("agent-mcp-bad.yaml", []byte(agentMCPBadYAML), flowdef.NewStaticRegistry(core.RegistryInfo{MCPServers: []string{"triage"}}))
	require.NoError(t, err, "which tools a server has is known at run time only")
	yf, err := interp.Flow(def)
	require.NoError(t, err)
	for _, tc := range []struct {
		f     flow.Definition
		name  string
		input any
	}{{agentMCPUnknownFlow, agentMCPUnknownFlow.Name(), "reboot"}, {yf, def.Name, nil}} {
		r := runMCPAgentLoop(ctx, t, bin, tc.f, tc.name, tc.input, []loopTurn{{text: "never"}})
		assert.Equal(t, runs.StatusFailed, r.d.Status, tc.name)
		assert.Contains(t, r.d.Error, `mcp server "triage" has no tool "reboot_world" (it has tools lookup_runbook, recent_deploys, restart_service)`)
		assert.Empty(t, r.srv.requests(), "the provider got no call")
		assert.Equal(t, []string{"triage", "triage/tools"}, r.ids, "no turn step")
		assert.Equal(t, runs.StepFailed, r.d.State.Steps[0].Status)
		assert.Empty(t, countLines(t, r.count))
	}
}

// flowctl validate checks an agent's mcp: tools and reads against the MCP servers the
// queue's worker declares, and its flow: tools against the flows it serves, each error at
// its line:col; offline, any server passes.
func TestFlowctlValidateAgentMCPAndFlowTools(t *testing.T) {
	queue := uniqueQueue("validate-mcp")
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, StopTimeout: time.Second,
		MCPServers: []mcptools.Server{{Name: "triage", Command: []string{"never-started"}}}}, loopRestartFlow)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	require.NoError(t, os.WriteFile(good, []byte(`name: good
steps:
  - id: triage
    uses: agent
    with:
      prompt: p
      reads: [{mcp: triage, uri: 'runbook://checkout'}]
      tools:
        - {mcp: triage, tool: lookup_runbook}
        - {flow: test.loop.restart}
`), 0o644))
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte(`name: bad
steps:
  - id: triage
    uses: agent
    with:
      prompt: p
      reads: [{mcp: docs, uri: 'doc://a'}]
      tools:
        - {mcp: triag, tool: lookup_runbook}
        - {flow: test.loop.restrat}
`), 0o644))

	r := flowctlRunOn(t, queue, "validate", good)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	r = flowctlRunOn(t, queue, "validate", bad)
	assert.Equal(t, 2, r.code, r.stdout+r.stderr)
	for _, want := range []string{
		bad + ":7:21: step 'triage': with.reads[0].mcp: no MCP server 'docs' on the workers (declared: triage)",
		bad + ":9:17: step 'triage': with.tools[0].mcp: no MCP server 'triag' on the workers (declared: triage)",
		bad + ":10:18: step 'triage': with.tools[1]: no flow named 'test.loop.restrat'",
	} {
		assert.Contains(t, r.stdout, want)
	}
	assert.Equal(t, "flowctl: 3 errors in 1 of 1 file\n", r.stderr)

	r = flowctlRunOn(t, queue, "validate", "--offline", bad)
	assert.Equal(t, 2, r.code)
	assert.NotContains(t, r.stdout, "no MCP server", "offline, the servers are not known")
	assert.Contains(t, r.stdout, "no flow named 'test.loop.restrat'")
}
