package integration

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/protocol"
)

func TestHelloRunsRealShellSteps(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	c := shared.client
	run, err := c.Start(ctx, "hello", examples.HelloInput{Name: "Ada"}, core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)

	assert.Equal(t, runs.StatusCompleted, d.Status)
	assert.Equal(t, "Completed", d.TemporalStatus)
	assert.Equal(t, "tester", d.CreatedBy)
	var out examples.HelloOutput
	require.NoError(t, json.Unmarshal(d.Result, &out))
	assert.Equal(t, "Hello, Ada!", out.Greeting)
	assert.Equal(t, "HELLO, ADA!", out.Shouted)

	require.NotNil(t, d.State)
	require.Len(t, d.State.Steps, 2)
	for i, name := range []string{"greet", "shout"} {
		s := d.State.Steps[i]
		assert.Equal(t, name, s.Name)
		assert.Equal(t, name, s.ActivityID)
		assert.Equal(t, runs.KindShell, s.Kind)
		assert.Equal(t, runs.StepCompleted, s.Status)
		assert.Equal(t, 1, s.Attempt)
		require.NotNil(t, s.EndedAt)
		assert.False(t, s.EndedAt.Before(s.StartedAt))
		require.NotNil(t, s.ExitCode)
		assert.Equal(t, 0, *s.ExitCode)
	}
	assert.Equal(t, "HELLO, ADA!", d.State.Steps[1].Output)

	// The step names are the activities' IDs and summaries in Temporal's history.
	hist := shared.tc.GetWorkflowHistory(ctx, run.ID, "", false, 0)
	var ids, summaries []string
	for hist.HasNext() {
		ev, err := hist.Next()
		require.NoError(t, err)
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			ids = append(ids, a.GetActivityId())
			var s string
			require.NoError(t, json.Unmarshal(ev.GetUserMetadata().GetSummary().GetData(), &s))
			summaries = append(summaries, s)
		}
	}
	assert.Equal(t, []string{"greet", "shout"}, ids)
	assert.Equal(t, []string{"greet (shell)", "shout (shell)"}, summaries)
}

func TestFailingShellStepFailsTheRunWithExitCodeAndStderr(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	c := shared.client
	run, err := c.Start(ctx, "test.failing", nil, core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)

	assert.Equal(t, runs.StatusFailed, d.Status)
	assert.Equal(t, "Failed", d.TemporalStatus)
	assert.Contains(t, d.Error, "step explode: exit code 3")
	assert.Contains(t, d.Error, "disk full: cannot write /tmp/x")
	require.NotNil(t, d.State)
	require.Len(t, d.State.Steps, 2)
	assert.Equal(t, runs.StepCompleted, d.State.Steps[0].Status)
	s := d.State.Steps[1]
	assert.Equal(t, "explode", s.Name)
	assert.Equal(t, runs.StepFailed, s.Status)
	require.NotNil(t, s.ExitCode)
	assert.Equal(t, 3, *s.ExitCode)
	assert.Equal(t, "exit code 3: disk full: cannot write /tmp/x", s.Error)
	assert.Equal(t, 1, s.Attempt, "a non-zero exit is not retried by default")
	assert.Equal(t, runs.StatusFailed, d.State.Status)
}

func TestRunningRunAnswersStateQueryAndListShowsStatus(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	c := shared.client
	run, err := c.Start(ctx, "hello", map[string]string{"name": "list-check"}, core.StartOptions{ID: "hello-list-check"})
	require.NoError(t, err)
	assert.Equal(t, "hello-list-check", run.ID)
	_, err = c.Wait(ctx, run.ID)
	require.NoError(t, err)

	require.Eventually(t, func() bool {
		found, err := c.List(ctx, flowclient.ListOptions{Workflow: "hello", Status: runs.StatusCompleted, Limit: 100})
		if err != nil {
			return false
		}
		for _, r := range found {
			if r.ID == run.ID {
				return r.Status == runs.StatusCompleted
			}
		}
		return false
	}, 10*time.Second, 100*time.Millisecond, "the completed run is listed with FlowStatus=completed")

	// The catalog workflow carries no FlowStatus and is not listed as a run.
	found, err := c.List(ctx, flowclient.ListOptions{Limit: 1000})
	require.NoError(t, err)
	for _, r := range found {
		assert.NotEqual(t, protocol.CatalogWorkflowType, r.Workflow)
	}
}

// TestStartFlowReturnsTheTypedOutput: the typed start runs the same checks as Start and
// its Result is the flow's output type; a run that fails returns its failure.
func TestStartFlowReturnsTheTypedOutput(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	run, err := flowclient.StartFlow(ctx, shared.client, examples.Hello, examples.HelloInput{Name: "Typed"}, core.StartOptions{})
	require.NoError(t, err)
	assert.Equal(t, "hello", run.Workflow)
	out, err := run.Result(ctx)
	require.NoError(t, err)
	assert.Equal(t, examples.HelloOutput{Greeting: "Hello, Typed!", Shouted: "HELLO, TYPED!"}, out)

	_, err = flowclient.StartFlow(ctx, shared.client, examples.Hello, examples.HelloInput{}, core.StartOptions{Priority: 9})
	var ie *core.InputError
	require.ErrorAs(t, err, &ie, "the options are checked as Start checks them")
}
