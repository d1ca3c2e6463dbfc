package testflows

import (
	"context"
	"net/http/httptest"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	temporalsuite "go.temporal.io/sdk/testsuite"

	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/testsuite"
)

// Both halves of the agent loop variant do the same work against the same provider: 5
// turns each calling the lookup tool once, then the answering turn, the same answer.
func TestBenchAgentSidesDoTheSameWork(t *testing.T) {
	srv := httptest.NewServer(BenchChatHandler())
	defer srv.Close()
	providers := BenchAgentProviders(srv.URL + "/v1")

	env := testsuite.NewEnv(t, flow.WorkerOptions{Providers: providers})
	env.Register(BenchAgentFlows()...)
	env.RegisterActivity(BenchLookup, "")
	r := env.Run(BenchFlowAgent, BenchInput{Steps: 5})
	if r.Err != nil {
		t.Fatalf("gateflow side: %v", r.Err)
	}
	var gfAnswer string
	if err := r.Decode(&gfAnswer); err != nil {
		t.Fatal(err)
	}
	turns, lookups := 0, 0
	for _, s := range r.State.Steps {
		switch {
		case s.Name == "lookup":
			lookups++
		case len(s.Name) > 5 && s.Name[:5] == "turn-":
			turns++
		}
	}
	if turns != 6 || lookups != 5 {
		t.Errorf("gateflow side: %d turns, %d lookups; want 6 and 5", turns, lookups)
	}

	var s temporalsuite.WorkflowTestSuite
	raw := s.NewTestWorkflowEnvironment()
	raw.RegisterWorkflow(RawAgent)
	raw.RegisterActivityWithOptions(RawTurns{Provider: providers[llm.ProviderOpenAI]}.Turn, activity.RegisterOptions{Name: BenchTurnActivity})
	raw.RegisterActivity(BenchLookup)
	rawTurns, rawLookups := 0, 0
	raw.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		switch info.ActivityType.Name {
		case BenchTurnActivity:
			rawTurns++
		case "BenchLookup":
			rawLookups++
		}
	})
	raw.ExecuteWorkflow(RawAgent, BenchInput{Steps: 5})
	if err := raw.GetWorkflowError(); err != nil {
		t.Fatalf("raw side: %v", err)
	}
	var rawAnswer string
	if err := raw.GetWorkflowResult(&rawAnswer); err != nil {
		t.Fatal(err)
	}
	if rawAnswer != gfAnswer || rawAnswer != "5 hosts are up" {
		t.Errorf("answers: gateflow %q, raw %q; want %q", gfAnswer, rawAnswer, "5 hosts are up")
	}
	if rawTurns != 6 || rawLookups != 5 {
		t.Errorf("raw side: %d turns, %d lookups; want 6 and 5", rawTurns, rawLookups)
	}
}
