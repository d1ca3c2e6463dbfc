package interp_test

import (
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flowdef/interp"
	"github.com/gateflow/gateflow/testsuite"
)

// info is the core.WorkflowInfo of the flow built from src.
func info(t *testing.T, src string) core.WorkflowInfo {
	t.Helper()
	return build(t, parse(t, src)).Info()
}

// buildErr is interp.Flow's error on src (which must fail).
func buildErr(t *testing.T, src string) string {
	t.Helper()
	_, err := interp.Flow(parse(t, src))
	require.Error(t, err)
	return err.Error()
}

const hello = `
steps:
  - {id: hello, uses: shell, with: {command: "echo hi"}}
`

func TestEnvelopeLimits(t *testing.T) {
	i := info(t, `
name: limits
limits: {wall_time: 1d2h, steps: 20, tokens: 1000, max_cost_usd: "2.50", budget_policy: pause, budget_pause: 90m, depth: 2, fan_out: 0}
`+hello)
	assert.Equal(t, runs.Guards{MaxChildDepth: 2, MaxFanOut: -1, MaxTokens: 1000, MaxWallTime: 26 * time.Hour, MaxSteps: 20}, i.Guards)
	assert.Equal(t, "2.5", i.MaxCostUSD)
	assert.Equal(t, budget.Pause, i.BudgetPolicy)
	assert.Equal(t, 90*time.Minute, i.BudgetPause)

	i = info(t, "name: nolimits\n"+hello)
	assert.Equal(t, runs.Guards{}, i.Guards, "no limits: the worker's and the default guards apply")
	assert.Empty(t, i.MaxCostUSD)
}

func TestEnvelopeConcurrency(t *testing.T) {
	i := info(t, "name: conc\nconcurrency: {on_overflow: refuse}\n"+hello)
	assert.Equal(t, 1, i.MaxRuns)
	assert.Equal(t, core.OverflowRefuse, i.OnOverflow)
	i = info(t, "name: conc\nconcurrency: {max_runs: 3}\n"+hello)
	assert.Equal(t, 3, i.MaxRuns)
	assert.Equal(t, core.OverflowQueue, i.OnOverflow)

	i = info(t, "name: conc\nconcurrency: {key: \"k-${{ inputs.repo }}\", on_overflow: replace}\n"+hello)
	assert.Equal(t, 1, i.MaxRuns)
	assert.Equal(t, core.OverflowReplace, i.OnOverflow)
	assert.Equal(t, "k-{repo}", i.MaxRunsKey, "the key as flow.MaxRunsPerKey takes it")
	assert.Contains(t, buildErr(t, "name: conc\nconcurrency: {key: \"k-${{ vars.repo }}\"}\n"+hello),
		`test.yaml:2:20: concurrency.key: "k-${{ vars.repo }}": only ${{ inputs.<field> }} references are allowed`)
	assert.Contains(t, buildErr(t, "name: conc\nconcurrency: {max_runs: 0}\n"+hello),
		"test.yaml:2:14: concurrency: max runs 0: want at least 1")
}

func TestEnvelopeStartDefaults(t *testing.T) {
	i := info(t, "name: defaults\npriority: 2\nlabels: {team: web}\nworker_tags: [linux, gpu]\n"+hello)
	assert.Equal(t, 2, i.Priority)
	assert.Equal(t, map[string]string{"team": "web"}, i.Labels)
	assert.Equal(t, []string{"gpu", "linux"}, i.WorkerTags)

	assert.Contains(t, buildErr(t, "name: defaults\npriority: 9\n"+hello),
		"test.yaml:2:11: priority, labels and worker_tags: start defaults: priority 9")
	assert.Contains(t, buildErr(t, "name: defaults\nworker_tags: [Linux]\n"+hello),
		`test.yaml:2:14: priority, labels and worker_tags: start defaults: tag "Linux"`)
}

func TestEnvelopeSchedules(t *testing.T) {
	i := info(t, `
name: sched
schedules:
  - {cron: "0 3 * * *", timezone: Europe/Paris, input: {files: [a]}}
  - {every: 1d}
`+hello)
	require.Len(t, i.Schedules, 2)
	assert.Equal(t, "CRON_TZ=Europe/Paris 0 3 * * *", i.Schedules[0].Spec)
	assert.JSONEq(t, `{"files": ["a"]}`, string(i.Schedules[0].Input))
	assert.Equal(t, "@every 24h0m0s", i.Schedules[1].Spec)
	assert.Empty(t, i.Schedules[1].Input)

	i = info(t, "name: sched\nschedules:\n  - {every: 1h}\n  - {id: nightly, cron: \"@daily\"}\n"+hello)
	require.Len(t, i.Schedules, 2)
	assert.Empty(t, i.Schedules[0].ID, "no id: named by its position")
	assert.Equal(t, "nightly", i.Schedules[1].ID)
	assert.Contains(t, buildErr(t, "name: sched\nschedules:\n  - {id: Nightly, cron: \"@daily\"}\n"+hello),
		`test.yaml:3:5: schedules[0]: schedule id "Nightly": want 1-63`)
	assert.Contains(t, buildErr(t, "name: sched\nschedules:\n  - {every: 1h, timezone: UTC}\n"+hello),
		"test.yaml:3:27: schedules[0].timezone applies to cron only")
	assert.Contains(t, buildErr(t, "name: sched\nschedules:\n  - {cron: \"61 * * * *\"}\n"+hello),
		"test.yaml:3:5: schedules[0]: schedule")
}

func TestEnvelopeTriggersAndOnce(t *testing.T) {
	i := info(t, `
name: trig
once: true
triggers:
  - {on: completed, flow: build}
  - {on: failed, flow: build}
  - {on: finished, flow: deploy}
  - {on: signal, signal: review-requested}
`+hello)
	assert.Equal(t, []core.TriggerInfo{
		{Flow: "build", When: []core.RunEnd{core.WhenCompleted, core.WhenFailed}},
		{Flow: "deploy", When: []core.RunEnd{core.WhenCompleted, core.WhenFailed}},
	}, i.Triggers)
	assert.Equal(t, []string{"review-requested"}, i.SignalStarts)
	require.NotNil(t, i.Once)
	assert.JSONEq(t, `{}`, string(i.Once.Input))

	assert.Contains(t, buildErr(t, "name: trig\ntriggers:\n  - {on: completed, flow: build, if: run.output.ok}\n"+hello),
		`test.yaml:3:38: if: expr: invalid expression "run.output.ok": 1:4: run has no field "output"`)
	assert.Contains(t, buildErr(t, "name: trig\ntriggers:\n  - {on: signal, signal: go, input: {a: 1}}\n"+hello),
		"test.yaml:3:37: triggers[0].input: a trigger on signal takes no input")
	assert.Contains(t, buildErr(t, "name: trig\ntriggers:\n  - {on: completed, flow: trig}\n"+hello),
		"test.yaml:3:5: trigger on trig: on run of trig: a flow cannot trigger itself")
	assert.Contains(t, buildErr(t, "name: once\nonce: true\ninputs: {type: object, required: [repo]}\n"+hello),
		"test.yaml:2:7: once: once input")
}

// limits.steps bounds the steps a run records, as flow.Guards.MaxSteps does.
func TestEnvelopeMaxSteps(t *testing.T) {
	r := run(t, `
name: steps
limits: {steps: 2}
steps:
  - {id: one, uses: shell, with: {command: "echo 1"}}
  - {id: two, uses: shell, with: {command: "echo 2"}}
  - {id: three, uses: shell, with: {command: "echo 3"}}
`, nil, nil)
	require.Error(t, r.Err)
	assert.Contains(t, r.Err.Error(), "test.yaml:6:5: node three (step): step three: guard: steps 3 exceeds the limit of 2 at step three")
	assert.NotEqual(t, runs.StepCompleted, r.StepStatuses()["three"])
	assert.Equal(t, runs.StatusFailed, r.Status())
	assert.Equal(t, runs.StepCompleted, r.StepStatuses()["two"])
}

// limits.max_cost_usd caps the run's spend: an agent step over it ends the run
// budget_exceeded.
func TestEnvelopeMaxCost(t *testing.T) {
	r := run(t, `
name: cost
limits: {max_cost_usd: "0.10"}
steps:
  - {id: first, uses: agent, with: {prompt: "one"}}
  - {id: second, uses: agent, with: {prompt: "two"}}
  - {id: third, uses: agent, with: {prompt: "three"}}
`, nil, func(e *testsuite.Env) {
		e.MockAgent("first", "ok", "0.08")
		e.MockAgent("second", "ok", "0.08")
	})
	require.Error(t, r.Err)
	assert.Equal(t, runs.StatusBudgetExceeded, r.Status(), "%v", r.Err)
	assert.NotContains(t, r.StepNames(), "third", "no step runs past the cap")
	assert.True(t, r.Cost().GreaterThan(decimal.RequireFromString("0.10")))
}

func TestStartOptionsCarryTheEnvelope(t *testing.T) {
	def := parse(t, `name: carried
limits: {wall_time: 1h, steps: 20, tokens: 0, max_cost_usd: "0.40", budget_policy: pause, budget_pause: 2h, fan_out: 3}
priority: 2
labels: {team: web}
worker_tags: [gpu]
`+hello)
	so, err := interp.StartOptions(def)
	require.NoError(t, err)
	require.NotNil(t, so.MaxCostUSD)
	assert.Equal(t, "0.4", so.MaxCostUSD.String())
	assert.Equal(t, budget.Pause, so.BudgetPolicy)
	assert.Equal(t, 2*time.Hour, so.BudgetPause)
	assert.Equal(t, 2, so.Priority)
	assert.Equal(t, map[string]string{"team": "web"}, so.Labels)
	assert.Equal(t, []string{"gpu"}, so.WorkerTags)
	assert.Equal(t, &runs.Guards{MaxWallTime: time.Hour, MaxSteps: 20, MaxFanOut: 3}, so.Guards, "tokens: 0 (no limit) cannot tighten: the worker's stays")

	def = parse(t, "name: bare\n"+hello)
	so, err = interp.StartOptions(def)
	require.NoError(t, err)
	assert.Equal(t, core.StartOptions{}, so)
}

func TestCheckInputs(t *testing.T) {
	def := parse(t, "name: in\ninputs: {type: object, required: [who], properties: {who: {type: string}}}\n"+hello)
	assert.NoError(t, interp.CheckInputs(def, map[string]any{"who": "ada"}))
	err := interp.CheckInputs(def, map[string]any{"who": 3})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "test.yaml:2:9: input:")
	assert.Error(t, interp.CheckInputs(def, nil), "who is required")
}
