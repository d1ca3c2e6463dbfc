package integration

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/runs"
)

// gateDefs are YAML approval gates with a quorum, each deadline action and templated
// approvers (issue 31, item 6): they behave as Go's approval.Request does.
var gateDefs = []string{`
name: it-gate-quorum
steps:
  - id: ok
    gate: {type: approval, approvers: ["group:ops", carol], required: 2}
  - {id: done, finish: {output: {outcome: "${{ steps.ok.output.outcome }}", by: "${{ steps.ok.output.by }}"}}}
`, `
name: it-gate-approve-on-timeout
steps:
  - id: ok
    gate: {type: approval, approvers: [alice], on_timeout: approve}
    timeout: 1s
  - {id: done, finish: {output: {outcome: "${{ steps.ok.output.outcome }}", by: "${{ steps.ok.output.by }}"}}}
`, `
name: it-gate-reject-on-timeout
steps:
  - id: ok
    gate: {type: approval, approvers: [alice], on_timeout: reject}
    timeout: 1s
    on_timeout: continue
  - {id: done, finish: {output: {status: "${{ steps.ok.status }}"}}}
`, `
name: it-gate-fail-on-timeout
steps:
  - id: ok
    gate: {type: approval, approvers: [alice], on_timeout: fail}
    timeout: 1s
    on_error: continue
  - {id: done, finish: {output: {reached: true}}}
`, `
name: it-gate-owner
inputs: {type: object, required: [owner, reviewers], properties: {owner: {type: string}, reviewers: {type: array, items: {type: string}}}}
steps:
  - id: ok
    gate: {type: approval, approvers: ["${{ inputs.owner }}", "${{ inputs.reviewers }}"], required: 2}
  - {id: done, finish: {output: {outcome: "${{ steps.ok.output.outcome }}"}}}
`, `
name: it-gate-input-owner
inputs: {type: object, required: [owner], properties: {owner: {type: string}}}
steps:
  - id: answer
    gate: {type: input, approvers: ["${{ inputs.owner }}"], schema: {type: object, required: [n], properties: {n: {type: integer}}}}
  - {id: done, finish: {output: {n: "${{ steps.answer.output.n }}"}}}
`}

func TestFlowdefApprovalGates(t *testing.T) {
	t.Parallel()
	c, _ := serveDefs(t, "flowdef-gates", gateDefs, flow.WorkerOptions{})
	approve := func(t *testing.T, c *flowclient.Client, run, by string) approval.VoteResult {
		t.Helper()
		res, err := c.Vote(ctxT(t, time.Minute), run, approval.Vote{Gate: "ok", Kind: approval.Approve, By: by})
		require.NoError(t, err, "vote by %s", by)
		return res
	}
	refused := func(t *testing.T, c *flowclient.Client, run, by string) {
		t.Helper()
		_, err := c.Vote(ctxT(t, time.Minute), run, approval.Vote{Gate: "ok", Kind: approval.Approve, By: by})
		var re *flowclient.RefusedError
		assert.True(t, errors.As(err, &re), "%s may not vote: %v", by, err)
	}
	runDefCases(t, c, []defCase{
		{name: "it-gate-quorum", output: `{"outcome": "approved", "by": "carol"}`,
			act: func(t *testing.T, c *flowclient.Client, run string) {
				d := eventually(t, c, run, "waits for the approval", waitingFor("approval:ok"))
				require.Len(t, d.State.Gates, 1)
				assert.Equal(t, 2, d.State.Gates[0].Request.Required)
				res := approve(t, c, run, "alice")
				assert.Equal(t, approval.VoteOpen, res.Status)
				assert.Equal(t, 1, res.Approvals)
				assert.Equal(t, 2, res.Required, "1 of 2")
				refused(t, c, run, "mallory")
				assert.Equal(t, approval.VoteDuplicate, approve(t, c, run, "alice").Status, "alice counts once")
				d = eventually(t, c, run, "still waits after one vote", waitingFor("approval:ok"))
				assert.Nil(t, d.State.Gates[0].Decision, "one vote of two leaves the gate open")
				res = approve(t, c, run, "carol")
				assert.Equal(t, approval.VoteStatus(approval.Approved), res.Status)
				assert.Equal(t, 2, res.Approvals)
			}},
		{name: "it-gate-approve-on-timeout", output: `{"outcome": "approved", "by": "timeout"}`,
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				require.Len(t, d.State.Gates, 1)
				require.NotNil(t, d.State.Gates[0].Decision)
				assert.True(t, d.State.Gates[0].Decision.Expired)
				assert.Empty(t, d.State.Gates[0].Decision.Votes)
			}},
		{name: "it-gate-reject-on-timeout", output: `{"status": "timed_out"}`},
		{name: "it-gate-fail-on-timeout", status: runs.StatusFailed, errs: []string{"ok"},
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				assert.Empty(t, stepRecords(d, "done"), "the run fails whatever the node's on_error says")
				require.Len(t, d.State.Gates, 1)
				require.NotNil(t, d.State.Gates[0].Decision)
				assert.True(t, d.State.Gates[0].Decision.FailRun)
			}},
		{name: "it-gate-owner", output: `{"outcome": "approved"}`,
			input: inputOf(map[string]any{"owner": "dave", "reviewers": []string{"erin"}}),
			act: func(t *testing.T, c *flowclient.Client, run string) {
				d := eventually(t, c, run, "waits for the approval", waitingFor("approval:ok"))
				require.Len(t, d.State.Gates, 1)
				assert.Equal(t, []string{"dave", "erin"}, d.State.Gates[0].Request.Approvers, "the templates rendered")
				refused(t, c, run, "mallory")
				refused(t, c, run, "alice")
				assert.Equal(t, approval.VoteOpen, approve(t, c, run, "dave").Status)
				assert.Equal(t, approval.VoteStatus(approval.Approved), approve(t, c, run, "erin").Status)
			}},
		{name: "it-gate-input-owner", output: `{"n": 7}`, input: inputOf(map[string]any{"owner": "dave"}),
			act: func(t *testing.T, c *flowclient.Client, run string) {
				ctx := ctxT(t, time.Minute)
				eventually(t, c, run, "asks for input", waitingFor("input:answer"))
				var re *flowclient.RefusedError
				_, err := c.Answer(ctx, flowclient.AnswerRequest{Run: run, Name: "answer", Data: json.RawMessage(`{"n": 1}`), By: "mallory"})
				assert.True(t, errors.As(err, &re), "mallory is not the rendered owner: %v", err)
				_, err = c.Answer(ctx, flowclient.AnswerRequest{Run: run, Name: "answer", Data: json.RawMessage(`{"n": 7}`), By: "dave"})
				require.NoError(t, err)
			}},
	})
}
