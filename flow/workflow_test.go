package flow

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/searchattr"
)

// stepsInput makes the test flow run these shell steps in order.
type stepsInput struct {
	Steps []testStep `json:"steps"`
}

type testStep struct {
	Name  string           `json:"name"`
	Shell activities.Shell `json:"shell"`
	// Retry gives the step a retry policy that retries everything, twice at most.
	Retry bool `json:"retry,omitempty"`
}

type stepsOutput struct {
	Stdout []string `json:"stdout"`
}

// stepsFlow runs the input's steps and stops at the first failure.
var stepsFlow = Define("test/steps", func(ctx *Context, in stepsInput) (stepsOutput, error) {
	var out stepsOutput
	for _, s := range in.Steps {
		var opts []StepOption
		if s.Retry {
			opts = append(opts, Retry(temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 2}))
		}
		res, err := ctx.Shell(s.Name, s.Shell, opts...)
		if err != nil {
			return out, err
		}
		out.Stdout = append(out.Stdout, res.Stdout)
	}
	return out, nil
}, Description("runs shell steps"), Version("7"))

// newEnv is a test environment with the flow and the shell activity registered as
// NewWorker's Start registers them.
func newEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	require.NoError(t, stepsFlow.Err())
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(stepsFlow.workflow(), workflow.RegisterOptions{Name: stepsFlow.Name()})
	env.RegisterActivityWithOptions(activities.RunShell, activity.RegisterOptions{Name: activities.ShellActivity})
	return env
}

func queryState(t *testing.T, env *testsuite.TestWorkflowEnvironment) runs.State {
	t.Helper()
	v, err := env.QueryWorkflow(protocol.QueryState)
	require.NoError(t, err)
	var st runs.State
	require.NoError(t, v.Get(&st))
	return st
}

func intp(i int) *int { return &i }

// stepView is the part of a runs.Step that does not depend on the clock.
type stepView struct {
	Name, ActivityID, Error, Output string
	Kind                            runs.StepKind
	Status                          runs.StepStatus
	Attempt                         int
	ExitCode                        *int
	Ended                           bool
}

func viewSteps(steps []runs.Step) []stepView {
	out := make([]stepView, 0, len(steps))
	for _, s := range steps {
		out = append(out, stepView{Name: s.Name, ActivityID: s.ActivityID, Error: s.Error, Output: s.Output,
			Kind: s.Kind, Status: s.Status, Attempt: s.Attempt, ExitCode: s.ExitCode, Ended: s.EndedAt != nil})
	}
	return out
}

func TestWorkflowWithRealShell(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "marker")
	tests := []struct {
		name       string
		in         stepsInput
		wantOut    []string
		wantErr    string
		wantStatus runs.Status
		wantSteps  []stepView
		wantStarts int
	}{
		{
			name:       "two steps complete",
			in:         stepsInput{Steps: []testStep{{Name: "build", Shell: activities.Shell{Command: "echo built"}}, {Name: "test", Shell: activities.Shell{Command: "echo ok"}}}},
			wantOut:    []string{"built\n", "ok\n"},
			wantStatus: runs.StatusCompleted,
			wantSteps: []stepView{
				{Name: "build", ActivityID: "build", Kind: runs.KindShell, Status: runs.StepCompleted, Attempt: 1, ExitCode: intp(0), Output: "built\n", Ended: true},
				{Name: "test", ActivityID: "test", Kind: runs.KindShell, Status: runs.StepCompleted, Attempt: 1, ExitCode: intp(0), Output: "ok\n", Ended: true},
			},
			wantStarts: 2,
		},
		{
			name:       "non-zero exit fails the run and is not retried",
			in:         stepsInput{Steps: []testStep{{Name: "ok", Shell: activities.Shell{Command: "true"}}, {Name: "deploy", Shell: activities.Shell{Command: "echo boom >&2; exit 3"}}, {Name: "never", Shell: activities.Shell{Command: "true"}}}},
			wantErr:    "step deploy: exit code 3: boom",
			wantStatus: runs.StatusFailed,
			wantSteps: []stepView{
				{Name: "ok", ActivityID: "ok", Kind: runs.KindShell, Status: runs.StepCompleted, Attempt: 1, ExitCode: intp(0), Ended: true},
				{Name: "deploy", ActivityID: "deploy", Kind: runs.KindShell, Status: runs.StepFailed, Attempt: 1, ExitCode: intp(3), Error: "exit code 3: boom", Ended: true},
			},
			wantStarts: 2,
		},
		{
			name:       "retry policy retries a failed exit and records the attempt",
			in:         stepsInput{Steps: []testStep{{Name: "flaky", Retry: true, Shell: activities.Shell{Command: "if [ -e " + marker + " ]; then echo second; else touch " + marker + "; exit 9; fi"}}}},
			wantOut:    []string{"second\n"},
			wantStatus: runs.StatusCompleted,
			wantSteps: []stepView{
				{Name: "flaky", ActivityID: "flaky", Kind: runs.KindShell, Status: runs.StepCompleted, Attempt: 2, ExitCode: intp(0), Output: "second\n", Ended: true},
			},
			wantStarts: 2,
		},
		{
			name:       "retries exhausted keep the last attempt and exit code",
			in:         stepsInput{Steps: []testStep{{Name: "broken", Retry: true, Shell: activities.Shell{Command: "exit 5"}}}},
			wantErr:    "step broken: exit code 5",
			wantStatus: runs.StatusFailed,
			wantSteps: []stepView{
				{Name: "broken", ActivityID: "broken", Kind: runs.KindShell, Status: runs.StepFailed, Attempt: 2, ExitCode: intp(5), Error: "exit code 5", Ended: true},
			},
			wantStarts: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t)
			var mu sync.Mutex
			starts := 0
			env.SetOnActivityStartedListener(func(*activity.Info, context.Context, converter.EncodedValues) {
				mu.Lock()
				starts++
				mu.Unlock()
			})
			env.ExecuteWorkflow(stepsFlow.Name(), tt.in)
			require.True(t, env.IsWorkflowCompleted())

			if tt.wantErr != "" {
				err := env.GetWorkflowError()
				var app *temporal.ApplicationError
				require.True(t, errors.As(err, &app), "want an application error, got %v", err)
				assert.Equal(t, tt.wantErr, app.Message())
				assert.Equal(t, "StepError", app.Type())
			} else {
				require.NoError(t, env.GetWorkflowError())
				var out stepsOutput
				require.NoError(t, env.GetWorkflowResult(&out))
				assert.Equal(t, tt.wantOut, out.Stdout)
			}

			st := queryState(t, env)
			assert.Equal(t, stepsFlow.Name(), st.Workflow)
			assert.Equal(t, "7", st.Version)
			assert.Equal(t, tt.wantStatus, st.Status)
			assert.Equal(t, tt.wantErr, st.Error)
			assert.NotNil(t, st.EndedAt)
			assert.Equal(t, tt.wantSteps, viewSteps(st.Steps))
			mu.Lock()
			assert.Equal(t, tt.wantStarts, starts, "activity attempts started")
			mu.Unlock()
		})
	}
}

func shellExit(code int, tail string) error {
	msg := "exit code " + strconv.Itoa(code)
	if tail != "" {
		msg += ": " + tail
	}
	return temporal.NewApplicationError(msg, activities.ShellExitErrorType,
		activities.ShellFailure{ExitCode: code, StderrTail: tail, Attempt: 1})
}

func TestWorkflowWithMockedShell(t *testing.T) {
	tests := []struct {
		name       string
		in         stepsInput
		mock       any // a ShellResult or a func(ctx, Shell) (ShellResult, error); nil: no mock call expected
		mockErr    error
		wantCalls  int
		wantErr    string
		wantSteps  []stepView
		wantStdout []string
	}{
		{
			name:      "shell exit error with details",
			in:        stepsInput{Steps: []testStep{{Name: "lint", Shell: activities.Shell{Command: "make lint"}}}},
			mock:      activities.ShellResult{},
			mockErr:   shellExit(2, "2 problems"),
			wantCalls: 1,
			wantErr:   "step lint: exit code 2: 2 problems",
			wantSteps: []stepView{{Name: "lint", ActivityID: "lint", Kind: runs.KindShell, Status: runs.StepFailed, Attempt: 1, ExitCode: intp(2), Error: "exit code 2: 2 problems", Ended: true}},
		},
		{
			name:      "empty step name dispatches nothing",
			in:        stepsInput{Steps: []testStep{{Name: " ", Shell: activities.Shell{Command: "true"}}}},
			wantErr:   "step  : step name is empty",
			wantSteps: []stepView{{Name: " ", ActivityID: " ", Kind: runs.KindShell, Status: runs.StepFailed, Attempt: 1, Error: "step name is empty", Ended: true}},
		},
		{
			name:      "invalid shell dispatches nothing",
			in:        stepsInput{Steps: []testStep{{Name: "build", Shell: activities.Shell{Command: ""}}}},
			wantErr:   "step build: shell: command is empty",
			wantSteps: []stepView{{Name: "build", ActivityID: "build", Kind: runs.KindShell, Status: runs.StepFailed, Attempt: 1, Error: "shell: command is empty", Ended: true}},
		},
		{
			name: "repeated names get numbered activity IDs",
			in: stepsInput{Steps: []testStep{
				{Name: "poll", Shell: activities.Shell{Command: "a"}},
				{Name: "poll", Shell: activities.Shell{Command: "b"}},
				{Name: "other", Shell: activities.Shell{Command: "c"}},
				{Name: "poll", Shell: activities.Shell{Command: "d"}},
			}},
			mock: func(ctx context.Context, s activities.Shell) (activities.ShellResult, error) {
				info := activity.GetInfo(ctx)
				return activities.ShellResult{Stdout: s.Command + "@" + info.ActivityID + "/" + info.ActivityType.Name, Attempt: int(info.Attempt)}, nil
			},
			wantCalls:  4,
			wantStdout: []string{"a@poll/gateflow.shell", "b@poll#2/gateflow.shell", "c@other/gateflow.shell", "d@poll#3/gateflow.shell"},
			wantSteps: []stepView{
				{Name: "poll", ActivityID: "poll", Kind: runs.KindShell, Status: runs.StepCompleted, Attempt: 1, ExitCode: intp(0), Output: "a@poll/gateflow.shell", Ended: true},
				{Name: "poll", ActivityID: "poll#2", Kind: runs.KindShell, Status: runs.StepCompleted, Attempt: 1, ExitCode: intp(0), Output: "b@poll#2/gateflow.shell", Ended: true},
				{Name: "other", ActivityID: "other", Kind: runs.KindShell, Status: runs.StepCompleted, Attempt: 1, ExitCode: intp(0), Output: "c@other/gateflow.shell", Ended: true},
				{Name: "poll", ActivityID: "poll#3", Kind: runs.KindShell, Status: runs.StepCompleted, Attempt: 1, ExitCode: intp(0), Output: "d@poll#3/gateflow.shell", Ended: true},
			},
		},
		{
			name: "infrastructure errors are retried by default",
			in:   stepsInput{Steps: []testStep{{Name: "net", Shell: activities.Shell{Command: "curl x"}}}},
			mock: func(ctx context.Context, s activities.Shell) (activities.ShellResult, error) {
				if a := activity.GetInfo(ctx).Attempt; a < 3 {
					return activities.ShellResult{}, errors.New("connection reset")
				}
				return activities.ShellResult{Stdout: "fine", Attempt: 3}, nil
			},
			wantCalls:  3,
			wantStdout: []string{"fine"},
			wantSteps:  []stepView{{Name: "net", ActivityID: "net", Kind: runs.KindShell, Status: runs.StepCompleted, Attempt: 3, ExitCode: intp(0), Output: "fine", Ended: true}},
		},
		{
			name: "default policy gives up after three attempts",
			in:   stepsInput{Steps: []testStep{{Name: "net", Shell: activities.Shell{Command: "curl x"}}}},
			mock: func(context.Context, activities.Shell) (activities.ShellResult, error) {
				return activities.ShellResult{}, errors.New("connection reset")
			},
			wantCalls: DefaultStepAttempts,
			wantErr:   "step net: connection reset",
			wantSteps: []stepView{{Name: "net", ActivityID: "net", Kind: runs.KindShell, Status: runs.StepFailed, Attempt: 1, Error: "connection reset", Ended: true}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t)
			if tt.mock != nil {
				if _, isResult := tt.mock.(activities.ShellResult); isResult {
					env.OnActivity(activities.ShellActivity, mock.Anything, mock.Anything).Return(tt.mock, tt.mockErr)
				} else {
					env.OnActivity(activities.ShellActivity, mock.Anything, mock.Anything).Return(tt.mock)
				}
			} else {
				env.OnActivity(activities.ShellActivity, mock.Anything, mock.Anything).Return(activities.ShellResult{}, nil).Maybe()
			}
			env.ExecuteWorkflow(stepsFlow.Name(), tt.in)
			require.True(t, env.IsWorkflowCompleted())
			env.AssertActivityNumberOfCalls(t, activities.ShellActivity, tt.wantCalls)

			st := queryState(t, env)
			if tt.wantErr != "" {
				var app *temporal.ApplicationError
				require.True(t, errors.As(env.GetWorkflowError(), &app), "want an application error, got %v", env.GetWorkflowError())
				assert.Equal(t, tt.wantErr, app.Message())
				assert.Equal(t, "StepError", app.Type())
				assert.Equal(t, runs.StatusFailed, st.Status)
				assert.Equal(t, tt.wantErr, st.Error)
			} else {
				require.NoError(t, env.GetWorkflowError())
				var out stepsOutput
				require.NoError(t, env.GetWorkflowResult(&out))
				assert.Equal(t, tt.wantStdout, out.Stdout)
				assert.Equal(t, runs.StatusCompleted, st.Status)
			}
			assert.Equal(t, tt.wantSteps, viewSteps(st.Steps))
		})
	}
}

func TestWorkflowUpsertsStatusAndMemo(t *testing.T) {
	tests := []struct {
		name         string
		in           stepsInput
		startStatus  string
		wantStatuses []string
		wantFinal    runs.Status
	}{
		{"completed run", stepsInput{Steps: []testStep{{Name: "a", Shell: activities.Shell{Command: "true"}}}}, "", []string{"running", "completed"}, runs.StatusCompleted},
		{"failed run", stepsInput{Steps: []testStep{{Name: "a", Shell: activities.Shell{Command: "exit 1"}}}}, "", []string{"running", "failed"}, runs.StatusFailed},
		{"status set at start is not upserted again", stepsInput{}, "running", []string{"completed"}, runs.StatusCompleted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t)
			if tt.startStatus != "" {
				require.NoError(t, env.SetTypedSearchAttributesOnStart(temporal.NewSearchAttributes(searchattr.StatusKey.ValueSet(tt.startStatus))))
			}
			var statuses []string
			env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
				sa := args.Get(0).(temporal.SearchAttributes)
				v, ok := sa.GetKeyword(searchattr.StatusKey)
				require.True(t, ok, "every upsert sets FlowStatus")
				statuses = append(statuses, v)
			}).Return(nil)
			var memos []map[string]any
			env.OnUpsertMemo(mock.Anything).Run(func(args mock.Arguments) {
				memos = append(memos, args.Get(0).(map[string]any))
			}).Return(nil)

			env.ExecuteWorkflow(stepsFlow.Name(), tt.in)
			require.True(t, env.IsWorkflowCompleted())
			assert.Equal(t, tt.wantStatuses, statuses)

			require.Len(t, memos, 1, "the final state is kept in the memo once")
			st, ok := memos[0][protocol.MemoState].(runs.State)
			require.True(t, ok, "memo %s holds a runs.State, got %T", protocol.MemoState, memos[0][protocol.MemoState])
			assert.Equal(t, tt.wantFinal, st.Status)
			assert.Equal(t, len(tt.in.Steps), len(st.Steps))
			assert.NotNil(t, st.EndedAt)
			assert.Equal(t, queryState(t, env).Status, st.Status, "memo and query agree")
		})
	}
}

func TestWorkflowStateWhileRunning(t *testing.T) {
	env := newEnv(t)
	env.OnActivity(activities.ShellActivity, mock.Anything, mock.Anything).
		After(10*time.Minute).Return(activities.ShellResult{Stdout: "late"}, nil)
	var during runs.State
	var details string
	env.RegisterDelayedCallback(func() {
		during = queryState(t, env)
		details = currentDetails(t, env)
	}, time.Minute)
	env.ExecuteWorkflow(stepsFlow.Name(), stepsInput{Steps: []testStep{{Name: "slow", Shell: activities.Shell{Command: "sleep"}}}})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())

	assert.Equal(t, runs.StatusRunning, during.Status)
	assert.Nil(t, during.EndedAt)
	require.Len(t, during.Steps, 1)
	assert.Equal(t, runs.StepRunning, during.Steps[0].Status)
	assert.Nil(t, during.Steps[0].EndedAt)
	assert.Contains(t, details, "**test/steps** — running")
	assert.Contains(t, details, "| slow | shell | running | 1 |")

	after := queryState(t, env)
	require.Len(t, after.Steps, 1)
	assert.Equal(t, runs.StepCompleted, after.Steps[0].Status)
	assert.Equal(t, 10*time.Minute, after.Steps[0].EndedAt.Sub(after.Steps[0].StartedAt), "step times come from the workflow clock")
	final := currentDetails(t, env)
	assert.Contains(t, final, "**test/steps** — completed")
	assert.Contains(t, final, "| slow | shell | completed | 1 | 10m0s | - | late |")
}

// currentDetails reads what SetCurrentDetails published, through the built-in metadata query.
func currentDetails(t *testing.T, env *testsuite.TestWorkflowEnvironment) string {
	t.Helper()
	v, err := env.QueryWorkflow("__temporal_workflow_metadata")
	require.NoError(t, err)
	var md sdkpb.WorkflowMetadata
	require.NoError(t, v.Get(&md))
	return md.GetCurrentDetails()
}

func TestWorkflowQueryIsDescribed(t *testing.T) {
	env := newEnv(t)
	env.ExecuteWorkflow(stepsFlow.Name(), stepsInput{})
	require.NoError(t, env.GetWorkflowError())
	v, err := env.QueryWorkflow("__temporal_workflow_metadata")
	require.NoError(t, err)
	var md sdkpb.WorkflowMetadata
	require.NoError(t, v.Get(&md))
	found := false
	for _, q := range md.GetDefinition().GetQueryDefinitions() {
		if q.GetName() == protocol.QueryState {
			found = true
			assert.Equal(t, "The run's status, steps, cost and children", q.GetDescription())
		}
	}
	assert.True(t, found, "query %s is listed in the workflow metadata", protocol.QueryState)
	assert.Equal(t, "**test/steps** — completed\n\nCost **$0.0000**\n\nNo steps yet.\n", currentDetails(t, env))
}

// TestWorkflowErrorChainKeepsShellFailure: the run's error wraps the activity error, so a
// caller can still reach the shell failure and its exit code.
func TestWorkflowErrorChainKeepsShellFailure(t *testing.T) {
	env := newEnv(t)
	env.ExecuteWorkflow(stepsFlow.Name(), stepsInput{Steps: []testStep{{Name: "check", Shell: activities.Shell{Command: "echo disk full >&2; exit 28"}}}})
	err := env.GetWorkflowError()
	require.Error(t, err)

	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app))
	assert.Equal(t, "StepError", app.Type())
	var act *temporal.ActivityError
	require.True(t, errors.As(err, &act), "the activity error is in the chain")
	assert.Equal(t, activities.ShellActivity, act.ActivityType().GetName())
	var shell *temporal.ApplicationError
	require.True(t, errors.As(act.Unwrap(), &shell))
	assert.Equal(t, activities.ShellExitErrorType, shell.Type())
	assert.Equal(t, "exit code 28: disk full", shell.Message())
	var f activities.ShellFailure
	require.NoError(t, shell.Details(&f))
	assert.Equal(t, activities.ShellFailure{ExitCode: 28, StderrTail: "disk full", Attempt: 1}, f)
}
