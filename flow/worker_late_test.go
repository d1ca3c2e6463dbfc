package flow

import (
	"log/slog"
	"testing"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/protocol"
)

// lateEnv is a test environment with a worker's dynamic workflow registered, as Start
// registers it, for a worker that began (flows added from now on are late).
func lateEnv(t *testing.T, w *Worker) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	_, err := w.begin()
	require.NoError(t, err)
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := s.NewTestWorkflowEnvironment()
	env.RegisterDynamicWorkflow(w.dynamicWorkflow, workflow.DynamicRegisterOptions{})
	env.RegisterActivityWithOptions(activities.RunShell, activity.RegisterOptions{Name: activities.ShellActivity})
	return env
}

func TestAddFlowsBeforeStartOnlyAdds(t *testing.T) {
	w := NewWorker(nil, WorkerOptions{})
	require.NoError(t, w.AddFlows(stepsFlow, Define("test/steps", someHandler)))
	assert.Len(t, w.Flows(), 2)
	assert.ErrorContains(t, w.Validate(), "flow test/steps is defined twice", "Start reports it")
}

// A late flow runs through the dynamic workflow exactly as the registered flow does:
// same output, same run state.
func TestLateFlowRunsLikeRegistered(t *testing.T) {
	in := stepsInput{Steps: []testStep{{Name: "hi", Shell: activities.Shell{Command: "echo hi"}}}}
	reg := newEnv(t)
	reg.ExecuteWorkflow(stepsFlow.Name(), in)
	require.NoError(t, reg.GetWorkflowError())
	var want stepsOutput
	require.NoError(t, reg.GetWorkflowResult(&want))

	w := NewWorker(nil, WorkerOptions{})
	env := lateEnv(t, w)
	late, err := w.addFlows([]Definition{stepsFlow})
	require.NoError(t, err)
	assert.True(t, late)
	env.ExecuteWorkflow(stepsFlow.Name(), in)
	require.NoError(t, env.GetWorkflowError())
	var got stepsOutput
	require.NoError(t, env.GetWorkflowResult(&got))
	assert.Equal(t, want, got)
	assert.Equal(t, []string{"hi\n"}, got.Stdout)
	st := queryState(t, env)
	assert.Equal(t, runs.StatusCompleted, st.Status)
	assert.Equal(t, "7", st.Version)
	assert.Contains(t, w.Registry().Flows, stepsFlow.Name())
}

// A type no flow of the worker has panics, so the SDK fails the workflow task (retried),
// not the run.
func TestDynamicWorkflowUnknownTypePanics(t *testing.T) {
	w := NewWorker(nil, WorkerOptions{TaskQueue: "late-q"})
	env := lateEnv(t, w)
	env.ExecuteWorkflow("nobody-serves-this", nil)
	err := env.GetWorkflowError()
	require.Error(t, err)
	var p *temporal.PanicError
	require.ErrorAs(t, err, &p)
	assert.Contains(t, p.Error(), `no flow named "nobody-serves-this" is served by this worker of task queue late-q`)
}

func TestAddFlowsAfterStartChecks(t *testing.T) {
	w := NewWorker(nil, WorkerOptions{}, stepsFlow)
	_, err := w.begin()
	require.NoError(t, err)
	for name, tt := range map[string]struct {
		flows []Definition
		want  string
	}{
		"duplicate":  {[]Definition{Define("test/steps", someHandler)}, "flow test/steps is defined twice"},
		"twice":      {[]Definition{Define("a", someHandler), Define("a", someHandler)}, "flow a is defined twice"},
		"nil":        {[]Definition{nil}, "flow 0 is nil"},
		"reserved":   {[]Definition{badDef{name: protocol.RegistryEntryName}}, "reserved"},
		"trigger":    {[]Definition{Define("b", someHandler, OnRunOf("test/steps", core.WhenCompleted))}, "flow b is started by runs of test/steps (a trigger)"},
		"no trigger": {[]Definition{Define("c", someHandler, OnRunOf("missing", core.WhenCompleted))}, "which this worker does not serve"},
		"gate type":  {[]Definition{Define("d", someHandler, UsesGates("nope"))}, `gate type "nope"`},
	} {
		t.Run(name, func(t *testing.T) {
			late, err := w.addFlows(tt.flows)
			assert.True(t, late)
			assert.ErrorContains(t, err, tt.want)
		})
	}
	assert.Len(t, w.Flows(), 1, "nothing wrong is added")
	assert.Nil(t, w.late.lookup("a"))

	w.Stop()
	late, err := w.addFlows([]Definition{Define("e", someHandler)})
	require.NoError(t, err)
	assert.False(t, late, "after Stop, flows wait for the next Start")
	assert.Nil(t, w.late.lookup("e"))
}

func TestResultOf(t *testing.T) {
	var p *stepsOutput
	assert.Nil(t, resultOf(p))
	assert.Equal(t, stepsOutput{}, resultOf(stepsOutput{}))
	var a any
	assert.Nil(t, resultOf(a))
	assert.Equal(t, 3, resultOf(3))
}
