// Command testworker serves the integration tests' flows on a task queue, so a test can
// kill a worker process in the middle of a step.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/shopspring/decimal"

	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/internal/integration/testflows"
	"github.com/gateflow/gateflow/internal/logging"
)

func main() {
	address := flag.String("address", "", "Temporal frontend")
	queue := flag.String("task-queue", "", "task queue")
	services := flag.Bool("services", false, "serve the service tests' flows (testflows.ServiceFlows) with their services")
	blobURL := flag.String("artifacts", "", "serve the artifact tests' flows (testflows.ArtifactFlows) with this blob store")
	identity := flag.String("identity", "", "the worker's identity (default: the SDK's)")
	openAIURL := flag.String("openai-url", "", "serve the agent loop flows (testflows.AgentFlows) with an OpenAI provider at this base URL")
	var mcpServers mcpFlags
	flag.Var(&mcpServers, "mcp", "an MCP server for the agent loop flows, name=command… (repeatable)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	tc, err := client.DialContext(ctx, client.Options{HostPort: *address, Logger: logging.NewSDKLogger(os.Stderr, "error")})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mode := ""
	if *services {
		mode = "services"
	}
	var stop func()
	switch {
	case *openAIURL != "" || len(mcpServers) > 0:
		stop, err = serveAgents(tc, *queue, *openAIURL, mcpServers) // agent.go
	case *blobURL != "":
		w := flow.NewWorker(tc, flow.WorkerOptions{TaskQueue: *queue, Identity: *identity, BlobURL: *blobURL}, testflows.ArtifactFlows()...)
		stop, err = w.Stop, w.Start()
	default:
		stop, err = serve(tc, *queue, mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("ready")
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	<-sigs
	stop()
}

// serve starts the test flows, or the service tests' flows.
func serve(tc client.Client, queue, mode string) (func(), error) {
	switch mode {
	case "":
		w := flow.NewWorker(tc, flow.WorkerOptions{TaskQueue: queue, Quotas: quotas(),
			Providers: map[string]llm.Provider{llm.ProviderScripted: llm.NewScripted(testflows.BudgetRules()...)}}, testflows.All()...)
		w.RegisterActivity(testflows.Count, "")
		return w.Stop, w.Start()
	case "services":
		w := flow.NewWorker(tc, flow.WorkerOptions{TaskQueue: queue, Services: testflows.Services()}, testflows.ServiceFlows()...)
		return w.Stop, w.Start()
	}
	return nil, fmt.Errorf("unknown mode %q", mode)
}

// quotas are the monthly quotas the crash test's worker enforces.
func quotas() budget.Quotas {
	q := decimal.RequireFromString("100")
	return budget.Quotas{MonthlyUSD: &q}
}
