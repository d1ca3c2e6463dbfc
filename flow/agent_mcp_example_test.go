package flow_test

import (
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/flow"
)

// RestartArgs is the input of the restart flow, and so the arguments of its tool.
type RestartArgs struct {
	Service string `json:"service"`
}

// restartFlow is a flow an agent may run as a tool (it runs as a child run).
var restartFlow = flow.Define("ops.restart", func(ctx *flow.Context, in RestartArgs) (string, error) {
	res, err := ctx.Shell("restart", activities.Shell{Command: "systemctl restart " + in.Service})
	return res.Stdout, err
}, flow.Description("Restarts a service"))

// An agent loop with a tool of an MCP server declared on the worker
// (WorkerOptions.MCPServers, flow-worker --mcp triage=...), a flow run as a child, and an
// MCP resource read into the conversation before the first turn.
func ExampleMCPTool() {
	runbook := flow.MCPTool("triage", "lookup_runbook") // description and schema: the server's
	restart := flow.FlowTool(restartFlow)               // schema: RestartArgs'
	fmt.Println(runbook.Name, restart.Name+":", restart.Description)

	triage := flow.Define("triage-mcp", func(ctx *flow.Context, service string) (string, error) {
		res, err := ctx.AgentLoop("diagnose", flow.AgentLoop{
			Agent: activities.Agent{Prompt: service + " is slow: find out why and fix it", Model: "gpt-4o-mini",
				MaxBudgetUSD: decimal.RequireFromString("0.50")}, // the turns' and the child's cost
			Tools: []flow.Tool{runbook, restart},
			Reads: []activities.MCPRead{{Server: "triage", URI: "runbook://" + service}},
		})
		return res.Text, err
	})
	fmt.Println(triage.Err())
	// Output:
	// lookup_runbook ops_restart: Restarts a service
	// <nil>
}
