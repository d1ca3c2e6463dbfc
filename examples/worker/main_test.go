package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/worker"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/runs"
	"github.com/gateflow/gateflow/testsuite"
)

// docs/go-flows.md's "Your own flows" shows this file whole: the two must not drift apart.
func TestDocsShowThisFile(t *testing.T) {
	const doc = "docs/go-flows.md"
	text, err := os.ReadFile("../../" + doc)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	const marker = "<!-- examples/worker/main.go"
	_, rest, ok := strings.Cut(string(text), marker)
	if !ok {
		t.Fatalf("%s has no %q marker before the copy of examples/worker/main.go", doc, marker)
	}
	_, rest, ok = strings.Cut(rest, "```go\n")
	if !ok {
		t.Fatalf("%s: no ```go block after the examples/worker/main.go marker", doc)
	}
	block, _, ok := strings.Cut(rest, "```\n")
	if !ok {
		t.Fatalf("%s: the examples/worker/main.go block is not closed", doc)
	}
	if block != string(src) {
		t.Errorf("%s's copy of examples/worker/main.go differs from the file; paste the file again between the marker's ```go and ```", doc)
	}
}

func TestEnvOr(t *testing.T) {
	t.Setenv("GATEFLOW_EXAMPLE_TEST", "")
	if got := envOr("GATEFLOW_EXAMPLE_TEST", "my-flows"); got != "my-flows" {
		t.Errorf("envOr of an empty variable = %q, want the default", got)
	}
	t.Setenv("GATEFLOW_EXAMPLE_TEST", "q")
	if got := envOr("GATEFLOW_EXAMPLE_TEST", "my-flows"); got != "q" {
		t.Errorf("envOr = %q, want q", got)
	}
}

// A unit test of the flow (no server, virtual time): alice of group oncall approves, the
// deploy signal arrives, the agent step costs its tokens at the worker's prices.
func TestTriage(t *testing.T) {
	env := testsuite.NewEnv(t, options("test"))
	// A loaded machine can hold the first workflow task past the SDK's 1s deadlock check.
	env.Temporal().SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	env.Register(Triage)
	env.MockStep("collect", activities.ShellResult{Stdout: "disk 91% full"}, nil)
	env.Approve(time.Minute, "fix", "alice")
	env.Signal(time.Hour, "deployed", "T-1", "", Deployed{Version: "v2.0.1"})
	out, r := testsuite.Run(env, Triage, TriageInput{Ticket: "T-1", Text: "disk full"})
	if r.Status() != runs.StatusCompleted {
		t.Fatalf("status %s, want completed; steps %v; error %v", r.Status(), r.StepStatuses(), r.Err)
	}
	want := TriageOutput{Summary: "Disk full on db-1: rotate the logs.", ApprovedBy: "alice", Version: "v2.0.1"}
	if out != want {
		t.Errorf("output %+v, want %+v", out, want)
	}
	if got := r.StepCost("summarise").String(); got != "0.0042" {
		t.Errorf("summarise cost $%s, want $0.0042 (1,200 tokens at $3, 40 at $15 per million)", got)
	}
}

// A run without a ticket fails at once, before any step.
func TestTriageNeedsATicket(t *testing.T) {
	env := testsuite.NewEnv(t, options("test"))
	env.Temporal().SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	_, r := testsuite.Run(env, Triage, TriageInput{})
	if r.Status() != runs.StatusFailed || len(r.StepNames()) != 0 {
		t.Errorf("status %s with steps %v, want failed with none", r.Status(), r.StepNames())
	}
}
