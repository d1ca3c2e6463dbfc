package main

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/internal/integration/testflows"
	"github.com/gateflow/gateflow/mcptools"
)

// mcpFlags collects --mcp values, as flow-worker reads them (name=command… or name=URL).
type mcpFlags []mcptools.Server

func (m *mcpFlags) String() string {
	if m == nil {
		return ""
	}
	names := make([]string, 0, len(*m))
	for _, s := range *m {
		names = append(names, s.Name)
	}
	return strings.Join(names, ",")
}

func (m *mcpFlags) Set(v string) error {
	s, err := mcptools.ParseServerFlag(v)
	if err != nil {
		return err
	}
	*m = append(*m, s)
	return nil
}

// serveAgents starts the agent loop flows (testflows.AgentFlows) with an OpenAI provider
// at openAIURL (a local server speaking its wire format) and the MCP servers.
func serveAgents(tc client.Client, queue, openAIURL string, servers []mcptools.Server) (func(), error) {
	if openAIURL == "" {
		return nil, fmt.Errorf("--openai-url is required with --mcp")
	}
	w := flow.NewWorker(tc, flow.WorkerOptions{TaskQueue: queue, StopTimeout: time.Second, MCPServers: servers,
		Providers: map[string]llm.Provider{llm.ProviderOpenAI: llm.NewOpenAI(llm.OpenAIConfig{BaseURL: openAIURL, APIKey: "sk-test"})}},
		testflows.AgentFlows()...)
	return w.Stop, w.Start()
}
