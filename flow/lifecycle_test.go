package flow

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/internal/searchattr"
)

// TestWorkflowCancelledRunRecordsCancelled fails today: when a run is cancelled while a
// step runs, the wrapper records FlowStatus "failed" (in the search attribute, the query
// and the memo), although Temporal closes the run as Canceled (the SDK's worker finds the
// CanceledError inside the StepError with errors.As). `flowctl list --status cancelled`
// filters on FlowStatus and so never finds cancelled runs (see the report).
func TestWorkflowCancelledRunRecordsCancelled(t *testing.T) {
	env := newEnv(t)
	env.OnActivity(activities.ShellActivity, mock.Anything, mock.Anything).
		After(time.Hour).Return(activities.ShellResult{}, nil)
	var statuses []string
	env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		v, _ := args.Get(0).(temporal.SearchAttributes).GetKeyword(searchattr.StatusKey)
		statuses = append(statuses, v)
	}).Return(nil)
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
	env.ExecuteWorkflow(stepsFlow.Name(), stepsInput{Steps: []testStep{{Name: "slow", Shell: activities.Shell{Command: "sleep 3600"}}}})
	require.True(t, env.IsWorkflowCompleted())

	err := env.GetWorkflowError()
	require.Error(t, err)
	var cancelled *temporal.CanceledError
	assert.True(t, errors.As(err, &cancelled), "the run's error carries the cancellation: %v", err)

	st := queryState(t, env)
	require.Len(t, st.Steps, 1)
	assert.Equal(t, StepCancelled, st.Steps[0].Status)
	assert.Equal(t, "cancelled", st.Steps[0].Error)
	assert.Equal(t, StatusCancelled, st.Status, "run state")
	require.NotEmpty(t, statuses)
	assert.Equal(t, string(StatusCancelled), statuses[len(statuses)-1], "last FlowStatus upsert")
}

func newCatalogEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	env := newEnv(t)
	env.RegisterWorkflowWithOptions(catalogWorkflow, workflow.RegisterOptions{Name: CatalogWorkflowType})
	return env
}

func continuedCatalog(t *testing.T, err error) Catalog {
	t.Helper()
	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(err, &can), "want continue-as-new, got %v", err)
	assert.Equal(t, CatalogWorkflowType, can.WorkflowType.Name)
	var cat Catalog
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &cat))
	return cat
}

func TestCatalogWorkflowContinuesAsNewWhenSuggested(t *testing.T) {
	env := newCatalogEnv(t)
	env.SetContinueAsNewSuggested(true)
	env.OnUpsertMemo(mock.Anything).Return(nil).Maybe()
	initial := Catalog{TaskQueue: "q", Workflows: []WorkflowInfo{{Name: "kept", Version: "1"}}}
	env.ExecuteWorkflow(CatalogWorkflowType, initial)
	require.True(t, env.IsWorkflowCompleted())
	cat := continuedCatalog(t, env.GetWorkflowError())
	assert.Equal(t, "q", cat.TaskQueue)
	assert.Equal(t, []string{"kept"}, cat.Names(), "the catalog is carried into the next run")
	env.AssertNotCalled(t, "UpsertMemo", mock.Anything)
}

func TestCatalogWorkflowMergesPublishes(t *testing.T) {
	env := newCatalogEnv(t)
	var memos []Catalog
	env.OnUpsertMemo(mock.Anything).Run(func(args mock.Arguments) {
		// The SDK serialises the memo at once; copy the entries the same way, as later
		// merges reuse the slice's backing array.
		cat := args.Get(0).(map[string]any)[MemoCatalog].(Catalog)
		cat.Workflows = append([]WorkflowInfo(nil), cat.Workflows...)
		memos = append(memos, cat)
	}).Return(nil)
	// catalogMaxSignals publishes, then the workflow continues as new. Every tenth
	// publish replaces "shared"; the others add their own entry.
	for i := 0; i < catalogMaxSignals; i++ {
		entries := []WorkflowInfo{{Name: fmt.Sprintf("wf-%03d", i)}}
		if i%10 == 0 {
			entries = []WorkflowInfo{{Name: "shared", Version: fmt.Sprint(i)}}
		}
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(CatalogPublishSignal, entries) }, time.Duration(i+1)*time.Second)
	}
	env.ExecuteWorkflow(CatalogWorkflowType, Catalog{TaskQueue: "q", Workflows: []WorkflowInfo{{Name: "zzz-old"}}})
	require.True(t, env.IsWorkflowCompleted())

	require.Len(t, memos, catalogMaxSignals, "the memo is updated after each publish")
	assert.Equal(t, []string{"shared", "zzz-old"}, memos[0].Names())
	last := memos[len(memos)-1]
	assert.Len(t, last.Workflows, catalogMaxSignals-catalogMaxSignals/10+2)
	shared, ok := last.Lookup("shared")
	require.True(t, ok)
	assert.Equal(t, "190", shared.Version)
	assert.Equal(t, env.Now().UTC(), last.UpdatedAt.UTC())

	cat := continuedCatalog(t, env.GetWorkflowError())
	assert.Equal(t, last.Names(), cat.Names(), "the next run starts from the same catalog")
}
