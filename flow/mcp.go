package flow

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/internal/display"
	"github.com/gateflow/gateflow/mcptools"
	"github.com/gateflow/gateflow/runs"
)

// MCP calls a tool of one of the worker's MCP servers (WorkerOptions.MCPServers) as the
// step name, an activity activities.MCPCallActivity whose result the run's history
// records: a replay reads the tool's answer from there and never asks the server. A
// tool that answers with an error fails the step with its text (non-retryable,
// activities.MCPToolErrorType); with AllowFailure the step completes and the result
// has IsError set instead. A server that cannot be reached is retried like any step;
// an unknown tool is not. The step is refused before dispatch when the server is not
// one of the worker's, a name is empty, or Args is not a JSON object.
func (c *Context) MCP(name string, in activities.MCPCall, opts ...StepOption) (mcptools.Result, error) {
	var res mcptools.Result
	err := c.settle(c.dispatch(c.mcpCall(name, in, opts)), &res, describeMCP(&res))
	return res, err
}

// mcpCall turns an MCP tool call into a step's call.
func (c *Context) mcpCall(name string, in activities.MCPCall, opts []StepOption) call {
	o := c.options(opts)
	in.FailOnError = !o.allowFailure
	cl := call{name: name, kind: runs.KindMCP, activity: activities.MCPCallActivity, args: []any{in}, opts: o,
		costLimit: o.costLimit, invalid: in.Validate(),
		nonRetryable: []string{activities.MCPToolErrorType, activities.MCPProtocolErrorType}}
	if known := c.run.setup.mcpServers; cl.invalid == nil && !slices.Contains(known, in.Server) {
		list := "none"
		if len(known) > 0 {
			list = strings.Join(known, ", ")
		}
		cl.invalid = fmt.Errorf("mcp step %s: no MCP server %q on this worker (declared: %s)", name, in.Server, list)
	}
	return cl
}

func describeMCP(res *mcptools.Result) func() outcome {
	return func() outcome {
		return outcome{output: display.Preview(res.Text, 200)}
	}
}
