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
// triage-tools (restart_service, the destructive one, only after an approval by
// group:release), disk_usage (a shell template: df on a path the model chooses) and
// check_health (an HTTP GET of the input's health_url). examples/flows/triage-agent.yaml
// is the same agent as a definition. Under `make run` the scripted provider plays the
// model (ScriptedRules): for checkout it reads the runbook, lists the deploys, checks the
// disk and the health endpoint at once, then answers; for search it asks to restart the
// indexer.
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
		Tools:    triageTools(in.HealthURL),
		MaxTurns: 8,
		OnLimit:  flow.AnswerOnLimit,
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

// triageTools are the tools of the triage agent.
func triageTools(healthURL string) []flow.Tool {
	return []flow.Tool{
		// TODO(i33-mcp): flow.MCPTool(TriageServer, "lookup_runbook") etc. once MCPTool lands;
		// until then the MCP tools are written by hand over ctx.MCP.
		mcpTool("lookup_runbook", "Returns the runbook of a service as text.", serviceParams),
		mcpTool("recent_deploys", "Lists the last deploys of a service, newest first.", deploysParams),
		restartTool(),
		flow.ShellTool("disk_usage", activities.Shell{
			Command: `df -P -- "$path" | awk 'NR==2 {print $5 " used on " $6}'`, Timeout: 10 * time.Second,
		}, []flow.ToolParam{{Name: "path", Description: "An absolute path on the worker, such as /.", Required: true}},
			flow.ToolDescription("How full the disk holding a path is, on the worker's machine.")),
		flow.HTTPTool("check_health", activities.HTTP{Method: "GET", URL: healthURL, Timeout: 10 * time.Second}, nil,
			flow.ToolDescription("GETs the service's health endpoint; answers its body.")),
	}
}

// The parameters of the MCP server's tools, as the model sees them.
const (
	serviceParams = `{"type": "object", "required": ["service"], "additionalProperties": false,
 "properties": {"service": {"type": "string", "description": "the service's name, such as checkout"}}}`
	deploysParams = `{"type": "object", "required": ["service"], "additionalProperties": false,
 "properties": {"service": {"type": "string", "description": "the service's name, such as checkout"},
  "limit": {"type": "integer", "minimum": 1, "maximum": 5, "description": "how many deploys, newest first (default 3)"}}}`
)

// mcpTool is a tool that calls the tool of the same name of the triage-tools MCP server
// as a step (ctx.MCP); a tool error goes back to the model.
func mcpTool(name, description, params string) flow.Tool {
	return flow.Tool{Name: name, Description: description, Parameters: json.RawMessage(params),
		Run: func(ctx *flow.Context, step string, args json.RawMessage) (string, error) {
			return callMCP(ctx, step, name, args)
		}}
}

// callMCP calls tool of the triage-tools server as the step named step: the answer's
// text (its structured content when it has no text), or the tool's error.
func callMCP(ctx *flow.Context, step, tool string, args json.RawMessage) (string, error) {
	res, err := ctx.MCP(step, activities.MCPCall{Server: TriageServer, Tool: tool, Args: args})
	switch {
	case err != nil:
		return "", err
	case res.IsError:
		return "", errors.New(res.Text)
	case res.Text == "" && len(res.Structured) > 0:
		return string(res.Structured), nil
	}
	return res.Text, nil
}

// restartTool is restart_service of the MCP server, which only runs once a person of
// group:release approved it; a rejection goes back to the model as the tool's error.
//
// TODO(i33-approve): flow.MCPTool(TriageServer, "restart_service",
// flow.ToolApproval(approval.Request{Approvers: []string{"group:release"}, Timeout: time.Hour}))
// once MCPTool and ToolApproval land.
func restartTool() flow.Tool {
	return flow.Tool{Name: "restart_service",
		Description: "Restarts every instance of a service. Destructive: in-flight requests fail. A person approves it first.",
		Parameters:  json.RawMessage(serviceParams),
		Run: func(ctx *flow.Context, step string, args json.RawMessage) (string, error) {
			var a struct {
				Service string `json:"service"`
			}
			if err := json.Unmarshal(args, &a); err != nil || a.Service == "" {
				return "", fmt.Errorf("restart_service: want {\"service\": \"<name>\"}, got %s", args)
			}
			if _, err := ctx.Approval("approve-restart", approval.Request{
				Message:   "Restart " + a.Service + "? (asked by the triage agent)",
				Details:   "The agent calls `restart_service` with `" + string(args) + "`.",
				Approvers: []string{"group:release"},
				Timeout:   time.Hour,
			}); err != nil {
				return "", err // rejected or timed out: the model hears why
			}
			return callMCP(ctx, step, "restart_service", args)
		}}
}
