package interp_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowdef"
)

// TestWorkerGuardsMirrorFlow: what flowctl validates definitions against when it does not
// know the worker's guards is what a worker has by default.
func TestWorkerGuardsMirrorFlow(t *testing.T) {
	assert.Equal(t, flow.DefaultGuards.MaxSteps, flowdef.DefaultWorkerGuards.MaxSteps)
	assert.Equal(t, flow.DefaultGuards.MaxFanOut, flowdef.DefaultWorkerGuards.MaxFanOut)
	g := flow.NewWorker(nil, flow.WorkerOptions{}).Guards()
	assert.Equal(t, flow.DefaultGuards, g)
	g = flow.NewWorker(nil, flow.WorkerOptions{Guards: flow.Guards{MaxSteps: 7}}).Guards()
	assert.Equal(t, 7, g.MaxSteps)
	assert.Equal(t, flow.DefaultGuards.MaxFanOut, g.MaxFanOut)
}
