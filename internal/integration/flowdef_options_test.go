package integration

// Declarative flows: the options every node takes and the envelope's, on the embedded
// server (see the coverage list of flowdef_nodes_test.go). Coverage:
//
//	id                                    every test: step records and steps.<id> are named by it
//	if (skipped, run)                     TestFlowdefOptions/if-*
//	retry (retried, max_attempts 1)       TestFlowdefOptions/retry-*
//	timeout, on_timeout continue          TestFlowdefOptions/it-opt-timeout (shell), it-opt-http-timeout,
//	                                        it-opt-agent-timeout
//	on_timeout goto                       TestFlowdefOptions/it-opt-on-timeout-goto (approval),
//	                                        it-opt-signal-timeout (keyed signal, as examples/flows/incident)
//	on_error continue, goto               TestFlowdefOptions/it-opt-on-error
//	on_error fail                         TestFlowdefOptions/it-opt-on-error-fail
//	cost_limit                            TestFlowdefOptions/cost-limit-*
//	output_schema (non-agent step)        TestFlowdefOptions/output-schema-*
//	vars                                  TestFlowdefOptions/it-env-vars
//	limits.wall_time, steps, tokens       TestFlowdefOptions/it-env-wall-time, -steps, -tokens
//	limits.max_cost_usd                   TestFlowdefOptions/it-env-max-cost
//	limits.budget_policy pause            TestFlowdefOptions/it-env-budget-pause
//	limits.budget_pause                   TestFlowdefOptions/it-env-budget-pause-ends
//	limits.depth, fan_out                 TestFlowdefOptions/it-env-depth, -fan-out
//	priority, labels, worker_tags         TestFlowdefOptions/it-env-start-defaults
//	schedules                             TestFlowdefOptions/it-env-schedule
//	once                                  TestFlowdefOptions/it-env-once
//	on_error[], always[] (failed, ok,     TestFlowdefOptions/sections-*
//	  cancelled)
//	concurrency, triggers                 TestFlowdefEnvelopeMaxRunsRefuse, TestFlowdefEnvelopeTrigger

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/protocol"
)

const optionsQueue = "flowdef-options"

var optionDefs = []string{`
name: it-opt-if
inputs: {type: object, properties: {go: {type: boolean}}}
steps:
  - {id: maybe, if: inputs.go, uses: shell, with: {command: echo ran}}
  - {id: done, finish: {output: {status: "${{ steps.maybe.status }}"}}}
`, `
name: it-opt-retry
inputs: {type: object, properties: {marker: {type: string}, attempts: {type: integer}}}
steps:
  - id: flaky
    uses: shell
    with: {command: "if [ -f '${{ inputs.marker }}' ]; then echo second; else touch '${{ inputs.marker }}'; exit 1; fi"}
    retry: {max_attempts: 3, backoff: 100ms}
  - {id: done, finish: {output: {said: "${{ steps.flaky.output }}"}}}
`, `
name: it-opt-no-retry
inputs: {type: object, properties: {marker: {type: string}}}
steps:
  - id: flaky
    uses: shell
    with: {command: "if [ -f '${{ inputs.marker }}' ]; then echo second; else touch '${{ inputs.marker }}'; exit 1; fi"}
    retry: {max_attempts: 1}
`, `
name: it-opt-timeout
steps:
  - {id: slow, uses: shell, with: {command: "sleep 10"}, timeout: 1s, retry: {max_attempts: 1}, on_timeout: continue}
  - {id: done, finish: {output: {slow: "${{ steps.slow.status }}"}}}
`, `
name: it-opt-http-timeout
inputs: {type: object, properties: {url: {type: string}}}
steps:
  - {id: call, uses: http, with: {url: "${{ inputs.url }}"}, timeout: 1s, retry: {max_attempts: 1}, on_timeout: goto slow}
  - {id: done, finish: {output: {path: answered}}}
  - {id: slow, finish: {output: {path: slow, call: "${{ steps.call.status }}"}}}
`, `
name: it-opt-agent-timeout
steps:
  - id: ask
    uses: agent
    with: {prompt: "Anyone there?", provider: stalled, model: scripted}
    timeout: 2s
    retry: {max_attempts: 1}
    on_timeout: continue
  - {id: done, finish: {output: {ask: "${{ steps.ask.status }}"}}}
`, `
name: it-opt-signal-timeout
steps:
  - {id: ack, gate: {type: signal, signal: ack, key: "${{ run.id }}"}, timeout: 1s, on_timeout: goto escalate}
  - {id: done, finish: {output: {path: acked}}}
  - {id: escalate, finish: {output: {path: escalated, ack: "${{ steps.ack.status }}"}}}
`, `
name: it-opt-on-timeout-goto
steps:
  - {id: wait, gate: {type: approval, approvers: [alice]}, timeout: 1s, on_timeout: goto late}
  - {id: done, finish: {output: {path: approved}}}
  - {id: late, finish: {output: {path: late, status: "${{ steps.wait.status }}"}}}
`, `
name: it-opt-on-error
steps:
  - {id: flaky, uses: shell, with: {command: "exit 4"}, retry: {max_attempts: 1}, on_error: continue}
  - {id: triage, uses: shell, with: {command: "exit 5"}, retry: {max_attempts: 1}, on_error: goto escalate}
  - {id: done, finish: {output: {path: normal}}}
  - id: escalate
    finish: {output: {path: escalated, flaky: "${{ steps.flaky.status }}", err: "${{ steps.triage.error != '' }}"}}
`, `
name: it-opt-on-error-fail
steps:
  - {id: boom, uses: shell, with: {command: "exit 6"}, retry: {max_attempts: 1}, on_error: fail}
  - {id: never, uses: shell, with: {command: echo never}}
`, `
name: it-opt-cost-limit
steps:
  - {id: chat, uses: agent, with: {prompt: "Chat a bit"}, cost_limit: "0.50"}
  - {id: done, finish: {output: {said: "${{ steps.chat.output }}"}}}
`, `
name: it-opt-output-schema
inputs: {type: object, properties: {n: {type: string}}}
steps:
  - id: measure
    uses: shell
    with: {command: "echo '{\"n\": ${{ inputs.n }}}'"}
    output_schema: {type: object, required: [n], properties: {n: {type: integer}}}
  - {id: done, finish: {output: {n: "${{ steps.measure.output.n }}"}}}
`, `
name: it-env-vars
vars: {greeting: hello, n: 2, list: [a, b]}
steps:
  - {id: say, uses: shell, with: {command: "echo ${{ vars.greeting }} ${{ vars.n * 2 }} ${{ size(vars.list) }}"}}
  - {id: keep, set: {said: "${{ steps.say.output }}"}}
`, `
name: it-env-wall-time
limits: {wall_time: 2s}
steps:
  - {id: slow, uses: shell, with: {command: "sleep 30"}}
`, `
name: it-env-steps
limits: {steps: 2}
steps:
  - {id: one, uses: shell, with: {command: "echo 1"}}
  - {id: two, uses: shell, with: {command: "echo 2"}}
  - {id: three, uses: shell, with: {command: "echo 3"}}
`, `
name: it-env-tokens
limits: {tokens: 3000}
steps:
  - {id: first, uses: agent, with: {prompt: "Chat one"}}
  - {id: second, uses: agent, with: {prompt: "Chat two"}}
`, `
name: it-env-max-cost
limits: {max_cost_usd: "0.001"}
steps:
  - {id: first, uses: agent, with: {prompt: "Chat one"}}
  - {id: second, uses: agent, with: {prompt: "Chat two"}}
`, `
name: it-env-budget-pause
limits: {max_cost_usd: "0.001", budget_policy: pause}
steps:
  - {id: first, uses: agent, with: {prompt: "Chat one"}}
  - {id: second, uses: agent, with: {prompt: "Chat two"}}
  - {id: done, finish: {output: {said: "${{ steps.second.output }}"}}}
`, `
name: it-env-budget-pause-ends
limits: {max_cost_usd: "0.001", budget_policy: pause, budget_pause: 2s}
steps:
  - {id: first, uses: agent, with: {prompt: "Chat one"}}
  - {id: second, uses: agent, with: {prompt: "Chat two"}}
`, `
name: it-env-depth
limits: {depth: 1}
steps:
  - {id: mid, call: it-env-depth-mid}
`, `
name: it-env-depth-mid
steps:
  - {id: leaf, call: it-env-leaf}
`, `
name: it-env-leaf
steps:
  - {id: hi, uses: shell, with: {command: echo leaf}}
`, `
name: it-env-fan-out
limits: {fan_out: 1}
steps:
  # Two items, known only at run time (two static branches would be refused at
  # validation, over limits.fan_out): the guard refuses them.
  - id: fan
    foreach: {over: "[1, 2]", call: it-env-leaf}
`, `
name: it-env-start-defaults
priority: 2
labels: {team: it-opt}
worker_tags: [it-opt]
steps:
  - {id: hi, uses: shell, with: {command: echo tagged}}
`, `
name: it-env-schedule
inputs: {type: object, properties: {who: {type: string}}}
schedules:
  - {cron: "0 3 * * *", timezone: Europe/Paris, input: {who: nightly}}
steps:
  - {id: done, finish: {output: {who: "${{ inputs.who }}"}}}
`, `
name: it-env-once
once: true
steps:
  - {id: done, finish: {output: {once: true}}}
`, `
name: it-env-sections
inputs: {type: object, properties: {fail: {type: boolean}}}
steps:
  - {id: body, uses: shell, with: {command: "test '${{ inputs.fail }}' != true"}, retry: {max_attempts: 1}}
on_error:
  - {id: report, uses: shell, with: {command: "echo failed: ${{ steps.body.status }}"}}
  - {id: report2, uses: shell, with: {command: "echo second report"}}
always:
  - {id: cleanup, uses: shell, with: {command: "echo tidy"}}
`, `
name: it-env-cancelled
steps:
  - {id: wait, gate: {type: signal, signal: never}}
on_error:
  - {id: report, uses: shell, with: {command: echo not after a cancel}}
always:
  - {id: cleanup, uses: shell, with: {command: "echo tidy ${{ steps.wait.status }}"}}
`}

func TestFlowdefOptions(t *testing.T) {
	t.Parallel()
	c, _ := serveDefs(t, optionsQueue, optionDefs, flow.WorkerOptions{Tags: []string{"it-opt"}})
	dir := t.TempDir()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	t.Cleanup(slow.Close)
	usd := func(s string) *decimal.Decimal { d := decimal.RequireFromString(s); return &d }
	names := func(d *runs.Description) []string {
		var out []string
		for _, s := range d.State.Steps {
			out = append(out, s.Name)
		}
		return out
	}
	runDefCases(t, c, []defCase{
		{name: "if-skipped", flow: "it-opt-if", input: inputOf(map[string]any{"go": false}), output: `{"status": "skipped"}`,
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				assert.Equal(t, runs.StepSkipped, recordOf(t, d, "maybe").Status)
			}},
		{name: "if-run", flow: "it-opt-if", input: inputOf(map[string]any{"go": true}), output: `{"status": "succeeded"}`},
		{name: "retry-retried", flow: "it-opt-retry", input: inputOf(map[string]any{"marker": filepath.Join(dir, "retry")}),
			output: `{"said": "second"}`,
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				assert.Equal(t, 2, recordOf(t, d, "flaky").Attempt)
			}},
		{name: "retry-once", flow: "it-opt-no-retry", input: inputOf(map[string]any{"marker": filepath.Join(dir, "once")}),
			status: runs.StatusFailed, errs: []string{"exit code 1"},
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				assert.Equal(t, 1, recordOf(t, d, "flaky").Attempt)
			}},
		{name: "it-opt-timeout", status: runs.StatusWarning, output: `{"slow": "timed_out"}`,
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				assert.Equal(t, runs.StepTimedOut, recordOf(t, d, "slow").Status)
				assert.Less(t, d.CloseTime.Sub(d.StartTime), 8*time.Second, "the 1s timeout ends the 10s sleep")
			}},
		{name: "it-opt-http-timeout", input: inputOf(map[string]any{"url": slow.URL}), status: runs.StatusWarning,
			output: `{"path": "slow", "call": "timed_out"}`,
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				assert.Equal(t, runs.StepTimedOut, recordOf(t, d, "call").Status)
				assert.Less(t, d.CloseTime.Sub(d.StartTime), 8*time.Second)
			}},
		{name: "it-opt-agent-timeout", status: runs.StatusWarning, output: `{"ask": "timed_out"}`,
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				assert.Less(t, d.CloseTime.Sub(d.StartTime), 15*time.Second, "the 2s timeout ends the agent call")
			}},
		{name: "it-opt-signal-timeout", output: `{"path": "escalated", "ack": "timed_out"}`},
		// A gate's deadline is its decision (timed_out), not a failure: the run completes.
		{name: "it-opt-on-timeout-goto", output: `{"path": "late", "status": "timed_out"}`},
		{name: "it-opt-on-error", status: runs.StatusWarning, output: `{"path": "escalated", "flaky": "failed", "err": true}`,
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				assert.True(t, recordOf(t, d, "flaky").AllowedFailure)
				assert.Equal(t, 2, d.State.AllowedFailures)
				assert.Empty(t, stepRecords(d, "done"))
			}},
		{name: "it-opt-on-error-fail", status: runs.StatusFailed, errs: []string{"node boom (step)", "exit code 6"},
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				assert.Empty(t, stepRecords(d, "never"))
			}},
		{name: "cost-limit-over-cap", flow: "it-opt-cost-limit", opts: core.StartOptions{MaxCostUSD: usd("0.20")},
			status: runs.StatusBudgetExceeded,
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				assert.True(t, d.State.CostUSD.IsZero(), "the step reserving 0.50 is not dispatched under a 0.20 cap")
			}},
		{name: "cost-limit-under-cap", flow: "it-opt-cost-limit", opts: core.StartOptions{MaxCostUSD: usd("5")}, output: `{"said": "hello"}`},
		{name: "output-schema-ok", flow: "it-opt-output-schema", input: inputOf(map[string]any{"n": "3"}), output: `{"n": 3}`},
		{name: "output-schema-refused", flow: "it-opt-output-schema", input: inputOf(map[string]any{"n": `"three"`}),
			status: runs.StatusFailed, errs: []string{"node measure (step)"},
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) { assert.Empty(t, stepRecords(d, "done")) }},
		{name: "it-env-vars", output: `{"greeting": "hello", "n": 2, "list": ["a", "b"], "said": "hello 4 2"}`},
		{name: "it-env-wall-time", status: runs.StatusFailed, errs: []string{"wall"},
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				assert.Less(t, d.CloseTime.Sub(d.StartTime), 20*time.Second)
			}},
		{name: "it-env-steps", status: runs.StatusFailed, errs: []string{"steps 3 exceeds the limit of 2"},
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				assert.NotEqual(t, runs.StepCompleted, stepStatuses(d)["three"])
			}},
		{name: "it-env-tokens", status: runs.StatusFailed, errs: []string{"token"},
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				assert.NotEqual(t, runs.StepCompleted, stepStatuses(d)["second"])
			}},
		{name: "it-env-max-cost", status: runs.StatusBudgetExceeded,
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				assert.NotEqual(t, runs.StepCompleted, stepStatuses(d)["second"])
			}},
		{name: "it-env-budget-pause", output: `{"said": "hello"}`,
			act: func(t *testing.T, c *flowclient.Client, run string) {
				eventually(t, c, run, "pauses on its budget", func(d *runs.Description) bool { return d.Status == runs.StatusBudgetPaused })
				_, err := c.RaiseBudget(ctxT(t, time.Minute), flowclient.BudgetRequest{Run: run, To: decimal.RequireFromString("5"), By: "alice"})
				require.NoError(t, err)
			}},
		{name: "it-env-budget-pause-ends", status: runs.StatusBudgetExceeded,
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				require.NotNil(t, d.State.EndedAt)
				assert.GreaterOrEqual(t, d.State.EndedAt.Sub(d.State.StartedAt), 2*time.Second, "it waited budget_pause for a raise")
				assert.Less(t, d.State.EndedAt.Sub(d.State.StartedAt), time.Minute, "then ended, not after the default 24h")
			}},
		{name: "it-env-depth", status: runs.StatusFailed, errs: []string{"depth"}},
		{name: "it-env-fan-out", status: runs.StatusFailed, errs: []string{"fan"}},
		{name: "it-env-start-defaults",
			check: func(t *testing.T, c *flowclient.Client, d *runs.Description) {
				cat, err := c.Workflows(ctxT(t, time.Minute))
				require.NoError(t, err)
				info, ok := cat.Lookup("it-env-start-defaults")
				require.True(t, ok)
				assert.Equal(t, 2, info.Priority)
				assert.Equal(t, map[string]string{"team": "it-opt"}, info.Labels)
				assert.Equal(t, []string{"it-opt"}, info.WorkerTags)
				prio, labels, _ := searchAttrs(t, d.ID)
				assert.EqualValues(t, 2, prio)
				assert.Contains(t, labels, "team=it-opt")
				tagged, err := protocol.TaggedQueues(optionsQueue, []string{"it-opt"})
				require.NoError(t, err)
				assert.Contains(t, tagged, d.TaskQueue, "the run went to the tagged queue")
				assert.NotEqual(t, optionsQueue, d.TaskQueue)
			}},
		{name: "it-env-schedule", input: inputOf(map[string]any{"who": "manual"}), output: `{"who": "manual"}`,
			check: func(t *testing.T, c *flowclient.Client, d *runs.Description) {
				ctx := ctxT(t, time.Minute)
				id := protocol.ScheduleID("it-env-schedule", 0, optionsQueue)
				scheds, err := c.Schedules(ctx)
				require.NoError(t, err)
				var spec string
				for _, s := range scheds {
					if s.ID == id {
						spec = s.Spec
					}
				}
				assert.Contains(t, spec, "0 3 * * *")
				_, err = c.ControlSchedule(ctx, id, flowclient.TriggerSchedule, "test")
				require.NoError(t, err)
				var found []runs.Summary
				require.Eventually(t, func() bool {
					found, err = c.List(ctx, flowclient.ListOptions{Workflow: "it-env-schedule", CreatedBy: "schedule"})
					return err == nil && len(found) > 0
				}, 30*time.Second, 200*time.Millisecond, "the schedule starts a run")
				sd, err := c.Wait(ctx, found[0].ID)
				require.NoError(t, err)
				assert.Equal(t, runs.StatusCompleted, sd.Status, sd.Error)
				assert.JSONEq(t, `{"who": "nightly"}`, string(sd.Result), "with the schedule's input")
			}},
		{name: "it-env-once",
			check: func(t *testing.T, c *flowclient.Client, _ *runs.Description) {
				od, err := c.Wait(ctxT(t, time.Minute), protocol.OnceID("it-env-once", optionsQueue))
				require.NoError(t, err, "the worker started the once run")
				assert.Equal(t, runs.StatusCompleted, od.Status, od.Error)
				assert.JSONEq(t, `{"once": true}`, string(od.Result))
			}},
		{name: "sections-failed", flow: "it-env-sections", input: inputOf(map[string]any{"fail": true}), status: runs.StatusFailed,
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				assert.Equal(t, []string{"body", "report", "report2", "cleanup"}, names(d))
				assert.Contains(t, recordOf(t, d, "report").Output, "failed: failed")
			}},
		{name: "sections-cancelled", flow: "it-env-cancelled", status: runs.StatusCancelled,
			act: func(t *testing.T, c *flowclient.Client, run string) {
				eventually(t, c, run, "waits", waitingFor("signal:never"))
				require.NoError(t, c.Cancel(ctxT(t, time.Minute), flowclient.CancelRequest{Run: run, Reason: "test", By: "alice"}))
			},
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				cleanup := recordOf(t, d, "cleanup")
				assert.Equal(t, runs.StepCompleted, cleanup.Status)
				assert.Contains(t, cleanup.Output, "tidy cancelled")
				assert.Empty(t, stepRecords(d, "report"), "on_error does not run after a cancellation")
			}},
		{name: "sections-ok", flow: "it-env-sections", input: inputOf(map[string]any{"fail": false}),
			check: func(t *testing.T, _ *flowclient.Client, d *runs.Description) {
				assert.Equal(t, []string{"body", "cleanup"}, names(d))
			}},
	})
}
