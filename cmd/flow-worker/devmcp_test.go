package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/mcptools"
)

// --dev without --mcp declares the example MCP server when its executable sits next to
// flow-worker; not when it is missing, not executable or a directory.
func TestExampleMCPServer(t *testing.T) {
	dir := t.TempDir()
	_, ok := exampleMCPServer(dir)
	assert.False(t, ok, "no triage-tools")

	p := filepath.Join(dir, "triage-tools")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"), 0o644))
	_, ok = exampleMCPServer(dir)
	assert.False(t, ok, "not executable")

	require.NoError(t, os.Chmod(p, 0o755))
	s, ok := exampleMCPServer(dir)
	require.True(t, ok)
	assert.Equal(t, mcptools.Server{Name: examples.TriageServer, Command: []string{p}}, s)

	sub := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(sub, "triage-tools"), 0o755))
	_, ok = exampleMCPServer(sub)
	assert.False(t, ok, "a directory")
}

// The default applies to --dev only, and never over a declared --mcp.
func TestDevMCPServersKeepsDeclaredOnes(t *testing.T) {
	declared := mcpFlags{{Name: "docs", URL: "https://mcp.example.com/mcp"}}
	cfg := config{dev: true, mcp: declared}
	devMCPServers(&cfg)
	assert.Equal(t, declared, cfg.mcp)

	cfg = config{dev: false}
	devMCPServers(&cfg)
	assert.Empty(t, cfg.mcp, "without --dev nothing is declared")
}
