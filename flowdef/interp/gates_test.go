package interp_test

import (
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/testsuite"
)

func TestApprovalGate(t *testing.T) {
	src := `
name: approve
inputs: {type: object, properties: {pr: {type: integer}}}
steps:
  - id: ok
    gate: {type: approval, prompt: "Merge PR ${{ inputs.pr }}?", approvers: [alice]}
    timeout: 1h
  - {id: done, finish: {output: {outcome: "${{ steps.ok.output.outcome }}"}}}
`
	r := run(t, src, map[string]any{"pr": 7}, func(e *testsuite.Env) { e.Approve(time.Minute, "ok", "alice") })
	assert.Equal(t, map[string]any{"outcome": "approved"}, output(t, r))
	require.Len(t, r.State.Gates, 1)
	assert.Equal(t, "Merge PR 7?", r.State.Gates[0].Request.Message)

	r = run(t, src, map[string]any{"pr": 7}, func(e *testsuite.Env) { e.Reject(time.Minute, "ok", "alice", "no") })
	assert.Equal(t, runs.StatusRejected, r.Status())

	// No one decides: the timeout fails the node, and on_timeout routes it.
	r = run(t, `
name: approve-timeout
steps:
  - id: ok
    gate: {type: approval, approvers: [alice]}
    timeout: 1h
    on_timeout: goto late
  - {id: done, finish: {output: {path: approved}}}
  - {id: late, finish: {output: {path: late, status: "${{ steps.ok.status }}"}}}
`, nil, nil)
	assert.Equal(t, map[string]any{"path": "late", "status": "timed_out"}, output(t, r))
}

func TestInputGate(t *testing.T) {
	r := run(t, `
name: ask
steps:
  - id: answer
    gate: {type: input, prompt: How many?, schema: {type: object, required: [n], properties: {n: {type: integer}}}}
  - {id: done, finish: {output: {n: "${{ steps.answer.output.n * 2 }}"}}}
`, nil, func(e *testsuite.Env) { e.Answer(time.Minute, "answer", map[string]any{"n": 21}, "bob") })
	assert.Equal(t, map[string]any{"n": float64(42)}, output(t, r))
}

func TestSignalGateWithKeyAndTimeout(t *testing.T) {
	src := `
name: wait-ack
inputs: {type: object, properties: {service: {type: string}}}
steps:
  - id: ack
    gate: {type: signal, signal: ack, key: "${{ inputs.service }}"}
    timeout: 15m
    on_timeout: goto escalate
  - {id: done, finish: {output: {by: "${{ steps.ack.output.by }}"}}}
  - {id: escalate, finish: {output: {by: nobody}}}
`
	r := run(t, src, map[string]any{"service": "api"}, func(e *testsuite.Env) {
		e.Signal(time.Minute, "ack", "api", "", map[string]any{"by": "carol"})
	})
	assert.Equal(t, map[string]any{"by": "carol"}, output(t, r))

	r = run(t, src, map[string]any{"service": "api"}, nil)
	assert.Equal(t, map[string]any{"by": "nobody"}, output(t, r))
}

func TestQualityGate(t *testing.T) {
	src := `
name: quality
steps:
  - {id: summary, uses: agent, with: {prompt: "Summarise"}, output_schema: {type: object, properties: {score: {type: number}}}}
  - id: quality
    gate: {type: quality, source: summary, threshold: 80, on_fail: %s}
  - {id: done, finish: {output: {passed: "${{ steps.quality.output.passed }}"}}}
`
	script := func(e *testsuite.Env) { e.ScriptAgent(llm.ScriptRule{Text: `{"score": 60}`}) }
	r := run(t, sprintf(src, "continue"), nil, script)
	assert.Equal(t, map[string]any{"passed": false}, output(t, r))
	assert.Equal(t, runs.StatusWarning, r.Status())

	r = run(t, sprintf(src, "fail"), nil, script)
	require.Error(t, r.Err)
	assert.Contains(t, r.Err.Error(), "quality")
}

func TestPollGate(t *testing.T) {
	r := run(t, `
name: poll
steps:
  - id: ci
    gate: {type: poll, resolver: command, params: {command: "true"}, poll_interval: 30s}
    timeout: 1h
  - {id: done, finish: {output: {outcome: "${{ steps.ci.output.outcome }}"}}}
`, nil, nil)
	assert.Equal(t, map[string]any{"outcome": "approved"}, output(t, r))
}

func TestSendToMailbox(t *testing.T) {
	r := run(t, `
name: sender
steps:
  - id: tell
    send: {mailbox: incidents, signal: incident-failed, payload: {service: "${{ 'api' }}"}}
`, nil, nil)
	require.NoError(t, r.Err)
	st, ok := r.Step("incident-failed")
	require.True(t, ok)
	assert.Equal(t, runs.StepCompleted, st.Status)
}

func TestOnErrorAndAlwaysSections(t *testing.T) {
	r := run(t, `
name: sections
steps:
  - {id: boom, uses: shell, with: {command: "exit 2"}}
on_error:
  - {id: report, uses: shell, with: {command: "echo failed: ${{ steps.boom.status }}"}}
always:
  - {id: cleanup, uses: shell, with: {command: "echo tidy"}}
`, nil, nil)
	require.Error(t, r.Err)
	assert.Equal(t, []string{"boom", "report", "cleanup"}, r.StepNames())
	st, _ := r.Step("report")
	assert.Equal(t, runs.StepCompleted, st.Status)
	assert.Contains(t, st.Output, "failed: failed")

	r = run(t, `
name: sections-ok
steps:
  - {id: fine, uses: shell, with: {command: "true"}}
on_error:
  - {id: report, uses: shell, with: {command: "echo no"}}
always:
  - {id: cleanup, uses: shell, with: {command: "echo tidy"}}
`, nil, nil)
	require.NoError(t, r.Err)
	assert.Equal(t, []string{"fine", "cleanup"}, r.StepNames())
}

// A cancelled run still runs its always steps (shell, http, agent), through ctx.Always.
func TestAlwaysAfterCancel(t *testing.T) {
	r := run(t, `
name: cancelled
steps:
  - {id: wait, gate: {type: signal, signal: never}}
always:
  - {id: cleanup, uses: shell, with: {command: "echo tidy ${{ steps.wait.status }}"}}
`, nil, func(e *testsuite.Env) {
		e.Temporal().RegisterDelayedCallback(e.Temporal().CancelWorkflow, time.Minute)
	})
	assert.Equal(t, runs.StatusCancelled, r.Status())
	st, ok := r.Step("cleanup")
	require.True(t, ok)
	assert.Equal(t, runs.StepCompleted, st.Status)
	assert.Contains(t, st.Output, "tidy cancelled")
}
