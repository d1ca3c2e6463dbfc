package examples

import (
	"encoding/json"

	"github.com/gateflow/gateflow/activities/llm"
)

// triageRules are the scripted provider's answers for the triage agents (the model's
// side of their tool loops): each rule answers one turn, after the result of a tool.
func triageRules() []llm.ScriptRule {
	call := func(name, args string) llm.ToolCall {
		return llm.ToolCall{Name: name, Arguments: json.RawMessage(args)}
	}
	const checkout, search = "incident on checkout", "incident on search"
	return []llm.ScriptRule{
		// The triage-agent flow (triage.go) and its definition (flows/triage-agent.yaml),
		// checkout: runbook, deploys, then the disk and the health endpoint at once, then
		// the answer.
		{Match: checkout, Turn: 1, InputTokens: 450, OutputTokens: 20,
			ToolCalls: []llm.ToolCall{call("lookup_runbook", `{"service": "checkout"}`)}},
		{Match: checkout, AfterTool: "lookup_runbook", InputTokens: 560, OutputTokens: 25,
			ToolCalls: []llm.ToolCall{call("recent_deploys", `{"service": "checkout", "limit": 2}`)}},
		{Match: checkout, AfterTool: "recent_deploys", InputTokens: 700, OutputTokens: 30,
			ToolCalls: []llm.ToolCall{call("disk_usage", `{"path": "/"}`), call("check_health", `{}`)}},
		{Match: checkout, AfterTool: "check_health", InputTokens: 800, OutputTokens: 60,
			Text: `{"severity": "high", "cause": "deploy checkout-v1.9 by ana; the disk and the health endpoint are fine", ` +
				`"action": "roll back checkout-v1.9 (runbook step 2)"}`},

		// search: the runbook says restart, which a person approves first.
		{Match: search, Turn: 1, InputTokens: 450, OutputTokens: 20,
			ToolCalls: []llm.ToolCall{call("lookup_runbook", `{"service": "search"}`)}},
		{Match: search, AfterTool: "lookup_runbook", InputTokens: 540, OutputTokens: 20,
			ToolCalls: []llm.ToolCall{call("restart_service", `{"service": "search"}`)}},
		{Match: search, AfterTool: "restart_service", ResultMatch: "restarted", InputTokens: 600, OutputTokens: 40,
			Text: `{"severity": "medium", "cause": "index lag above 5 minutes", "action": "restarted search: 3 of 3 instances healthy"}`},
		{Match: search, AfterTool: "restart_service", InputTokens: 600, OutputTokens: 40,
			Text: `{"severity": "medium", "cause": "index lag above 5 minutes", "action": "restart refused: page the search on-call"}`},
	}
}
