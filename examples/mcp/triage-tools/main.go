// Command triage-tools is a small MCP server for the incident triage example, built with
// the official Go SDK. It serves over stdio by default, or over streamable HTTP with
// --http ADDR (it then prints "triage-tools: serving http://HOST:PORT/mcp" on stdout).
//
// Tools:
//   - lookup_runbook {service}: the service's runbook as text (read-only); an unknown
//     service is a tool error.
//   - recent_deploys {service, limit}: the service's last deploys as structured JSON
//     (read-only).
//   - restart_service {service}: restarts the service (pretend), annotated destructive.
//
// Resource template: runbook://{service}, the runbook as markdown.
//
// With --count-file PATH every tool call appends one line "TOOL SERVICE" to PATH, so tests
// can check that each tool call ran once.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	httpAddr := flag.String("http", "", "serve streamable HTTP on `ADDR` (host:port) instead of stdio")
	countFile := flag.String("count-file", "", "append one line per tool call to `PATH`")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *httpAddr, *countFile); err != nil {
		fmt.Fprintln(os.Stderr, "triage-tools:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, httpAddr, countFile string) error {
	server, err := newServer(&counter{path: countFile})
	if err != nil {
		return err
	}
	if httpAddr == "" {
		return server.Run(ctx, &mcp.StdioTransport{})
	}
	ln, err := net.Listen("tcp", httpAddr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	fmt.Printf("triage-tools: serving http://%s/mcp\n", ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// counter appends one line per tool call to a file, when it has a path.
type counter struct {
	mu   sync.Mutex
	path string
}

func (c *counter) count(tool, service string) error {
	if c.path == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	f, err := os.OpenFile(c.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("count file: %w", err)
	}
	_, err = fmt.Fprintf(f, "%s %s\n", tool, service)
	return errors.Join(err, f.Close())
}

type serviceArgs struct {
	Service string `json:"service" jsonschema:"the service's name, such as checkout"`
}

type deploysArgs struct {
	Service string `json:"service" jsonschema:"the service's name, such as checkout"`
	Limit   int    `json:"limit,omitempty" jsonschema:"how many deploys, newest first (1 to 5, default 3)"`
}

type deploysOut struct {
	Service string   `json:"service"`
	Deploys []deploy `json:"deploys"`
}

func newServer(c *counter) (*mcp.Server, error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "triage-tools", Version: "1.0.0"}, nil)
	deploysSchema, err := jsonschema.For[deploysArgs](nil)
	if err != nil {
		return nil, fmt.Errorf("recent_deploys schema: %w", err)
	}
	deploysSchema.Properties["limit"].Minimum = jsonschema.Ptr(1.0)
	deploysSchema.Properties["limit"].Maximum = jsonschema.Ptr(5.0)

	mcp.AddTool(s, &mcp.Tool{
		Name:        "lookup_runbook",
		Description: "Returns the runbook of a service as text.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(_ context.Context, _ *mcp.CallToolRequest, in serviceArgs) (*mcp.CallToolResult, any, error) {
		if err := c.count("lookup_runbook", in.Service); err != nil {
			return nil, nil, err
		}
		text, err := runbook(in.Service)
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "recent_deploys",
		Description: "Lists the last deploys of a service, newest first.",
		InputSchema: deploysSchema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(_ context.Context, _ *mcp.CallToolRequest, in deploysArgs) (*mcp.CallToolResult, deploysOut, error) {
		if err := c.count("recent_deploys", in.Service); err != nil {
			return nil, deploysOut{}, err
		}
		all := deploys(in.Service)
		if all == nil {
			return nil, deploysOut{}, unknownService(in.Service)
		}
		limit := in.Limit
		if limit == 0 {
			limit = 3
		}
		return nil, deploysOut{Service: in.Service, Deploys: all[:min(limit, len(all))]}, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "restart_service",
		Description: "Restarts every instance of a service. Destructive: in-flight requests fail.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: jsonschema.Ptr(true)},
	}, func(_ context.Context, _ *mcp.CallToolRequest, in serviceArgs) (*mcp.CallToolResult, any, error) {
		if err := c.count("restart_service", in.Service); err != nil {
			return nil, nil, err
		}
		if _, err := runbook(in.Service); err != nil {
			return nil, nil, err
		}
		text := fmt.Sprintf("restarted %s: 3 of 3 instances healthy", in.Service)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	})
	s.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "runbook",
		URITemplate: "runbook://{service}",
		Description: "The runbook of a service.",
		MIMEType:    "text/markdown",
	}, readRunbook)
	return s, nil
}

func readRunbook(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	text, err := runbook(strings.TrimPrefix(uri, "runbook://"))
	if err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: text}}}, nil
}

func runbook(service string) (string, error) {
	text, ok := runbooks[service]
	if !ok {
		return "", unknownService(service)
	}
	return text, nil
}

func unknownService(service string) error {
	known := make([]string, 0, len(runbooks))
	for name := range runbooks {
		known = append(known, name)
	}
	slices.Sort(known)
	return fmt.Errorf("unknown service %q (known: %s)", service, strings.Join(known, ", "))
}
