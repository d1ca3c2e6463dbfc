package flow

import (
	"github.com/gateflow/gateflow/artifacts"

	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/runs"
)

func TestLookupArtifactClosestEarlierProducerOfTheAttempt(t *testing.T) {
	art := func(name, key string) artifacts.Artifact { return artifacts.Artifact{Name: name, Key: key} }
	steps := []runs.Step{
		{Name: "build", ActivityID: "build", RunAttempt: 1, Status: runs.StepCompleted, Artifacts: []artifacts.Artifact{art("app", "k1")}},
		{Name: "build", ActivityID: "build#2", RunAttempt: 2, Status: runs.StepCompleted, Artifacts: []artifacts.Artifact{art("app", "k2"), art("log", "k2log")}},
		{Name: "test", ActivityID: "test#2", RunAttempt: 2, Status: runs.StepCompleted},
		{Name: "build", ActivityID: "build#3", RunAttempt: 2, Status: runs.StepCompleted, Artifacts: []artifacts.Artifact{art("app", "k3")}},
		{Name: "build", ActivityID: "review/build", Branch: "review", RunAttempt: 2, Status: runs.StepFailed},
	}
	tests := []struct {
		name       string
		runAttempt int
		step, art  string
		wantKey    string
		wantErr    string
	}{
		{"the closest producer wins", 2, "build", "app", "k3", ""},
		{"a closer step without the artifact is passed over", 2, "build", "log", "k2log", ""},
		{"by activity ID", 2, "build#2", "app", "k2", ""},
		{"an earlier run attempt is not seen", 1, "build", "app", "k1", ""},
		{"a later attempt does not see the first's", 2, "build", "only-in-1", "",
			`artifact "only-in-1" of step "build" not found: no earlier step "build" produced it (the closest, review/build, is failed and produced nothing)`},
		{"no such step", 2, "deploy", "app", "", `artifact "app" of step "deploy" not found: no earlier step "deploy" in run attempt 2`},
		{"a step that produced other artifacts", 2, "build#3", "log", "",
			`artifact "log" of step "build#3" not found: no earlier step "build#3" produced it (the closest, build#3, is completed and produced app)`},
		{"a step of another attempt only", 3, "build", "app", "", `artifact "app" of step "build" not found: no earlier step "build" in run attempt 3`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := lookupArtifact(steps, tt.runAttempt, tt.step, tt.art)
			if tt.wantErr == "" {
				require.NoError(t, err)
				assert.Equal(t, tt.wantKey, got.Key)
				return
			}
			require.Error(t, err)
			assert.True(t, ErrorArtifactNotFound.Is(err))
			var app *temporal.ApplicationError
			require.ErrorAs(t, err, &app)
			assert.Equal(t, tt.wantErr, app.Message())
			assert.True(t, app.NonRetryable())
			assert.Equal(t, tt.wantErr, stepFailureMessage(err))
		})
	}
}

func TestShellInputsResolvedFromTheRunAndMissingOnesNotDispatched(t *testing.T) {
	f := Define("unit/artifacts", func(ctx *Context, _ none) (string, error) {
		if _, err := ctx.Shell("build", activities.Shell{Command: "make", Outputs: []string{"dist"}}); err != nil {
			return "", err
		}
		res, err := ctx.Shell("use", activities.Shell{Command: "cat app",
			Inputs: []activities.ArtifactInput{{Step: "build", Name: "dist/app", Path: "app"}}})
		if err != nil {
			return "", err
		}
		_, err = ctx.Shell("missing", activities.Shell{Command: "cat x", Inputs: []activities.ArtifactInput{{Step: "build", Name: "dist/other"}}})
		return res.Stdout, err
	})
	env := newUnitEnv(t, runConfig{}, f)
	calls := mockShell(env, func(s activities.Shell) (activities.ShellResult, error) {
		if len(s.Outputs) > 0 {
			return activities.ShellResult{Attempt: 1, Artifacts: []artifacts.Artifact{{Name: "dist/app", Key: "artifacts/k/dist/app", Size: 3}}}, nil
		}
		return activities.ShellResult{Stdout: "ran", Attempt: 1}, nil
	})
	env.ExecuteWorkflow(f.Name(), none{})
	err := env.GetWorkflowError()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "(type: gateflow.ArtifactNotFound, retryable: false)", "the run fails with the typed cause")
	all := calls.all()
	require.Len(t, all, 2, "the step with a missing input is not dispatched")
	assert.Equal(t, []activities.ArtifactInput{{Step: "build", Name: "dist/app", Path: "app", Key: "artifacts/k/dist/app"}}, all[1].Inputs)

	st := queryState(t, env)
	assert.Equal(t, []artifacts.Artifact{{Name: "dist/app", Key: "artifacts/k/dist/app", Size: 3}}, stepByName(t, st, "build").Artifacts)
	miss := stepByName(t, st, "missing")
	assert.Equal(t, runs.StepFailed, miss.Status)
	assert.Equal(t, `artifact "dist/other" of step "build" not found: no earlier step "build" produced it (the closest, build, is completed and produced dist/app)`, miss.Error)
}

// What a failed shell step still collected is on its record, and later steps can use it
// (a test report of failed tests, read by a cleanup step).
func TestFailedShellStepArtifactsAreRecordedAndUsable(t *testing.T) {
	f := Define("unit/artifacts-failed", func(ctx *Context, _ none) (string, error) {
		_, _ = ctx.Shell("test", activities.Shell{Command: "make test", Outputs: []string{"report.xml"}}, AllowFailure())
		res, err := ctx.Shell("report", activities.Shell{Command: "cat report.xml",
			Inputs: []activities.ArtifactInput{{Step: "test", Name: "report.xml"}}})
		return res.Stdout, err
	})
	env := newUnitEnv(t, runConfig{}, f)
	report := artifacts.Artifact{Name: "report.xml", Key: "artifacts/k/report.xml", Size: 9}
	calls := mockShell(env, func(s activities.Shell) (activities.ShellResult, error) {
		if len(s.Outputs) > 0 {
			return activities.ShellResult{}, temporal.NewApplicationError("exit code 2", activities.ShellExitErrorType,
				activities.ShellFailure{ExitCode: 2, Attempt: 1, Artifacts: []artifacts.Artifact{report}})
		}
		return activities.ShellResult{Stdout: "read", Attempt: 1}, nil
	})
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	st := queryState(t, env)
	failed := stepByName(t, st, "test")
	assert.Equal(t, runs.StepFailed, failed.Status)
	assert.Equal(t, []artifacts.Artifact{report}, failed.Artifacts)
	all := calls.all()
	require.Len(t, all, 2)
	assert.Equal(t, report.Key, all[1].Inputs[0].Key)
}
