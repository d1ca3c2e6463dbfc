package flow_test

import (
	"encoding/json"
	"fmt"

	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/mcptools"
)

// A flow calls two tools of an MCP server as steps; the worker declares the server,
// which it starts at the first call and stops with the worker.
func ExampleContext_MCP() {
	triage := flow.Define("triage", func(ctx *flow.Context, service string) (string, error) {
		args, err := json.Marshal(map[string]string{"service": service})
		if err != nil {
			return "", err
		}
		book, err := ctx.MCP("runbook", activities.MCPCall{Server: "triage", Tool: "lookup_runbook", Args: args})
		if err != nil {
			return "", err // the tool answered with an error: the step failed with its text
		}
		restart, err := ctx.MCP("restart", activities.MCPCall{Server: "triage", Tool: "restart_service", Args: args})
		if err != nil {
			return "", err
		}
		return book.Text + "\n" + restart.Text, nil
	})
	var temporalClient client.Client // client.Dial(...)
	w := flow.NewWorker(temporalClient, flow.WorkerOptions{
		MCPServers: []mcptools.Server{{Name: "triage", Command: []string{"triage-tools"}}},
	}, triage)
	fmt.Println(w.Registry().MCPServers)
	// Output: [triage]
}
