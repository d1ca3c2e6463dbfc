// Package mcptools talks to MCP (Model Context Protocol) servers for agent steps: it
// declares them, lists their tools, calls them and reads their resources, through the
// official Go SDK (github.com/modelcontextprotocol/go-sdk). It knows nothing of workflows
// and imports nothing of Temporal: the agent loop records what it gets from here.
//
// # Declaring servers
//
// A Server is a name plus either a command the pool starts and talks to over stdio, or
// the URL of a streamable-HTTP endpoint with optional headers:
//
//	servers := []mcptools.Server{
//		{Name: "triage", Command: []string{"triage-tools", "--count-file", "/tmp/calls"}},
//		{Name: "docs", URL: "https://mcp.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer …"}},
//	}
//
// ParseServerFlag reads the same from a flag value, "name=command arg…" or
// "name=https://…", and refuses anything ambiguous with an error saying what is wrong.
//
// # Using a pool
//
// A Pool connects to a server at its first use (starting the process of a stdio server)
// and keeps the session; Close stops the processes. Deadlines come from the context.
//
//	pool, err := mcptools.NewPool(servers, mcptools.Options{})
//	…
//	defer pool.Close()
//	tools, err := pool.ListTools(ctx, "triage")                  // sorted by name
//	res, err := pool.CallTool(ctx, "triage", "lookup_runbook", json.RawMessage(`{"service":"checkout"}`))
//	doc, err := pool.ReadResource(ctx, "triage", "runbook://checkout")
//
// # Results and errors
//
// A tool that ran and failed is a value: a Result with IsError set and the reason in
// Text, to be shown to the model. Arguments that do not fit the tool's schema come back
// the same way from servers that check them (the Go SDK's servers do); Tool.ValidateArgs
// and Catalog.ValidateCall check them before the call.
//
// Everything else is a *ServerError naming the server and the operation. Its Retryable
// field says whether trying again may succeed: true when the process could not be
// started or died, the endpoint could not be reached, or the context's deadline passed;
// false for protocol errors (an unknown tool; Code holds the JSON-RPC code), for a
// cancelled context, ErrUnknownServer, ErrClosed and ErrTooLarge. A retryable error of
// CallTool does not say that the tool did not run: the pool never calls a tool again by
// itself, since tools have side effects. A connection that broke is dropped, and the next
// use starts the server again (one retry of the connect, then a *ServerError).
//
// # Limits
//
// Memory stays bounded whatever a server sends. One message from a server over
// Options.MaxMessageBytes (default 4 MiB) is refused with ErrTooLarge and the connection
// dropped. The text of a result or resource is cut at Options.MaxResultBytes (default 64
// KiB) with a marker "…[cut: N more bytes over the M-byte limit]"; structured content over
// that limit is left out with a marker in Text. Truncated says either happened.
//
// # Recording
//
// A Catalog holds the tools of several servers, servers and tools sorted by name and
// schemas as canonical JSON, so the same listing always marshals to the same bytes. A
// workflow records one at step start (Pool.Catalog) and reads tools and schemas from the
// record from then on, so replay never depends on a server.
//
// The example server examples/mcp/triage-tools is built with the same SDK; this
// package's tests drive it over stdio and streamable HTTP.
package mcptools
