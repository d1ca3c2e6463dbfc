package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connect runs the server in memory and returns a client session to it.
func connect(t *testing.T, countFile string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	server, err := newServer(&counter{path: countFile})
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func TestTools(t *testing.T) {
	count := filepath.Join(t.TempDir(), "calls")
	cs := connect(t, count)
	ctx := context.Background()
	for _, tt := range []struct {
		tool    string
		args    map[string]any
		want    string
		isError bool
	}{
		{"lookup_runbook", map[string]any{"service": "search"}, "# search", false},
		{"recent_deploys", map[string]any{"service": "search", "limit": 1}, `"version":"search-v1.9"`, false},
		{"restart_service", map[string]any{"service": "checkout"}, "restarted checkout", false},
		{"restart_service", map[string]any{"service": "nope"}, `unknown service "nope" (known: checkout, payments, search)`, true},
		{"recent_deploys", map[string]any{"service": "search", "limit": 6}, "maximum", true},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
		if err != nil {
			t.Fatalf("%s: %v", tt.tool, err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if res.IsError != tt.isError || !strings.Contains(text, tt.want) {
			t.Errorf("%s %v = %q (error %v), want %q (error %v)", tt.tool, tt.args, text, res.IsError, tt.want, tt.isError)
		}
	}
	data, err := os.ReadFile(count)
	if err != nil {
		t.Fatal(err)
	}
	// The call refused by the schema never reached the tool.
	want := "lookup_runbook search\nrecent_deploys search\nrestart_service checkout\nrestart_service nope\n"
	if string(data) != want {
		t.Errorf("count file %q, want %q", data, want)
	}
}

func TestRunbookResource(t *testing.T) {
	cs := connect(t, "")
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "runbook://checkout"})
	if err != nil || len(res.Contents) != 1 || !strings.HasPrefix(res.Contents[0].Text, "# checkout") {
		t.Fatalf("runbook://checkout = %+v, %v", res, err)
	}
	if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "runbook://nope"}); err == nil {
		t.Error("runbook://nope: no error")
	}
}
