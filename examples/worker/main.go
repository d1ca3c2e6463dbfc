// Command worker is a worker of your own flows: copy this file into your module, change
// the flow, and run it beside gateflow's flow-worker on its own task queue.
//
//	go run ./examples/worker                       # task queue my-flows, localhost:7233
//	TEMPORAL_TASK_QUEUE=my-flows flowctl start triage --input '{"ticket":"T-1","text":"disk full"}'
//
// It connects the way the Temporal CLI does (an envconfig profile, then TEMPORAL_ADDRESS,
// TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*), serves on --task-queue
// (default TEMPORAL_TASK_QUEUE, else my-flows) and stops cleanly on SIGINT or SIGTERM.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/flow"
)

// TriageInput is what a run of triage starts with.
type TriageInput struct {
	Ticket string `json:"ticket"`
	Text   string `json:"text"`
}

// Deployed is the payload of the signal "deployed" (key: the ticket).
type Deployed struct {
	Version string `json:"version"`
}

// TriageOutput is what a run of triage returns.
type TriageOutput struct {
	Summary    string `json:"summary"`
	ApprovedBy string `json:"approved_by"`
	Version    string `json:"version"`
}

// Triage is a flow with a shell step, an agent step that costs money, a gate a group
// decides and a wait for a keyed signal.
var Triage = flow.Define("triage", triage,
	flow.Description("Summarise a ticket, have on-call approve the fix, wait for its deploy"),
	flow.Version("1"), flow.MaxCostUSD(decimal.RequireFromString("1.00")))

func triage(ctx *flow.Context, in TriageInput) (TriageOutput, error) {
	if strings.TrimSpace(in.Ticket) == "" {
		return TriageOutput{}, flow.Permanent(errors.New("triage: ticket is required"))
	}
	logs, err := ctx.Shell("collect", activities.Shell{
		Command: `echo "logs of $TICKET: $TEXT"`, Env: map[string]string{"TICKET": in.Ticket, "TEXT": in.Text},
	})
	if err != nil {
		return TriageOutput{}, err
	}
	sum, err := ctx.Agent("summarise", activities.Agent{
		Model: "scripted-triage", Prompt: "Summarise ticket " + in.Ticket + ":\n" + logs.Stdout,
		MaxTokens: 200, MaxBudgetUSD: decimal.RequireFromString("0.10"),
	})
	if err != nil {
		return TriageOutput{}, err
	}
	d, err := ctx.Approval("fix", approval.Request{
		Message: "Apply the fix for " + in.Ticket + "? " + sum.Text, Approvers: []string{"group:oncall"}, Required: 1,
	})
	if err != nil {
		return TriageOutput{}, err
	}
	dep, err := flow.WaitSignal[Deployed](ctx, "deployed", in.Ticket, 24*time.Hour)
	if err != nil {
		return TriageOutput{}, err
	}
	return TriageOutput{Summary: sum.Text, ApprovedBy: d.By, Version: dep.Version}, nil
}

func main() {
	queue := flag.String("task-queue", envOr("TEMPORAL_TASK_QUEUE", "my-flows"), "the task queue to serve (TEMPORAL_TASK_QUEUE)")
	flag.Parse()
	// The Temporal CLI's settings: TEMPORAL_PROFILE of TEMPORAL_CONFIG_FILE, TEMPORAL_ADDRESS, ...
	co, err := envconfig.LoadDefaultClientOptions()
	if err != nil {
		log.Fatalf("worker: temporal settings: %v", err)
	}
	tc, err := client.Dial(co)
	if err != nil {
		log.Fatalf("worker: connect to Temporal: %v", err)
	}
	defer tc.Close()

	w := flow.NewWorker(tc, options(*queue), Triage)

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	if err := w.Start(); err != nil {
		log.Fatalf("worker: %v", err)
	}
	fmt.Printf("worker: serving %s on task queue %s\n", Triage.Name(), *queue)
	<-stop
	w.Stop()
}

// options are the worker's: its task queue, agent providers and prices, and the groups
// of approvers (main_test.go runs the flow with them too).
func options(queue string) flow.WorkerOptions {
	// A scripted model answers without network; prices are USD per million tokens.
	scripted := llm.NewScripted(llm.ScriptRule{Match: "Summarise ticket",
		Text: "Disk full on db-1: rotate the logs.", InputTokens: 1200, OutputTokens: 40})
	return flow.WorkerOptions{
		TaskQueue: queue,
		Providers: map[string]llm.Provider{llm.ProviderScripted: scripted},
		Prices: llm.PriceTable{"scripted-triage": {
			InputPerMTok: decimal.RequireFromString("3.00"), OutputPerMTok: decimal.RequireFromString("15.00")}},
		Directory: approval.StaticDirectory{"oncall": {"alice", "bob"}},
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
