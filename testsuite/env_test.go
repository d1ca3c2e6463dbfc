package testsuite_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/testsuite"
)

func TestHelloRunsRealShellSteps(t *testing.T) {
	env := testsuite.NewEnv(t)
	env.Register(examples.All()...)
	r := env.Run("hello", examples.HelloInput{Name: "unit"})
	require.NoError(t, r.Err)
	assert.Equal(t, runs.StatusCompleted, r.Status())
	var out examples.HelloOutput
	require.NoError(t, r.Decode(&out))
	assert.Equal(t, "HELLO, UNIT!", out.Shouted)
	assert.Equal(t, []string{"greet", "shout"}, r.StepNames())
	assert.Equal(t, 1, env.Calls("greet"))
}

func TestMockStepsByNameAndCost(t *testing.T) {
	env := testsuite.NewEnv(t)
	env.Register(examples.All()...)
	env.MockStep("build", activities.ShellResult{Stdout: "built (mocked)"}, nil)
	env.MockStep("unit", activities.ShellResult{Stdout: "ok"}, nil)
	env.MockStep("lint", activities.ShellResult{Stdout: "clean"}, nil)
	env.MockAgent("review", "mocked review", "0.04")
	env.MockStep("boot", activities.ShellResult{}, nil)
	env.MockStep("probe", activities.ShellResult{Stdout: "5"}, nil)
	r := env.Run("release", examples.ReleaseInput{Version: "2.0.0"})
	require.NoError(t, r.Err)
	assert.Equal(t, []string{"build", "checks/unit", "checks/lint", "health", "review", "smoke"}, r.StepNames())
	assert.Equal(t, "0.04", r.Cost().String())
	assert.Equal(t, "0.04", r.StepCost("review").String())
	var out examples.ReleaseOutput
	require.NoError(t, r.Decode(&out))
	assert.Equal(t, "built (mocked)", out.Build)
	assert.Equal(t, "mocked review", out.Review)
	s, ok := r.Step("health")
	require.True(t, ok)
	assert.Equal(t, runs.StepSkipped, s.Status)
}

func TestMockedFailureRunsTheCleanupOnce(t *testing.T) {
	env := testsuite.NewEnv(t)
	env.Register(examples.All()...)
	env.MockStep("build", activities.ShellResult{}, temporal.NewNonRetryableApplicationError("exit code 2: no space", activities.ShellExitErrorType, nil))
	env.MockStep("cleanup", activities.ShellResult{Stdout: "cleaned"}, nil)
	r := env.Run("release", examples.ReleaseInput{Version: "2.0.0"})
	require.Error(t, r.Err)
	assert.Equal(t, runs.StatusFailed, r.Status())
	assert.Equal(t, []string{"build", "cleanup"}, r.StepNames())
	assert.Equal(t, 1, env.Calls("cleanup"))
	assert.Equal(t, runs.StepFailed, r.StepStatuses()["build"])
}

func TestScriptedAgentAndBudgetCap(t *testing.T) {
	env := testsuite.NewEnv(t)
	env.Register(examples.All()...)
	env.ScriptAgent(examples.ScriptedRules()...)
	env.MockStep("build", activities.ShellResult{}, nil)
	env.MockStep("unit", activities.ShellResult{}, nil)
	env.MockStep("lint", activities.ShellResult{}, nil)
	r := env.Run("release", examples.ReleaseInput{Version: "2.0.0"}, testsuite.RunOptions{MaxCostUSD: "0.10"})
	assert.Equal(t, runs.StatusBudgetExceeded, r.Status(), "review reserves $0.25 of a $0.10 cap")
	s, _ := r.Step("review")
	assert.Contains(t, s.Error, "budget: step review needs $0.25")
}

func TestPeopleInVirtualTime(t *testing.T) {
	env := testsuite.NewEnv(t, flow.WorkerOptions{Directory: examples.Directory()})
	env.Register(examples.All()...)
	notes := examples.ReleaseNotes{Summary: "Faster pages everywhere", Risk: "low"}
	bad := env.Answer(time.Minute, "release-notes", map[string]string{"summary": "x"}, "alice")
	env.Answer(2*time.Minute, "release-notes", notes, "alice")
	env.Approve(time.Hour, "ship", "alice")
	dup := env.Approve(time.Hour+time.Minute, "ship", "alice")
	outsider := env.Approve(time.Hour+2*time.Minute, "ship", "mallory")
	env.RequestChanges(2*time.Hour, "ship", "bob", "add the migration")
	env.Answer(3*time.Hour, "release-notes", examples.ReleaseNotes{Summary: "Faster pages; migrate first", Risk: "medium"}, "carol")
	env.Approve(4*time.Hour, "ship", "alice")
	env.Approve(5*time.Hour, "ship", "bob")
	env.Signal(6*time.Hour, "deploy-done", "4.0.0", "", examples.DeployDone{Environment: "prod"})
	r := env.Run("ship", examples.ShipInput{Version: "4.0.0"})
	require.NoError(t, r.Err)
	assert.Equal(t, runs.StatusCompleted, r.Status())
	require.Error(t, bad.Err, "a bad answer is refused")
	assert.Contains(t, bad.Err.Error(), "does not match the schema")
	require.NoError(t, dup.Err)
	assert.Equal(t, approval.VoteStatus("duplicate"), dup.Result.(approval.VoteResult).Status)
	require.Error(t, outsider.Err)
	assert.Contains(t, outsider.Err.Error(), "mallory may not decide")
	d, ok := r.Decision("ship")
	require.True(t, ok)
	assert.Equal(t, approval.Approved, d.Outcome)
	var who []string
	for _, v := range r.Votes("ship") {
		who = append(who, v.By)
	}
	assert.Equal(t, []string{"alice", "bob"}, who)
	var out examples.ShipOutput
	require.NoError(t, r.Decode(&out))
	assert.Equal(t, 2, out.Rounds)
}

func TestRejectionEndsTheRunRejected(t *testing.T) {
	env := testsuite.NewEnv(t, flow.WorkerOptions{Directory: examples.Directory()})
	env.Register(examples.All()...)
	env.Answer(time.Minute, "release-notes", examples.ReleaseNotes{Summary: "Something risky here", Risk: "high"}, "alice")
	env.Reject(time.Hour, "ship", "carol", "not this week")
	r := env.Run("ship", examples.ShipInput{Version: "4.0.1"})
	assert.Equal(t, runs.StatusRejected, r.Status())
	var rej *approval.RejectedError
	assert.False(t, errors.As(r.Err, &rej), "across the workflow boundary the rejection is an application error")
	assert.Contains(t, r.Err.Error(), "rejected by carol: not this week")
}
