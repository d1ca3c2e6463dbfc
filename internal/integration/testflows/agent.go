package testflows

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/flow"
)

// AgentFlows returns the agent loop flows testworker serves with --openai-url (and an MCP
// server "triage", the example triage-tools, given with --mcp).
func AgentFlows() []flow.Definition { return []flow.Definition{AgentKill} }

// RunbookTool is the lookup_runbook tool of the MCP server "triage" as an agent loop's
// tool, made by hand: each call is one MCP step named after the tool.
func RunbookTool() flow.Tool {
	return flow.Tool{
		Name:        "lookup_runbook",
		Description: "Returns the runbook of a service as text.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"service":{"type":"string"}},` +
			`"required":["service"],"additionalProperties":false}`),
		Run: func(ctx *flow.Context, step string, args json.RawMessage) (string, error) {
			res, err := ctx.MCP(step, activities.MCPCall{Server: "triage", Tool: "lookup_runbook", Args: args})
			switch {
			case err != nil:
				return "", err
			case res.IsError:
				return "", errors.New(res.Text)
			}
			return res.Text, nil
		},
	}
}

// AgentKill is an agent loop whose only tool is RunbookTool, its turns on gpt-4o-mini (the
// worker's price table prices it, so every turn reserves its worst case). Its turns'
// heartbeat timeout is short so that a killed worker's turn is known lost quickly.
var AgentKill = flow.Define("test.agent.kill", func(ctx *flow.Context, prompt string) (string, error) {
	res, err := ctx.AgentLoop("triage", flow.AgentLoop{
		Agent: activities.Agent{Prompt: prompt, Model: "gpt-4o-mini"},
		Tools: []flow.Tool{RunbookTool()},
	}, flow.HeartbeatTimeout(5*time.Second))
	return res.Text, err
})
