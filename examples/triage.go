package examples

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/flow"
)

// TriageServer is the name under which the worker declares the example MCP server
// examples/mcp/triage-tools: `flow-worker --mcp triage-tools=bin/triage-tools` (make run
// does).
const TriageServer = "triage-tools"

// TriageInput is the input of the triage-agent flow.
type TriageInput struct {
	// Service is the service the incident is about (the MCP server knows checkout,
	// search and payments). Required.
	Service string `json:"service"`
	// Alert is what fired, in words.
	Alert string `json:"alert,omitempty"`
	// HealthURL is the health endpoint the agent's check_health tool GETs. Required. With
	// `make run`, the Web UI's http://127.0.0.1:8233/healthz answers.
	HealthURL string `json:"health_url"`
}

// TriageOutput is what the triage-agent flow returns: the agent's final answer and what
// the loop took.
type TriageOutput struct {
	Severity  string `json:"severity"`
	Cause     string `json:"cause"`
	Action    string `json:"action"`
	Turns     int    `json:"turns"`
	ToolCalls int    `json:"tool_calls"`
}

// triageSchema is the JSON Schema of the agent's final answer.
const triageSchema = `{"type": "object", "required": ["severity", "cause", "action"],
 "properties": {"severity": {"type": "string", "enum": ["low", "medium", "high"]},
  "cause": {"type": "string"}, "action": {"type": "string"}}}`

// TriageAgent triages an incident with an agent loop (flow.Context.AgentLoop): every
// model turn is an activity and every tool call a step, nested under the step "triage".
// Its tools: lookup_runbook, recent_deploys and restart_service of the MCP server
// triage-tools (flow.MCPTool; the loop reads the server's catalog once, as the step
// triage/tools), restart_service, the destructive one, only after an approval by
// group:release at the gate triage/restart_service (flow.ToolApproval), disk_usage (a
// shell template: df on a path the model chooses) and check_health (an HTTP GET of the
// input's health_url). examples/flows/triage-agent.yaml is the same agent as a
// definition. Under `make run` the scripted provider plays the model (ScriptedRules):
// for checkout it reads the runbook, lists the deploys, checks the disk and the health
// endpoint at once, then answers; for search it asks to restart the indexer.
var TriageAgent = flow.Define("triage-agent", triageAgent,
	flow.Description("Triage an incident with an agent: runbook, deploys, disk and health checks"),
	flow.Category("examples"),
	flow.Version("1"),
	flow.MaxCostUSD(decimal.RequireFromString("1.00")))

func triageAgent(ctx *flow.Context, in TriageInput) (TriageOutput, error) {
	switch {
	case strings.TrimSpace(in.Service) == "":
		return TriageOutput{}, flow.Permanent(errors.New("triage-agent: service is required"))
	case strings.TrimSpace(in.HealthURL) == "":
		return TriageOutput{}, flow.Permanent(errors.New("triage-agent: health_url is required (make run: http://127.0.0.1:8233/healthz)"))
	}
	alert := in.Alert
	if alert == "" {
		alert = "error rate above 5%"
	}
	res, err := ctx.AgentLoop("triage", flow.AgentLoop{
		Agent: activities.Agent{
			System: "You are the on-call engineer's assistant. Find the cause of the incident with the tools; " +
				"restart a service only when its runbook says so. Answer with JSON: severity, cause, action.",
			Prompt:         fmt.Sprintf("Triage the incident on %s: %s", in.Service, alert),
			Model:          "scripted",
			MaxTokens:      400,
			MaxBudgetUSD:   decimal.RequireFromString("0.50"), // the loop's cost cap
			ResponseSchema: json.RawMessage(triageSchema),
		},
		Tools:         triageTools(in.HealthURL),
		MaxTurns:      8,
		AnswerOnLimit: true,
	})
	if err != nil {
		return TriageOutput{}, err
	}
	var out TriageOutput
	if err := json.Unmarshal(res.JSON, &out); err != nil {
		return TriageOutput{}, flow.Permanent(fmt.Errorf("triage-agent: the answer: %w", err))
	}
	out.Turns, out.ToolCalls = res.Turns, res.ToolCalls
	return out, nil
}

// triageTools are the tools of the triage agent: three tools of the MCP server
// triage-tools (their descriptions and input schemas as the server lists them, read once
// per loop as the step triage/tools), restart_service only after an approval, and two
// local checks.
func triageTools(healthURL string) []flow.Tool {
	return []flow.Tool{
		flow.MCPTool(TriageServer, "lookup_runbook"),
		flow.MCPTool(TriageServer, "recent_deploys"),
		flow.MCPTool(TriageServer, "restart_service", flow.ToolApproval(approval.Request{
			Approvers: []string{"group:release"}, Timeout: time.Hour})),
		flow.ShellTool("disk_usage", activities.Shell{
			Command: `df -P -- "$path" | awk 'NR==2 {print $5 " used on " $6}'`, Timeout: 10 * time.Second,
		}, []flow.ToolParam{{Name: "path", Description: "An absolute path on the worker, such as /.", Required: true}},
			flow.ToolDescription("How full the disk holding a path is, on the worker's machine.")),
		flow.HTTPTool("check_health", activities.HTTP{Method: "GET", URL: healthURL, Timeout: 10 * time.Second}, nil,
			flow.ToolDescription("GETs the service's health endpoint; answers its body.")),
	}
}
