package activities

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/mcptools"
)

// mcpActivities returns activities over the example server, built into a temporary
// directory and run over stdio, and the file that counts its tool calls.
func mcpActivities(t *testing.T) (*MCPActivities, string) {
	dir := t.TempDir()
	bin, count := filepath.Join(dir, "triage-tools"), filepath.Join(dir, "calls")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/gateflow/gateflow/examples/mcp/triage-tools").CombinedOutput()
	require.NoError(t, err, "building triage-tools: %s", out)
	pool, err := mcptools.NewPool([]mcptools.Server{{Name: "triage", Command: []string{bin, "--count-file", count}}}, mcptools.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pool.Close() })
	return &MCPActivities{Pool: pool}, count
}

func appErr(t *testing.T, err error) *temporal.ApplicationError {
	t.Helper()
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "want an application error, got %v", err)
	return app
}

func TestMCPActivities(t *testing.T) {
	a, count := mcpActivities(t)
	ctx := context.Background()

	cat, err := a.Catalog(ctx, MCPCatalog{})
	require.NoError(t, err)
	tools, ok := cat.Tools("triage")
	require.True(t, ok)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	assert.Equal(t, []string{"lookup_runbook", "recent_deploys", "restart_service"}, names)

	res, err := a.Call(ctx, MCPCall{Server: "triage", Tool: "lookup_runbook", Args: json.RawMessage(`{"service":"checkout"}`)})
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.Contains(t, strings.ToLower(res.Text), "checkout")

	// A tool error is a value, unless the call asks for it to fail.
	res, err = a.Call(ctx, MCPCall{Server: "triage", Tool: "lookup_runbook", Args: json.RawMessage(`{"service":"nope"}`)})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	_, err = a.Call(ctx, MCPCall{Server: "triage", Tool: "lookup_runbook", Args: json.RawMessage(`{"service":"nope"}`), FailOnError: true})
	app := appErr(t, err)
	assert.Equal(t, MCPToolErrorType, app.Type())
	assert.True(t, app.NonRetryable())
	var detail mcptools.Result
	require.NoError(t, app.Details(&detail))
	assert.True(t, detail.IsError)

	doc, err := a.Read(ctx, MCPRead{Server: "triage", URI: "runbook://checkout"})
	require.NoError(t, err)
	assert.Contains(t, strings.ToLower(doc.Text), "checkout")

	calls, err := os.ReadFile(count)
	require.NoError(t, err)
	assert.Equal(t, 3, strings.Count(string(calls), "\n"), "one line per tool call: %q", calls)
}

func TestMCPActivitiesErrors(t *testing.T) {
	a, _ := mcpActivities(t)
	ctx := context.Background()
	tests := []struct {
		name      string
		call      MCPCall
		typ       string
		retryable bool
	}{
		{"unknown tool", MCPCall{Server: "triage", Tool: "nope"}, MCPProtocolErrorType, false},
		{"unknown server", MCPCall{Server: "other", Tool: "x"}, MCPProtocolErrorType, false},
		{"no tool", MCPCall{Server: "triage"}, InvalidStepErrorType, false},
		{"args not an object", MCPCall{Server: "triage", Tool: "lookup_runbook", Args: json.RawMessage(`[1]`)}, InvalidStepErrorType, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := a.Call(ctx, tt.call)
			app := appErr(t, err)
			assert.Equal(t, tt.typ, app.Type(), err.Error())
			assert.Equal(t, !tt.retryable, app.NonRetryable())
		})
	}
	_, err := a.Read(ctx, MCPRead{Server: "triage"})
	assert.Equal(t, InvalidStepErrorType, appErr(t, err).Type())
	_, err = (&MCPActivities{}).Catalog(ctx, MCPCatalog{})
	assert.Equal(t, MCPProtocolErrorType, appErr(t, err).Type())
}

func TestMCPErrorMapping(t *testing.T) {
	ctx := context.Background()
	retry := &mcptools.ServerError{Server: "s", Op: "connect", Retryable: true, Err: errors.New("exec: not found")}
	app := appErr(t, mcpError(ctx, retry))
	assert.Equal(t, MCPServerErrorType, app.Type())
	assert.False(t, app.NonRetryable())
	assert.Contains(t, app.Error(), `mcp server "s": connect`)

	proto := &mcptools.ServerError{Server: "s", Op: "call tool x", Code: -32602, Err: errors.New("invalid params")}
	app = appErr(t, mcpError(ctx, proto))
	assert.Equal(t, MCPProtocolErrorType, app.Type())
	assert.True(t, app.NonRetryable())

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, mcpError(cancelled, context.Canceled), context.Canceled)
}

func TestMCPServerGone(t *testing.T) {
	pool, err := mcptools.NewPool([]mcptools.Server{{Name: "gone", Command: []string{filepath.Join(t.TempDir(), "missing")}}}, mcptools.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pool.Close() })
	_, err = (&MCPActivities{Pool: pool}).Call(context.Background(), MCPCall{Server: "gone", Tool: "x"})
	app := appErr(t, err)
	assert.Equal(t, MCPServerErrorType, app.Type())
	assert.False(t, app.NonRetryable())
}
