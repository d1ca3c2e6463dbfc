package integration

// Declarative flows (issue 14) on the embedded server: every node kind and option of the
// format, served from files by flowdef/serve on a worker of its own queue, run through
// flowclient.Client with real shell processes, a real local HTTP server and the scripted agent
// provider. Coverage, node kind or option -> test (subtest):
//
//	examples/flows/*.yaml end to end      TestFlowdefExamplesAllRun (flowdef_examples_test.go)
//	step uses: shell                      TestFlowdefNodes/it-node-shell
//	step uses: http                       TestFlowdefNodes/it-node-http
//	step service:, http idempotency_header TestFlowdefStepService
//	step uses: agent                      TestFlowdefNodes/it-node-agent
//	step uses: registered activity        TestFlowdefNodes/it-node-action (post-comment)
//	step uses: fallback action            TestFlowdefNodes/it-node-action (open-pager)
//	set                                   TestFlowdefNodes/it-node-set
//	check (pass, fail with message)       TestFlowdefNodes/check-pass, check-fail
//	if then/else, switch cases/default    TestFlowdefNodes/branch-*
//	loop while, do-while (until), over    TestFlowdefNodes/it-node-loops
//	loop max_iterations                   TestFlowdefNodes/it-node-loop-max
//	parallel (all), min_success           TestFlowdefNodes/it-node-parallel, it-node-min-success
//	parallel fail_fast                    TestFlowdefNodes/it-node-fail-fast
//	foreach over a list, max_parallel,    TestFlowdefNodes/it-node-foreach
//	  ordered, inline steps
//	foreach ordered with depends_on,      TestFlowdefNodes/it-node-foreach-deps
//	  on_item_fail skip_dependents, a loop in an item seeing the item
//	foreach on_item_fail continue / fail  TestFlowdefNodes/it-node-foreach-continue, -stop
//	foreach over an item provider         TestFlowdefNodes/it-node-foreach-provider
//	foreach one child run per item        TestFlowdefNodes/it-node-foreach-call
//	call a definition, a Go flow          TestFlowdefNodes/it-node-call
//	call detached                         TestFlowdefNodes/it-node-detached
//	gate approval (approve, reject)       TestFlowdefNodes/approval-*
//	gate input with a JSON Schema         TestFlowdefNodes/it-node-input
//	gate signal keyed                     TestFlowdefNodes/it-node-signal
//	gate poll with a registered resolver  TestFlowdefNodes/poll-*
//	gate quality (pass, fail)             TestFlowdefNodes/quality-*; on_fail continue:
//	                                        TestFlowdefExamplesAllRun/code-review
//	sleep                                 TestFlowdefNodes/it-node-sleep
//	send to a run, to a mailbox           TestFlowdefNodes/it-node-send
//	finish completed, failed, cancelled   TestFlowdefNodes/finish-*
//	per-node options and the envelope     see flowdef_options_test.go

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gateflow/gateflow/activities"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/signals"
)

var nodeDefs = []string{`
name: it-node-shell
steps:
  - id: calc
    uses: shell
    with: {command: "echo $((6 * 7)) by $WHO in $(pwd)", env: {WHO: shell}, dir: /tmp}
  - {id: obj, uses: shell, with: {command: "echo '{\"n\": 5}'"}}
  - {id: done, finish: {output: {calc: "${{ steps.calc.output }}", n: "${{ steps.obj.output.n }}"}}}
`, `
name: it-node-http
inputs: {type: object, required: [url], properties: {url: {type: string}}}
steps:
  - id: post
    uses: http
    with: {method: POST, url: "${{ inputs.url }}/notes", json: {text: "hi ${{ 1 + 1 }}"}, expect_status: [200]}
  - {id: done, finish: {output: {ok: "${{ steps.post.output.ok }}"}}}
`, `
name: it-node-agent
steps:
  - id: triage
    uses: agent
    with: {prompt: "Triage the alert ${{ 'disk' }}"}
    output_schema: {type: object, required: [severity], properties: {severity: {type: string}}}
  - {id: done, finish: {output: {sev: "${{ steps.triage.output.severity }}"}}}
`, `
name: it-node-action
steps:
  - {id: post, uses: post-comment, with: {body: "${{ 'LGTM' }}"}}
  - {id: page, uses: open-pager, with: {who: oncall}}
  - {id: done, finish: {output: {post: "${{ steps.post.output }}", page: "${{ steps.page.output }}"}}}
`, `
name: it-node-set
vars: {n: 1, tags: []}
steps:
  - id: bump
    set: {n: "${{ vars.n + 41 }}", label: "n was ${{ vars.n }}", tags: ["${{ 'a' }}", b]}
`, `
name: it-node-check
inputs: {type: object, properties: {n: {type: integer}}}
steps:
  - id: positive
    check: inputs.n > 0
    message: "n must be positive, got ${{ inputs.n }}"
  - {id: done, finish: {output: {n: "${{ inputs.n }}"}}}
`, `
name: it-node-branch
inputs: {type: object, properties: {n: {type: integer}, sev: {type: string}}}
vars: {path: "", who: ""}
steps:
  - id: size
    if: inputs.n > 10
    then:
      - {id: big, set: {path: big}}
    else:
      - {id: small, uses: shell, with: {command: echo small}}
      - {id: note_small, set: {path: "${{ steps.small.output }}"}}
  - id: route
    switch: inputs.sev
    cases:
      - value: high
        steps: [{id: page, set: {who: page}}]
      - value: medium
        steps: [{id: ticket, set: {who: ticket}}]
    default:
      - {id: log, set: {who: log}}
`, `
name: it-node-loops
inputs: {type: object, properties: {files: {type: array, items: {type: string}}}}
vars: {i: 0, j: 0, seen: ""}
steps:
  - id: count
    loop:
      while: vars.i < 3
      max_iterations: 10
      steps: [{id: inc, set: {i: "${{ vars.i + 1 }}"}}]
  - id: once
    loop:
      until: vars.j >= 0
      max_iterations: 5
      steps: [{id: incj, set: {j: "${{ vars.j + 1 }}"}}]
  - id: each
    loop:
      over: inputs.files
      as: file
      steps:
        - {id: echo, uses: shell, with: {command: "echo ${{ index }}:${{ file }}"}}
        - {id: acc, set: {seen: "${{ vars.seen + steps.echo.output + ';' }}"}}
`, `
name: it-node-loop-max
steps:
  - id: spin
    loop:
      while: "true"
      max_iterations: 3
      steps: [{id: tick, uses: shell, with: {command: "true"}}]
`, `
name: it-node-parallel
steps:
  - id: fan
    parallel:
      - {id: left, uses: shell, with: {command: echo left}}
      - {id: right, uses: shell, with: {command: echo right}}
  - id: some
    min_success: 1
    parallel:
      - {id: ok, uses: shell, with: {command: echo ok}}
      - {id: bad, uses: shell, with: {command: "exit 3"}}
  - {id: done, finish: {output: {fan: "${{ steps.fan.output }}", some: "${{ steps.some.output }}"}}}
`, `
name: it-node-min-success
steps:
  - id: fan
    min_success: 2
    parallel:
      - {id: ok, uses: shell, with: {command: "true"}}
      - {id: bad, uses: shell, with: {command: "exit 3"}}
`, `
name: it-node-fail-fast
steps:
  - id: fan
    fail_fast: true
    parallel:
      - {id: slow, uses: shell, with: {command: "sleep 30"}}
      - {id: bad, uses: shell, with: {command: "exit 3"}}
`, `
name: it-node-foreach
inputs: {type: object, properties: {files: {type: array}}}
steps:
  - id: reviews
    foreach:
      over: inputs.files
      as: file
      max_parallel: 2
      ordered: true
      steps:
        - {id: review, uses: agent, with: {prompt: "Review ${{ file }}"}}
        - {id: shout, uses: shell, with: {command: "sleep 1; echo ${{ steps.review.output }}-${{ index }}"}}
  - {id: done, finish: {output: {all: "${{ steps.reviews.output }}"}}}
`, `
name: it-node-foreach-deps
inputs: {type: object, properties: {jobs: {type: array}}}
steps:
  - id: jobs
    foreach:
      over: inputs.jobs
      max_parallel: 3
      ordered: true
      on_item_fail: skip_dependents
      steps:
        - {id: job, uses: shell, with: {command: "sleep 0.3; test ${{ item.id }} != lint && echo ${{ item.id }}"}}
        - id: parts
          loop:
            over: "['a', 'b']"
            as: part
            steps:
              - {id: part, uses: shell, with: {command: "echo ${{ item.id }}-${{ part }}"}}
  - {id: done, finish: {output: {all: "${{ steps.jobs.output }}"}}}
`, `
name: it-node-foreach-continue
steps:
  - id: items
    foreach:
      over: "[1, 2, 3]"
      on_item_fail: continue
      steps:
        - {id: work, uses: shell, with: {command: "test ${{ item }} -ne 2 && echo ${{ item }}"}}
  - {id: done, finish: {output: {all: "${{ steps.items.output }}"}}}
`, `
name: it-node-foreach-stop
steps:
  - id: items
    foreach:
      over: "[1, 2, 3]"
      on_item_fail: fail
      steps:
        - {id: work, uses: shell, with: {command: "test ${{ item }} -ne 2 && echo ${{ item }}"}}
  - {id: done, finish: {output: {all: "${{ steps.items.output }}"}}}
`, `
name: it-node-foreach-provider
steps:
  - id: each
    foreach:
      provider: open-tickets
      params: {scope: ops, team: "${{ 'core' }}"}
      steps:
        - {id: show, uses: shell, with: {command: "echo ${{ item.id }}:${{ item.type }}:${{ item.ref }}:${{ item.path }}:${{ item.team }}"}}
  - {id: done, finish: {output: {all: "${{ steps.each.output }}"}}}
`, `
name: it-node-foreach-call
steps:
  - id: each
    foreach:
      over: "[1, 2, 3]"
      max_parallel: 3
      call: it-go-double
      with: {n: "${{ item }}"}
  - id: greet
    foreach:
      over: "['ada', 'bob']"
      call: it-node-child
      with: {who: "${{ item }}"}
  - {id: done, finish: {output: {all: "${{ steps.each.output }}", greet: "${{ steps.greet.output }}"}}}
`, `
name: it-node-child
inputs: {type: object, properties: {who: {type: string}}}
steps:
  - {id: hi, uses: shell, with: {command: "echo hi ${{ inputs.who }}"}}
  - {id: done, finish: {output: {said: "${{ steps.hi.output }}"}}}
`, `
name: it-node-call
steps:
  - {id: greet, call: it-node-child, with: {who: ada}}
  - {id: twice, call: it-go-double, with: {n: 21}}
  - {id: done, finish: {output: {greet: "${{ steps.greet.output.said }}", twice: "${{ steps.twice.output.doubled }}"}}}
`, `
name: it-node-detached
steps:
  - {id: bg, call: it-node-waiter, detached: true, with: {key: "${{ run.id }}"}}
  - {id: done, finish: {output: {child: "${{ steps.bg.output.run_id }}"}}}
`, `
name: it-node-waiter
inputs: {type: object, properties: {key: {type: string}}}
steps:
  - {id: wait, gate: {type: signal, signal: go, key: "${{ inputs.key }}"}}
  - {id: done, finish: {output: {got: "${{ steps.wait.output.n }}"}}}
`, `
name: it-node-approval
inputs: {type: object, properties: {pr: {type: integer}}}
steps:
  - id: ok
    gate: {type: approval, prompt: "Merge PR ${{ inputs.pr }}?", approvers: ["group:ops"]}
    timeout: 1h
  - {id: done, finish: {output: {outcome: "${{ steps.ok.output.outcome }}"}}}
`, `
name: it-node-input
steps:
  - id: answer
    gate: {type: input, prompt: How many?, approvers: [alice], schema: {type: object, required: [n], properties: {n: {type: integer}}}}
  - {id: done, finish: {output: {n: "${{ steps.answer.output.n * 2 }}"}}}
`, `
name: it-node-signal
steps:
  - {id: ack, gate: {type: signal, signal: ack, key: "${{ run.id }}"}}
  - {id: done, finish: {output: {by: "${{ steps.ack.output.by }}"}}}
`, `
name: it-node-poll
inputs: {type: object, properties: {ticket: {type: string}}}
steps:
  - id: fixed
    gate: {type: poll, resolver: ticket-closed, params: {ticket: "${{ inputs.ticket }}"}, poll_interval: 1s}
    timeout: 1m
  - {id: done, finish: {output: {outcome: "${{ steps.fixed.output.outcome }}", comment: "${{ steps.fixed.output.comment }}"}}}
`, `
name: it-node-quality
inputs: {type: object, properties: {topic: {type: string}}}
steps:
  - {id: summary, uses: agent, with: {prompt: "Summarise ${{ inputs.topic }}"}, output_schema: {type: object, properties: {score: {type: number}}}}
  - {id: quality, gate: {type: quality, source: summary, threshold: 80}}
  - {id: done, finish: {output: {passed: "${{ steps.quality.output.passed }}"}}}
`, `
name: it-node-sleep
steps:
  - {id: nap, sleep: 1s}
  - {id: after, uses: shell, with: {command: echo up}}
`, `
name: it-node-send
inputs: {type: object, properties: {target: {type: string}, key: {type: string}, box: {type: string}}}
steps:
  - {id: poke, send: {run: "${{ inputs.target }}", signal: go, key: "${{ inputs.key }}", payload: {n: 7}}}
  - {id: post, send: {mailbox: it-box, signal: note, key: "${{ inputs.box }}", payload: {text: "hello ${{ inputs.box }}"}}}
`, `
name: it-node-reader
inputs: {type: object, properties: {key: {type: string}}}
steps:
  - {id: wait, gate: {type: signal, signal: note, key: "${{ inputs.key }}"}}
  - {id: done, finish: {output: {text: "${{ steps.wait.output.text }}"}}}
`, `
name: it-node-finish
inputs: {type: object, properties: {how: {type: string}}}
outputs: {type: object, properties: {how: {type: string}}}
steps:
  - {id: fail, if: "inputs.how == 'failed'", finish: {status: failed, message: "gave up: ${{ inputs.how }}"}}
  - {id: cancel, if: "inputs.how == 'cancelled'", finish: {status: cancelled, message: not needed}}
  - {id: done, finish: {status: completed, output: {how: "${{ inputs.how }}"}}}
  - {id: never, uses: shell, with: {command: echo never}}
`}

// recordOf is the first step record named name.
func recordOf(t *testing.T, d *runs.Description, name string) runs.Step {
	t.Helper()
	rs := stepRecords(d, name)
	require.NotEmpty(t, rs, "no step %s", name)
	return rs[0]
}

// maxOverlap is how many of recs ran at the same time at most.
func maxOverlap(recs []runs.Step) int {
	most := 0
	for _, a := range recs {
		n := 0
		for _, b := range recs {
			if b.EndedAt != nil && a.EndedAt != nil && !b.StartedAt.After(a.StartedAt) && b.EndedAt.After(a.StartedAt) {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

func TestFlowdefNodes(t *testing.T) {
	t.Parallel()
	srv := startRecorder(t)
	c, host := serveDefs(t, "flowdef-nodes", nodeDefs, flow.WorkerOptions{})
	absent := func(t *testing.T, d *runs.Description, names ...string) {
		for _, n := range names {
			assert.Empty(t, stepRecords(d, n), "step %s should not run", n)
		}
	}
	vote := func(kind approval.VoteKind, by string) func(*testing.T, *flowclient.Client, string) {
		return func(t *testing.T, c *flowclient.Client, run string) {
			ctx := ctxT(t, time.Minute)
			eventually(t, c, run, "waits for the approval", waitingFor("approval:ok"))
			_, err := c.Vote(ctx, run, approval.Vote{Gate: "ok", Kind: approval.Approve, By: "mallory"})
			assert.Error(t, err, "mallory is not in group:ops")
			_, err = c.Vote(ctx, run, approval.Vote{Gate: "ok", Kind: kind, By: by, Comment: "decided"})
			require.NoError(t, err)
		}
	}
	var sendIn struct{ Target, Box string } // what it-node-send was started with
	runDefCases(t, c, []defCase{
		{name: "it-node-shell", output: `{"calc": "42 by shell in /tmp", "n": 5}`,
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				r := recordOf(t, d, "calc")
				assert.Equal(t, runs.KindShell, r.Kind)
				require.NotNil(t, r.ExitCode)
				assert.Equal(t, 0, *r.ExitCode)
			}},
		{name: "it-node-http", input: inputOf(map[string]any{"url": srv.URL}), output: `{"ok": true}`,
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				assert.Contains(t, srv.got(), map[string]any{"text": "hi 2"})
				r := recordOf(t, d, "post")
				assert.Equal(t, runs.KindHTTP, r.Kind)
				assert.Equal(t, 200, r.HTTPStatus)
			}},
		{name: "it-node-agent", output: `{"sev": "high"}`,
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				r := recordOf(t, d, "triage")
				assert.Equal(t, runs.KindAgent, r.Kind)
				require.NotNil(t, r.Tokens)
				assert.EqualValues(t, 1000, r.Tokens.Input)
				assert.True(t, r.CostUSD.IsPositive())
			}},
		{name: "it-node-action", output: `{"post": {"posted": "LGTM"}, "page": {"handled": "open-pager"}}`,
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				assert.Equal(t, runs.KindActivity, recordOf(t, d, "post").Kind)
				assert.Contains(t, host.calls(), activities.ActionCall{Name: "open-pager", With: map[string]any{"who": "oncall"}})
				for _, call := range host.calls() {
					assert.NotEqual(t, "post-comment", call.Name, "a registered action does not go to the fallback")
				}
			}},
		{name: "it-node-set", output: `{"n": 42, "label": "n was 1", "tags": ["a", "b"]}`},
		{name: "check-pass", flow: "it-node-check", input: inputOf(map[string]any{"n": 3}), output: `{"n": 3}`},
		{name: "check-fail", flow: "it-node-check", input: inputOf(map[string]any{"n": -2}), status: runs.StatusFailed,
			errs: []string{"node positive (check): n must be positive, got -2"}},
		{name: "branch-big-high", flow: "it-node-branch", input: inputOf(map[string]any{"n": 20, "sev": "high"}),
			output: `{"path": "big", "who": "page"}`,
			check:  func(t *testing.T, _ *flowclient.Client, d *runs.Description) { absent(t, d, "small", "ticket", "log") }},
		{name: "branch-small-medium", flow: "it-node-branch", input: inputOf(map[string]any{"n": 3, "sev": "medium"}),
			output: `{"path": "small", "who": "ticket"}`,
			check:  func(t *testing.T, _ *flowclient.Client, d *runs.Description) { absent(t, d, "big", "page", "log") }},
		{name: "branch-default", flow: "it-node-branch", input: inputOf(map[string]any{"n": 3, "sev": "low"}),
			output: `{"path": "small", "who": "log"}`},
		{name: "it-node-loops", input: inputOf(map[string]any{"files": []string{"a", "b"}}),
			output: `{"i": 3, "j": 1, "seen": "0:a;1:b;"}`,
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				assert.Len(t, stepRecords(d, "echo"), 2, "one shell step per element")
			}},
		{name: "it-node-loop-max", status: runs.StatusFailed, errs: []string{"max_iterations 3 reached"},
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				assert.Len(t, stepRecords(d, "tick"), 3)
			}},
		{name: "it-node-parallel", output: `{"fan": {"left": "left", "right": "right"}, "some": {"ok": "ok", "bad": null}}`,
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				var branches []string
				for _, s := range d.State.Steps {
					if s.Kind == runs.KindShell {
						branches = append(branches, s.Branch+"/"+s.Name+":"+string(s.Status))
					}
				}
				assert.ElementsMatch(t, []string{"fan/left/left:completed", "fan/right/right:completed",
					"some/ok/ok:completed", "some/bad/bad:failed"}, branches)
			}},
		{name: "it-node-min-success", status: runs.StatusFailed, errs: []string{"bad"}},
		{name: "it-node-fail-fast", status: runs.StatusFailed, errs: []string{"bad"},
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				slow := recordOf(t, d, "slow")
				assert.NotEqual(t, runs.StepCompleted, slow.Status)
				assert.Less(t, d.CloseTime.Sub(d.StartTime), 20*time.Second, "the failure cancels the slow branch")
			}},
		{name: "it-node-foreach", input: inputOf(map[string]any{"files": []string{"a.go", "b.go", "a.go", "b.go"}}),
			output: `{"all": ["fine-0", "bad-1", "fine-2", "bad-3"]}`,
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				shouts := stepRecords(d, "shout")
				require.Len(t, shouts, 4)
				assert.LessOrEqual(t, maxOverlap(shouts), 2, "max_parallel 2")
				var branches []string
				for _, s := range shouts {
					branches = append(branches, s.Branch)
				}
				assert.ElementsMatch(t, []string{"reviews/1", "reviews/2", "reviews/3", "reviews/4"}, branches)
			}},
		{name: "it-node-foreach-deps", status: runs.StatusWarning,
			input: inputOf(map[string]any{"jobs": []any{
				map[string]any{"id": "deploy", "depends_on": []string{"build", "test"}},
				map[string]any{"id": "test", "depends_on": []string{"build"}},
				map[string]any{"id": "build"},
				map[string]any{"id": "lint"},
				map[string]any{"id": "docs", "depends_on": []string{"lint"}},
			}}),
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				at := map[string]runs.Step{}
				for _, s := range stepRecords(d, "job") {
					at[s.Branch] = s
				}
				require.Contains(t, at, "jobs/deploy")
				require.NotNil(t, at["jobs/build"].EndedAt)
				require.NotNil(t, at["jobs/test"].EndedAt)
				assert.False(t, at["jobs/test"].StartedAt.Before(*at["jobs/build"].EndedAt), "test starts after build ended")
				assert.False(t, at["jobs/deploy"].StartedAt.Before(*at["jobs/test"].EndedAt), "deploy starts after test ended")
				assert.Equal(t, runs.StepCompleted, at["jobs/deploy"].Status)
				assert.Equal(t, runs.StepFailed, at["jobs/lint"].Status)
				assert.NotContains(t, at, "jobs/docs", "docs depends on the failed lint: never started")
				assert.Equal(t, runs.StepSkipped, recordOf(t, d, "docs").Status)
				var parts []string
				for _, s := range stepRecords(d, "part") {
					if s.Branch == "jobs/deploy" {
						parts = append(parts, strings.TrimSpace(s.Output))
					}
				}
				assert.Equal(t, []string{"deploy-a", "deploy-b"}, parts, "the loop inside the item sees the item")
			}},
		{name: "it-node-foreach-continue", status: runs.StatusWarning, output: `{"all": ["1", null, "3"]}`},
		{name: "it-node-foreach-stop", status: runs.StatusFailed, errs: []string{"exit code 1"},
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) { absent(t, d, "done") }},
		{name: "it-node-foreach-provider", output: `{"all": ["T-1:ticket:ops:a.go:core", "T-2:ticket:ops:b.go:core"]}`,
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				assert.Equal(t, runs.StepCompleted, recordOf(t, d, "each-items").Status)
				var branches []string
				for _, s := range stepRecords(d, "show") {
					branches = append(branches, s.Branch)
				}
				assert.Equal(t, []string{"each/T-1", "each/T-2"}, branches)
			}},
		{name: "it-node-foreach-call",
			output: `{"all": [{"doubled": 2}, {"doubled": 4}, {"doubled": 6}], "greet": [{"said": "hi ada"}, {"said": "hi bob"}]}`,
			check: func(t *testing.T, c *flowclient.Client, d *runs.Description) {
				children := 0
				for _, s := range d.State.Steps {
					if s.Kind == runs.KindChild {
						children++
						require.NotNil(t, s.Child)
						cd, err := c.Describe(ctxT(t, 10*time.Second), s.Child.ID)
						require.NoError(t, err)
						assert.Equal(t, runs.StatusCompleted, cd.Status)
						assert.Equal(t, d.ID, cd.State.ParentID)
					}
				}
				assert.Equal(t, 5, children, "one child run per item")
			}},
		{name: "it-node-call", output: `{"greet": "hi ada", "twice": 42}`,
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				for name, wf := range map[string]string{"greet": "it-node-child", "twice": "it-go-double"} {
					r := recordOf(t, d, name)
					assert.Equal(t, runs.KindChild, r.Kind)
					require.NotNil(t, r.Child)
					assert.Equal(t, wf, r.Child.Workflow)
				}
			}},
		{name: "it-node-detached",
			act: func(t *testing.T, c *flowclient.Client, run string) {
				ended := false
				for deadline := time.Now().Add(15 * time.Second); !ended && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
					d, err := c.Describe(ctxT(t, 10*time.Second), run)
					ended = err == nil && d.Status.Terminal()
				}
				require.True(t, ended, "the parent does not wait for its detached child")
			},
			check: func(t *testing.T, c *flowclient.Client, d *runs.Description) {
				ctx := ctxT(t, time.Minute)
				var out struct{ Child string }
				require.NoError(t, json.Unmarshal(d.Result, &out))
				require.NotEmpty(t, out.Child, "the node's output names the child run")
				cd := eventually(t, c, out.Child, "the detached child outlives its parent, waiting", waitingFor("signal:go/"+d.ID))
				assert.Equal(t, "it-node-waiter", cd.Workflow)
				assert.Equal(t, d.ID, cd.State.ParentID)
				_, err := c.Signal(ctx, out.Child, signals.Envelope{Name: "go", Key: d.ID, Payload: json.RawMessage(`{"n": 1}`)})
				require.NoError(t, err)
				cw, err := c.Wait(ctx, out.Child)
				require.NoError(t, err)
				assert.Equal(t, runs.StatusCompleted, cw.Status, cw.Error)
				assert.JSONEq(t, `{"got": 1}`, string(cw.Result))
				replayDef(t, d.ID, defSource(t, nodeDefs, "it-node-detached"))
			}},
		{name: "approval-approve", flow: "it-node-approval", input: inputOf(map[string]any{"pr": 7}),
			act: vote(approval.Approve, "bob"), output: `{"outcome": "approved"}`,
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				require.Len(t, d.State.Gates, 1)
				assert.Equal(t, "Merge PR 7?", d.State.Gates[0].Request.Message)
				assert.Equal(t, runs.KindApproval, recordOf(t, d, "ok").Kind)
			}},
		{name: "approval-reject", flow: "it-node-approval", input: inputOf(map[string]any{"pr": 8}),
			act: vote(approval.Reject, "alice"), status: runs.StatusRejected,
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) { absent(t, d, "done") }},
		{name: "it-node-input", output: `{"n": 42}`,
			act: func(t *testing.T, c *flowclient.Client, run string) {
				ctx := ctxT(t, time.Minute)
				eventually(t, c, run, "asks for input", waitingFor("input:answer"))
				var refused *flowclient.RefusedError
				_, err := c.Answer(ctx, flowclient.AnswerRequest{Run: run, Name: "answer", Data: json.RawMessage(`{"n": "many"}`), By: "alice"})
				assert.True(t, errors.As(err, &refused), "an answer the schema refuses: %v", err)
				_, err = c.Answer(ctx, flowclient.AnswerRequest{Run: run, Name: "answer", Data: json.RawMessage(`{"n": 1}`), By: "bob"})
				assert.True(t, errors.As(err, &refused), "bob is not assigned: %v", err)
				_, err = c.Answer(ctx, flowclient.AnswerRequest{Run: run, Name: "answer", Data: json.RawMessage(`{"n": 21}`), By: "alice"})
				require.NoError(t, err)
			}},
		{name: "it-node-signal", output: `{"by": "carol"}`,
			act: func(t *testing.T, c *flowclient.Client, run string) {
				ctx := ctxT(t, time.Minute)
				eventually(t, c, run, "waits for the keyed ack", waitingFor("signal:ack/"+run))
				_, err := c.Signal(ctx, run, signals.Envelope{Name: "ack", Key: "other", Payload: json.RawMessage(`{"by": "mallory"}`)})
				require.NoError(t, err)
				_, err = c.Signal(ctx, run, signals.Envelope{Name: "ack", Key: run, Payload: json.RawMessage(`{"by": "carol"}`)})
				require.NoError(t, err)
			}},
		{name: "poll-approved", flow: "it-node-poll", input: inputOf(map[string]any{"ticket": "T-9"}),
			output: `{"outcome": "approved", "comment": "ticket T-9 closed after 2 polls"}`,
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				assert.Equal(t, runs.KindGate, recordOf(t, d, "fixed").Kind)
			}},
		{name: "poll-rejected", flow: "it-node-poll", input: inputOf(map[string]any{"ticket": "WONTFIX"}),
			status: runs.StatusRejected, errs: []string{"will not be fixed"}},
		{name: "quality-pass", flow: "it-node-quality", input: inputOf(map[string]any{"topic": "strong"}), output: `{"passed": true}`,
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				assert.Equal(t, runs.KindQuality, recordOf(t, d, "quality").Kind)
			}},
		{name: "quality-fail", flow: "it-node-quality", input: inputOf(map[string]any{"topic": "weak"}),
			status: runs.StatusFailed, errs: []string{"quality"},
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) { absent(t, d, "done") }},
		{name: "it-node-sleep",
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				nap, after := recordOf(t, d, "nap"), recordOf(t, d, "after")
				assert.Equal(t, runs.KindSleep, nap.Kind)
				assert.GreaterOrEqual(t, after.StartedAt.Sub(nap.StartedAt), time.Second)
			}},
		{name: "it-node-send",
			input: func(t *testing.T, c *flowclient.Client) any {
				key := uniqueKey("poke")
				target, err := c.Start(ctxT(t, time.Minute), "it-node-waiter", map[string]any{"key": key}, core.StartOptions{})
				require.NoError(t, err)
				sendIn.Target, sendIn.Box = target.ID, uniqueKey("box")
				return map[string]any{"target": target.ID, "key": key, "box": sendIn.Box}
			},
			check: func(t *testing.T, c *flowclient.Client, d *runs.Description) {
				ctx := ctxT(t, time.Minute)
				in := sendIn
				td, err := c.Wait(ctx, in.Target)
				require.NoError(t, err)
				assert.Equal(t, runs.StatusCompleted, td.Status, td.Error)
				assert.JSONEq(t, `{"got": 7}`, string(td.Result), "the target run got the payload")
				assert.Equal(t, runs.KindSend, recordOf(t, d, "go").Kind)
				// The mailbox keeps the message for a run that starts waiting later.
				reader, err := c.Start(ctx, "it-node-reader", map[string]any{"key": in.Box}, core.StartOptions{})
				require.NoError(t, err)
				rd, err := c.Wait(ctx, reader.ID)
				require.NoError(t, err)
				require.Equal(t, runs.StatusCompleted, rd.Status, rd.Error)
				assert.JSONEq(t, `{"text": "hello `+in.Box+`"}`, string(rd.Result))
			}},
		{name: "finish-completed", flow: "it-node-finish", input: inputOf(map[string]any{"how": "completed"}), output: `{"how": "completed"}`,
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) { absent(t, d, "never") }},
		{name: "finish-failed", flow: "it-node-finish", input: inputOf(map[string]any{"how": "failed"}),
			status: runs.StatusFailed, errs: []string{"gave up: failed"}},
		{name: "finish-cancelled", flow: "it-node-finish", input: inputOf(map[string]any{"how": "cancelled"}),
			status: runs.StatusCancelled,
			check:  func(t *testing.T, _ *flowclient.Client, d *runs.Description) { absent(t, d, "done", "never") }},
	})
}
