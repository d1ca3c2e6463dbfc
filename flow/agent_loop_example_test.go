package flow_test

import (
	"context"
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/flow"
)

// DiskArgs are the arguments of the disk_usage tool: the model fills them.
type DiskArgs struct {
	Host string `json:"host"`
}

// DiskUsage is an activity (register it with Worker.RegisterActivity) used as a tool.
func DiskUsage(_ context.Context, in DiskArgs) (int, error) { return 97, nil }

func ExampleContext_AgentLoop() {
	disk := flow.ActivityTool("disk_usage", DiskUsage, flow.ToolDescription("Percent of the disk used on a host"))
	fmt.Println(disk.Name+":", disk.Description)
	fmt.Println(string(disk.Parameters))

	triage := flow.Define("triage", func(ctx *flow.Context, host string) (string, error) {
		res, err := ctx.AgentLoop("diagnose", flow.AgentLoop{
			Agent: activities.Agent{Prompt: "Why is " + host + " slow?", Model: "gpt-4o-mini",
				MaxBudgetUSD: decimal.RequireFromString("0.50")}, // the loop's cost cap
			Tools:         []flow.Tool{disk},
			MaxTurns:      6,
			AnswerOnLimit: true, // at a limit, one last turn asks for the answer
		})
		if err != nil {
			return "", err // a *flow.AgentLimitError without AnswerOnLimit
		}
		return fmt.Sprintf("%s (%d turns, %d tool calls, $%s)", res.Text, res.Turns, res.ToolCalls, res.CostUSD), nil
	})
	fmt.Println(triage.Err())
	// Output:
	// disk_usage: Percent of the disk used on a host
	// {"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,"patternProperties":{"^[Hh][Oo][Ssſ][Tt]$":{"type":["string","null"]}},"properties":{"host":{"type":["string","null"]}},"type":"object"}
	// <nil>
}
