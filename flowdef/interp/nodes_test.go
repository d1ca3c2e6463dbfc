package interp_test

import (
	"slices"

	"github.com/gateflow/gateflow/items"

	"github.com/gateflow/gateflow/runs"

	"context"
	"testing"
	"time"

	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/internal/protocol"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowdef/interp"
	"github.com/gateflow/gateflow/testsuite"
)

func TestCheckFailsWithMessageAndPosition(t *testing.T) {
	r := run(t, `
name: checked
vars: {n: 1}
steps:
  - id: big
    check: vars.n > 5
    message: "n is ${{ vars.n }}"
`, nil, nil)
	require.Error(t, r.Err)
	assert.Contains(t, r.Err.Error(), "test.yaml:4:5: node big (check): n is 1")
	assert.Equal(t, runs.StatusFailed, r.Status())
}

func TestIfThenElseAndGuard(t *testing.T) {
	r := run(t, `
name: branches
inputs: {type: object, properties: {n: {type: integer}}}
steps:
  - id: branch
    if: inputs.n > 10
    then:
      - {id: big, uses: shell, with: {command: echo big}}
    else:
      - {id: small, uses: shell, with: {command: echo small}}
  - id: guarded
    if: inputs.n > 100
    uses: shell
    with: {command: echo never}
  - id: done
    finish: {output: {small: "${{ has(steps.small) }}", big: "${{ has(steps.big) }}", guarded: "${{ steps.guarded.status }}"}}
`, map[string]any{"n": 3}, nil)
	assert.Equal(t, map[string]any{"small": true, "big": false, "guarded": "skipped"}, output(t, r))
	st, ok := r.Step("guarded")
	require.True(t, ok)
	assert.Equal(t, runs.StepSkipped, st.Status)
	assert.NotContains(t, r.StepNames(), "big")
}

func TestSwitchCasesAndDefault(t *testing.T) {
	src := `
name: routed
inputs: {type: object, properties: {sev: {type: string}, n: {type: integer}}}
steps:
  - id: route
    switch: inputs.sev
    cases:
      - value: high
        steps: [{id: page, set: {who: page}}]
      - value: medium
        steps: [{id: ticket, set: {who: ticket}}]
    default:
      - {id: log, set: {who: log}}
  - id: num
    switch: inputs.n
    cases:
      - value: 2
        steps: [{id: two, set: {n: two}}]
`
	for sev, want := range map[string]string{"high": "page", "medium": "ticket", "low": "log"} {
		r := run(t, src, map[string]any{"sev": sev, "n": 2}, nil)
		out := output(t, r)
		assert.Equal(t, want, out["who"], sev)
		assert.Equal(t, "two", out["n"], sev)
	}
}

func TestLoops(t *testing.T) {
	r := run(t, `
name: loops
inputs: {type: object, properties: {files: {type: array}}}
vars: {i: 0, j: 0, seen: ""}
steps:
  - id: count
    loop:
      while: vars.i < 3
      max_iterations: 10
      steps: [{id: inc, set: {i: "${{ vars.i + 1 }}"}}]
  - id: once
    loop:
      until: "true"
      max_iterations: 5
      steps: [{id: incj, set: {j: "${{ vars.j + 1 }}"}}]
  - id: each
    loop:
      over: inputs.files
      as: file
      steps:
        - {id: echo, uses: shell, with: {command: "echo ${{ index }}:${{ file }}"}}
        - {id: acc, set: {seen: "${{ vars.seen + steps.echo.output + ';' }}"}}
`, map[string]any{"files": []string{"a", "b"}}, nil)
	out := output(t, r)
	assert.Equal(t, float64(3), out["i"])
	assert.Equal(t, float64(1), out["j"])
	assert.Equal(t, "0:a;1:b;", out["seen"])
	assert.Equal(t, []string{"echo", "echo"}, r.StepNames())
}

func TestLoopMaxIterations(t *testing.T) {
	r := run(t, `
name: forever
steps:
  - id: spin
    loop:
      while: "true"
      max_iterations: 3
      steps: [{id: tick, uses: shell, with: {command: "true"}}]
`, nil, nil)
	require.Error(t, r.Err)
	assert.Contains(t, r.Err.Error(), "max_iterations 3 reached")
	assert.Len(t, r.StepNames(), 3)
}

func TestParallelBranches(t *testing.T) {
	r := run(t, `
name: fan
steps:
  - id: fan
    parallel:
      - {id: left, uses: shell, with: {command: echo left}}
      - {id: right, uses: shell, with: {command: echo right}}
  - id: done
    finish: {output: {fan: "${{ steps.fan.output }}", right: "${{ steps.right.output }}"}}
`, nil, nil)
	out := output(t, r)
	assert.Equal(t, map[string]any{"left": "left", "right": "right"}, out["fan"])
	assert.Equal(t, "right", out["right"])
	var branches []string
	for _, s := range r.State.Steps {
		if s.Kind == runs.KindShell {
			branches = append(branches, s.Branch+"/"+s.Name)
		}
	}
	assert.ElementsMatch(t, []string{"fan/left/left", "fan/right/right"}, branches)
}

func TestParallelMinSuccess(t *testing.T) {
	src := `
name: fan
steps:
  - id: fan
    min_success: %s
    parallel:
      - {id: ok, uses: shell, with: {command: "true"}}
      - {id: bad, uses: shell, with: {command: "exit 3"}}
`
	r := run(t, sprintf(src, "1"), nil, nil)
	require.NoError(t, r.Err)
	r = run(t, sprintf(src, "2"), nil, nil)
	require.Error(t, r.Err)
	assert.Contains(t, r.Err.Error(), "bad")
}

func TestForeachInline(t *testing.T) {
	r := run(t, `
name: each
inputs: {type: object, properties: {files: {type: array}}}
steps:
  - id: reviews
    foreach:
      over: inputs.files
      as: file
      max_parallel: 2
      steps:
        - {id: review, uses: agent, with: {prompt: "Review ${{ file }}"}}
        - {id: shout, uses: shell, with: {command: "echo ${{ steps.review.output }}-${{ index }}"}}
  - id: done
    finish: {output: {all: "${{ steps.reviews.output }}"}}
`, map[string]any{"files": []string{"a.go", "b.go"}}, func(e *testsuite.Env) {
		e.ScriptAgent(llm.ScriptRule{Match: "a.go", Text: "fine"}, llm.ScriptRule{Match: "b.go", Text: "bad"})
	})
	out := output(t, r)
	assert.Equal(t, []any{"fine-0", "bad-1"}, out["all"])
}

func TestForeachContinueOnItemFail(t *testing.T) {
	r := run(t, `
name: each
steps:
  - id: items
    foreach:
      over: "[1, 2, 3]"
      on_item_fail: continue
      steps:
        - {id: work, uses: shell, with: {command: "test ${{ item }} -ne 2 && echo ${{ item }}"}}
  - id: done
    finish: {output: {all: "${{ steps.items.output }}"}}
`, nil, nil)
	out := output(t, r)
	assert.Equal(t, []any{"1", nil, "3"}, out["all"])
	assert.Equal(t, runs.StatusWarning, r.Status(), "the run went on after a failed item")
}

func TestSleep(t *testing.T) {
	r := run(t, `
name: nap
steps:
  - {id: nap, sleep: 2h}
  - {id: after, uses: shell, with: {command: echo up}}
`, nil, nil)
	require.NoError(t, r.Err)
	st, ok := r.Step("after")
	require.True(t, ok)
	assert.GreaterOrEqual(t, st.StartedAt.Sub(r.State.StartedAt), 2*time.Hour)
}

func TestFinishFailedAndOutputs(t *testing.T) {
	r := run(t, `
name: give-up
steps:
  - id: stop
    finish: {status: failed, message: "nobody ${{ 'approved' }}"}
  - {id: never, uses: shell, with: {command: echo never}}
`, nil, nil)
	require.Error(t, r.Err)
	assert.Contains(t, r.Err.Error(), "nobody approved")
	assert.Equal(t, runs.StatusFailed, r.Status())
	assert.Empty(t, r.StepNames())

	r = run(t, `
name: typed-out
outputs: {type: object, required: [n], properties: {n: {type: integer}}}
steps:
  - {id: end, finish: {output: {n: "oops"}}}
`, nil, nil)
	require.Error(t, r.Err)
	assert.Contains(t, r.Err.Error(), "outputs schema")
}

func TestInputSchema(t *testing.T) {
	r := run(t, `
name: typed-in
inputs: {type: object, required: [n], properties: {n: {type: integer}}}
steps:
  - {id: s, set: {x: 1}}
`, map[string]any{"n": "nope"}, nil)
	require.Error(t, r.Err)
	assert.Contains(t, r.Err.Error(), "input")
}

func TestOnErrorContinueAndGoto(t *testing.T) {
	r := run(t, `
name: routes
steps:
  - id: flaky
    uses: shell
    with: {command: "exit 4"}
    on_error: continue
  - id: triage
    uses: shell
    with: {command: "exit 5"}
    on_error: goto escalate
  - {id: done, finish: {output: {path: normal}}}
  - id: escalate
    finish: {output: {path: escalated, flaky: "${{ steps.flaky.status }}", err: "${{ steps.triage.error != '' }}"}}
`, nil, nil)
	out := output(t, r)
	assert.Equal(t, map[string]any{"path": "escalated", "flaky": "failed", "err": true}, out)
	assert.NotContains(t, r.StepNames(), "done")
}

func TestGotoBound(t *testing.T) {
	def := parse(t, `
name: spin
steps:
  - id: again
    uses: shell
    with: {command: "exit 1"}
    on_error: goto again
`)
	env := testsuite.NewEnv(t)
	env.Register(build(t, def, interp.MaxVisits(2)))
	r := env.Run(def.Name, nil)
	assert.Equal(t, runs.StatusFailed, r.Status())
	require.Error(t, r.Err)
	assert.Contains(t, r.Err.Error(), "re-entered 2 times (max 2)")
	assert.Len(t, r.StepNames(), 3)
}

func TestGotoOutOfNestedList(t *testing.T) {
	r := run(t, `
name: nested
vars: {tries: 0}
steps:
  - id: start
    set: {tries: "${{ vars.tries + 1 }}"}
  - id: branch
    if: vars.tries < 3
    then:
      - {id: fail, uses: shell, with: {command: "exit 1"}, on_error: goto start}
`, nil, nil)
	out := output(t, r)
	assert.Equal(t, float64(3), out["tries"])
}

func TestAgentOutputSchema(t *testing.T) {
	r := run(t, `
name: agent
steps:
  - id: triage
    uses: agent
    with: {prompt: "Triage this"}
    output_schema: {type: object, required: [severity], properties: {severity: {type: string}}}
  - {id: done, finish: {output: {sev: "${{ steps.triage.output.severity }}", cost: "${{ steps.triage.cost_usd >= 0.0 }}"}}}
`, nil, func(e *testsuite.Env) {
		e.ScriptAgent(llm.ScriptRule{Match: "Triage", Text: `{"severity": "high"}`})
	})
	assert.Equal(t, map[string]any{"sev": "high", "cost": true}, output(t, r))
}

func TestHTTPAndActionMocked(t *testing.T) {
	r := run(t, `
name: calls
steps:
  - {id: fetch, uses: http, with: {url: "http://127.0.0.1:1/x"}}
  - {id: post, uses: post-comment, with: {body: "${{ steps.fetch.output.ok }}"}}
  - {id: done, finish: {output: {post: "${{ steps.post.output }}"}}}
`, nil, func(e *testsuite.Env) {
		e.MockStep("fetch", activities.HTTPResult{Status: 200, JSON: []byte(`{"ok": true}`)}, nil)
		e.RegisterActivity(func(in map[string]any) (map[string]any, error) {
			return map[string]any{"posted": in["body"]}, nil
		}, "post-comment")
	})
	assert.Equal(t, map[string]any{"post": map[string]any{"posted": true}}, output(t, r))
}

// tickets is an item provider for tests.
type tickets struct{}

func (tickets) Name() string { return "open-tickets" }

func (tickets) Items(_ context.Context, scope string, filter map[string]string) ([]items.Item, error) {
	return []items.Item{
		{ID: "T-1", Ref: scope, Context: map[string]string{"path": "a.go", "team": filter["team"]}},
		{ID: "T-2", Ref: scope, Context: map[string]string{"path": "b.go", "team": filter["team"]}},
	}, nil
}

func TestForeachProvider(t *testing.T) {
	def := parse(t, `
name: provided
steps:
  - id: each
    foreach:
      provider: open-tickets
      params: {scope: ops, team: "${{ 'core' }}"}
      steps:
        - {id: show, uses: shell, with: {command: "echo ${{ item.id }}:${{ item.ref }}:${{ item.path }}:${{ item.team }}"}}
  - {id: done, finish: {output: {all: "${{ steps.each.output }}"}}}
`)
	env := testsuite.NewEnv(t, flow.WorkerOptions{ItemProviders: []items.Provider{tickets{}}})
	env.Register(build(t, def))
	r := env.Run(def.Name, nil)
	assert.Equal(t, map[string]any{"all": []any{"T-1:ops:a.go:core", "T-2:ops:b.go:core"}}, output(t, r))
	var branches []string
	for _, s := range r.State.Steps {
		if s.Name == "show" {
			branches = append(branches, s.Branch)
		}
	}
	assert.Equal(t, []string{"each/T-1", "each/T-2"}, branches)
}

func TestActionWithoutActivityRunsTheFallbackAction(t *testing.T) {
	def := parse(t, `
name: fallback
steps:
  - {id: post, uses: post-comment, with: {body: "hello"}}
  - {id: count, uses: count-lines}
  - {id: done, finish: {output: {post: "${{ steps.post.output }}", count: "${{ steps.count.output }}"}}}
`)
	reg := &flowdef.StaticRegistry{Actions: append(slices.Clone(core.BuiltinActions), "count-lines"), Fallback: true}
	env := testsuite.NewEnv(t)
	env.Register(build(t, def, interp.Registry(reg)))
	var calls []activities.ActionCall
	env.RegisterActivity(func(call activities.ActionCall) (any, error) {
		calls = append(calls, call)
		return map[string]any{"handled": call.Name}, nil
	}, protocol.FallbackActionActivity)
	env.RegisterActivity(func(map[string]any) (int, error) { return 42, nil }, "count-lines")
	r := env.Run(def.Name, nil)
	assert.Equal(t, map[string]any{"post": map[string]any{"handled": "post-comment"}, "count": float64(42)}, output(t, r))
	require.Len(t, calls, 1, "a registered action is not sent to the fallback")
	assert.Equal(t, activities.ActionCall{Name: "post-comment", With: map[string]any{"body": "hello"}}, calls[0])
}
