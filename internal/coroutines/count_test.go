package coroutines

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

func TestCountSeesAWorkflowsCoroutines(t *testing.T) {
	var env testsuite.WorkflowTestSuite
	e := env.NewTestWorkflowEnvironment()
	before, during := Count(), -1
	e.ExecuteWorkflow(func(ctx workflow.Context) error {
		ch := workflow.NewChannel(ctx)
		for range 3 {
			workflow.Go(ctx, func(gctx workflow.Context) { ch.Receive(gctx, nil) })
		}
		_ = workflow.Sleep(ctx, 0) // let them block
		during = Count() - before
		for range 3 {
			ch.Send(ctx, nil)
		}
		return nil
	})
	assert.NoError(t, e.GetWorkflowError())
	assert.Equal(t, 4, during, "the workflow's function and its three coroutines")
}
