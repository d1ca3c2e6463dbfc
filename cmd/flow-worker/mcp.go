package main

import (
	"fmt"
	"strings"

	"github.com/gateflow/gateflow/mcptools"
)

// mcpHelp documents --mcp.
const mcpHelp = "an MCP server whose tools steps call (repeatable): `name=command arg…` starts the command and talks to it over stdio " +
	"(quotes keep blanks inside an argument), name=https://host/path talks streamable HTTP; " +
	"e.g. --mcp 'triage=triage-tools --count-file /tmp/calls' --mcp docs=https://mcp.example.com/mcp"

// mcpFlags collects --mcp values (repeatable).
type mcpFlags []mcptools.Server

func (m *mcpFlags) String() string {
	if m == nil {
		return ""
	}
	return strings.Join(m.names(), ",")
}

func (m *mcpFlags) Set(v string) error {
	s, err := mcptools.ParseServerFlag(v)
	if err != nil {
		return err
	}
	for _, o := range *m {
		if o.Name == s.Name {
			return fmt.Errorf("mcp server %q is declared twice", s.Name)
		}
	}
	*m = append(*m, s)
	return nil
}

func (m mcpFlags) names() []string {
	names := make([]string, 0, len(m))
	for _, s := range m {
		names = append(names, s.Name)
	}
	return names
}
