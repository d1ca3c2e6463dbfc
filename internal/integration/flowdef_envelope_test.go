package integration

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/internal/protocol"
)

// checkFlowdef parses and validates a definition written in a test.
func checkFlowdef(t *testing.T, file, src string) *flowdef.Definition {
	t.Helper()
	def, err := flowdef.Check(file, []byte(src), &flowdef.StaticRegistry{})
	require.NoError(t, err)
	return def
}

const envelopeGated = `
name: it-envelope-gated
concurrency: {max_runs: 1, on_overflow: refuse}
steps:
  - id: ok
    gate: {type: approval, prompt: "Go?", approvers: [alice]}
  - id: done
    finish: {output: {approved: true}}
`

const envelopeSource = `
name: it-envelope-source
inputs: {type: object, properties: {value: {type: string}}}
steps:
  - id: done
    finish: {output: {value: "from-${{ inputs.value }}"}}
`

const envelopeTriggered = `
name: it-envelope-triggered
inputs: {type: object, properties: {value: {type: string}}, required: [value]}
triggers:
  - {on: completed, flow: it-envelope-source}
steps:
  - id: done
    finish: {output: {got: "${{ inputs.value }}"}}
`

// A definition's concurrency is flow.MaxRuns: with max_runs 1 and on_overflow refuse, a
// second start is refused while the first run waits on its approval.
func TestFlowdefEnvelopeMaxRunsRefuse(t *testing.T) {
	c := flowdefWorker(t, "flowdef-envelope-maxruns", nil, buildInterp(t, checkFlowdef(t, "gated.yaml", envelopeGated)))
	ctx := ctxT(t, 2*time.Minute)

	first, err := c.Start(ctx, "it-envelope-gated", map[string]any{}, flow.StartOptions{})
	require.NoError(t, err)
	eventually(t, c, first.ID, "waits for its approval", waitingFor("approval:ok"))

	_, err = c.Start(ctx, "it-envelope-gated", map[string]any{}, flow.StartOptions{})
	var mr *flow.MaxRunsError
	require.True(t, errors.As(err, &mr), "%v", err)
	assert.Equal(t, []string{first.ID}, mr.Live)

	_, err = c.Vote(ctx, first.ID, approval.Vote{Gate: "ok", Kind: approval.Approve, By: "alice"})
	require.NoError(t, err)
	d, err := c.Wait(ctx, first.ID)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, d.Status, d.Error)
	assert.JSONEq(t, `{"approved": true}`, string(d.Result))
}

// A definition's trigger on another definition's completion is flow.OnRunOf: the ended
// run's output is the triggered run's input.
func TestFlowdefEnvelopeTrigger(t *testing.T) {
	c := flowdefWorker(t, "flowdef-envelope-trigger", nil,
		buildInterp(t, checkFlowdef(t, "source.yaml", envelopeSource)),
		buildInterp(t, checkFlowdef(t, "triggered.yaml", envelopeTriggered)))
	ctx := ctxT(t, 2*time.Minute)

	run, err := c.Start(ctx, "it-envelope-source", map[string]any{"value": "v1"}, flow.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, d.Status, d.Error)

	id := protocol.TriggeredID("it-envelope-triggered", run.ID, run.RunID)
	require.Eventually(t, func() bool {
		_, err := c.Describe(ctx, id)
		return err == nil
	}, time.Minute, 200*time.Millisecond, "the triggered run starts")
	td, err := c.Wait(ctx, id)
	require.NoError(t, err)
	require.Equal(t, flow.StatusCompleted, td.Status, td.Error)
	assert.Equal(t, "trigger", td.CreatedBy)
	assert.JSONEq(t, `{"got": "from-v1"}`, string(td.Result))
}
