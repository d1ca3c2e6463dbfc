package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/mcptools"
)

// Temporal activity names of the MCP activities (MCPActivities).
const (
	// MCPCatalogActivity lists the tools of MCP servers (MCPActivities.Catalog).
	MCPCatalogActivity = "gateflow.mcp.catalog"
	// MCPCallActivity calls one tool of an MCP server (MCPActivities.Call).
	MCPCallActivity = "gateflow.mcp.call"
	// MCPReadActivity reads one resource of an MCP server (MCPActivities.Read).
	MCPReadActivity = "gateflow.mcp.read"
)

// Temporal application error types of the MCP activities.
const (
	// MCPServerErrorType: the server could not be started or reached, its connection broke
	// or the call timed out (mcptools.IsRetryable). Retryable. A retried call may run the
	// tool again: the server could not say whether it had run.
	MCPServerErrorType = "gateflow.MCPServer"
	// MCPProtocolErrorType: the server refused the request (an unknown tool or resource,
	// invalid parameters), answered over the size limit, or the worker has no server of
	// that name. Non-retryable.
	MCPProtocolErrorType = "gateflow.MCPProtocol"
	// MCPToolErrorType: the tool ran and answered with an error, and the call asked for
	// that to fail the activity (MCPCall.FailOnError). Non-retryable; the details carry the
	// mcptools.Result.
	MCPToolErrorType = "gateflow.MCPToolError"
)

// MCPCatalog is the input of MCPCatalogActivity: the servers whose tools to list.
type MCPCatalog struct {
	// Servers are the declared names of the servers; empty means every server of the
	// worker.
	Servers []string `json:"servers,omitempty"`
}

// MCPCall is the input of MCPCallActivity: one call of a tool.
type MCPCall struct {
	// Server is the declared name of the server (flow.WorkerOptions.MCPServers). Required.
	Server string `json:"server"`
	// Tool is the tool's name. Required.
	Tool string `json:"tool"`
	// Args are the tool's arguments, a JSON object; empty means {}.
	Args json.RawMessage `json:"args,omitempty"`
	// FailOnError makes a tool that answers with an error fail the activity
	// (MCPToolErrorType, non-retryable) instead of returning the result with IsError set.
	FailOnError bool `json:"fail_on_error,omitempty"`
}

// MCPRead is the input of MCPReadActivity: one resource to read.
type MCPRead struct {
	// Server is the declared name of the server. Required.
	Server string `json:"server"`
	// URI is the resource's URI, such as runbook://checkout. Required.
	URI string `json:"uri"`
}

// Validate checks the call before it is dispatched: a server and a tool are named and
// the arguments, if any, are a JSON object.
func (c MCPCall) Validate() error {
	if strings.TrimSpace(c.Server) == "" {
		return errors.New("mcp call: the server is empty")
	}
	if strings.TrimSpace(c.Tool) == "" {
		return fmt.Errorf("mcp call to server %s: the tool is empty", c.Server)
	}
	if len(c.Args) == 0 {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(c.Args, &obj); err != nil || obj == nil {
		return fmt.Errorf("mcp call %s/%s: the arguments must be a JSON object, not %s", c.Server, c.Tool, httpOneLine(string(c.Args), 80))
	}
	return nil
}

// MCPActivities serve the MCP activities from a pool of servers; flow.NewWorker
// registers them when its options declare MCP servers. A nil Pool refuses every call
// (MCPProtocolErrorType).
type MCPActivities struct {
	Pool *mcptools.Pool
}

// Catalog lists the tools of the servers, sorted; the workflow records it, so that a
// replay reads tools and schemas from its history and never from a server.
func (a *MCPActivities) Catalog(ctx context.Context, in MCPCatalog) (mcptools.Catalog, error) {
	if err := a.check(); err != nil {
		return mcptools.Catalog{}, err
	}
	cat, err := mcpWait(ctx, "listing the tools of "+mcpServerList(a.Pool, in.Servers), func() (*mcptools.Catalog, error) {
		return a.Pool.Catalog(ctx, in.Servers...)
	})
	if err != nil {
		return mcptools.Catalog{}, mcpError(ctx, err)
	}
	return *cat, nil
}

// Call calls a tool. A tool that ran and failed is a result with IsError set (or, with
// FailOnError, a non-retryable MCPToolErrorType); a server that could not be asked is a
// retryable MCPServerErrorType; a refused request a non-retryable MCPProtocolErrorType.
func (a *MCPActivities) Call(ctx context.Context, in MCPCall) (mcptools.Result, error) {
	if err := in.Validate(); err != nil {
		return mcptools.Result{}, temporal.NewNonRetryableApplicationError(err.Error(), InvalidStepErrorType, nil)
	}
	if err := a.check(); err != nil {
		return mcptools.Result{}, err
	}
	res, err := mcpWait(ctx, fmt.Sprintf("calling tool %s of mcp server %s", in.Tool, in.Server), func() (*mcptools.Result, error) {
		return a.Pool.CallTool(ctx, in.Server, in.Tool, in.Args)
	})
	if err != nil {
		return mcptools.Result{}, mcpError(ctx, err)
	}
	if res.IsError && in.FailOnError {
		return *res, temporal.NewNonRetryableApplicationError(fmt.Sprintf("mcp tool %s of server %s failed: %s",
			in.Tool, in.Server, httpOneLine(res.Text, 300)), MCPToolErrorType, nil, *res)
	}
	return *res, nil
}

// Read reads a resource, its text bounded like a tool result.
func (a *MCPActivities) Read(ctx context.Context, in MCPRead) (mcptools.ResourceContent, error) {
	if strings.TrimSpace(in.Server) == "" || strings.TrimSpace(in.URI) == "" {
		return mcptools.ResourceContent{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("mcp read: want a server and a URI, got server %q, uri %q", in.Server, in.URI), InvalidStepErrorType, nil)
	}
	if err := a.check(); err != nil {
		return mcptools.ResourceContent{}, err
	}
	res, err := mcpWait(ctx, fmt.Sprintf("reading %s of mcp server %s", in.URI, in.Server), func() (*mcptools.ResourceContent, error) {
		return a.Pool.ReadResource(ctx, in.Server, in.URI)
	})
	if err != nil {
		return mcptools.ResourceContent{}, mcpError(ctx, err)
	}
	return *res, nil
}

func (a *MCPActivities) check() error {
	if a == nil || a.Pool == nil {
		return temporal.NewNonRetryableApplicationError("mcp: the worker has no MCP server pool (declare WorkerOptions.MCPServers and start the worker)", MCPProtocolErrorType, nil)
	}
	return nil
}

func mcpServerList(p *mcptools.Pool, servers []string) string {
	if len(servers) == 0 {
		servers = p.Servers()
	}
	return "mcp servers " + strings.Join(servers, ", ")
}

// mcpWait runs f, heartbeating while it waits with what it waits for and how long.
func mcpWait[T any](ctx context.Context, what string, f func() (*T, error)) (*T, error) {
	return heartbeatWhile(ctx, func(waited time.Duration) string { return fmt.Sprintf("%s, %s", what, waited) }, f)
}

// mcpError maps a failure of the pool onto a Temporal application error.
func mcpError(ctx context.Context, err error) error {
	var se *mcptools.ServerError
	switch {
	case ctx.Err() != nil:
		return err // the activity was cancelled or timed out: Temporal decides
	case errors.As(err, &se) && se.Retryable:
		return temporal.NewApplicationErrorWithOptions(err.Error(), MCPServerErrorType, temporal.ApplicationErrorOptions{Cause: err})
	default:
		return temporal.NewNonRetryableApplicationError(err.Error(), MCPProtocolErrorType, err)
	}
}
