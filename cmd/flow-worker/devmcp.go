package main

import (
	"os"
	"path/filepath"

	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/mcptools"
)

// exampleMCPServer is the MCP server flow-worker --dev declares when no --mcp is given:
// the example server examples/mcp/triage-tools, when its binary sits in dir (the
// directory of flow-worker; make build puts both in bin/), under the name the examples'
// triage agents use (examples.TriageServer). ok is false when there is no such file.
func exampleMCPServer(dir string) (s mcptools.Server, ok bool) {
	p := filepath.Join(dir, "triage-tools")
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return mcptools.Server{}, false
	}
	return mcptools.Server{Name: examples.TriageServer, Command: []string{p}}, true
}

// devMCPServers adds the example MCP server to cfg's servers under --dev when none is
// declared and flow-worker's directory has it.
func devMCPServers(cfg *config) {
	if !cfg.dev || len(cfg.mcp) > 0 {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	if s, ok := exampleMCPServer(filepath.Dir(exe)); ok {
		cfg.mcp = append(cfg.mcp, s)
	}
}
