package testflows

import (
	"time"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/flow"
)

// AgentFlows returns the agent loop flows testworker serves with --openai-url (and an MCP
// server "triage", the example triage-tools, given with --mcp).
func AgentFlows() []flow.Definition { return []flow.Definition{AgentKill} }

// AgentKill is an agent loop whose only tool is lookup_runbook of the MCP server "triage"
// (its catalog read once, as the step triage/tools), its turns on gpt-4o-mini (the
// worker's price table prices it, so every turn reserves its worst case). Its turns'
// heartbeat timeout is short so that a killed worker's turn is known lost quickly.
var AgentKill = flow.Define("test.agent.kill", func(ctx *flow.Context, prompt string) (string, error) {
	res, err := ctx.AgentLoop("triage", flow.AgentLoop{
		Agent: activities.Agent{Prompt: prompt, Model: "gpt-4o-mini"},
		Tools: []flow.Tool{flow.MCPTool("triage", "lookup_runbook")},
	}, flow.HeartbeatTimeout(5*time.Second))
	return res.Text, err
})
