package interp_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/flowdef/interp"
	"github.com/gateflow/gateflow/testsuite"
)

// parse parses a definition written in a test, failing the test on an error.
func parse(t *testing.T, src string) *flowdef.Definition {
	t.Helper()
	def, err := flowdef.Parse("test.yaml", []byte(strings.TrimSpace(src)+"\n"))
	require.NoError(t, err)
	return def
}

// build is interp.Flow, failing the test on an error.
func build(t *testing.T, def *flowdef.Definition, opts ...interp.Option) flow.Definition {
	t.Helper()
	f, err := interp.Flow(def, opts...)
	require.NoError(t, err)
	return f
}

// run runs src once in a fresh test environment, after setup (mocks, people).
func run(t *testing.T, src string, input any, setup func(*testsuite.Env)) *testsuite.Result {
	t.Helper()
	def := parse(t, src)
	env := testsuite.NewEnv(t)
	env.Register(build(t, def, interp.DefaultModel("scripted")))
	if setup != nil {
		setup(env)
	}
	return env.Run(def.Name, input)
}

// output decodes a completed run's output.
func output(t *testing.T, r *testsuite.Result) map[string]any {
	t.Helper()
	require.NoError(t, r.Err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(r.Output, &out))
	return out
}

func TestShellSetCheckFinish(t *testing.T) {
	r := run(t, `
name: basic
inputs: {type: object, properties: {who: {type: string}, n: {type: integer}}}
vars: {count: 0}
steps:
  - id: greet
    uses: shell
    with: {command: "echo hello ${{ inputs.who }}"}
  - id: count
    set: {count: "${{ inputs.n + 1 }}", label: "n=${{ inputs.n }}"}
  - id: positive
    check: vars.count > 0
    message: "count is ${{ vars.count }}"
  - id: done
    finish:
      output: {greeting: "${{ steps.greet.output }}", count: "${{ vars.count }}", label: "${{ vars.label }}", status: "${{ steps.greet.status }}"}
`, map[string]any{"who": "world", "n": 2}, nil)
	out := output(t, r)
	assert.Equal(t, map[string]any{"greeting": "hello world", "count": float64(3), "label": "n=2", "status": "succeeded"}, out)
	assert.Equal(t, runs.StatusCompleted, r.Status())
	assert.Equal(t, []string{"greet"}, r.StepNames())
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

func TestShellOutputOverTheResultsBoundIsNotParsed(t *testing.T) {
	// stdout is "[1]", 300,000 spaces and "x": not JSON, but its head kept in the result is
	// "[1]" and spaces, which is. The output is the head as text, not the array.
	r := run(t, `
name: cut-json
steps:
  - id: p
    uses: shell
    with: {command: "printf '[1]'; head -c 300000 /dev/zero | tr '\\0' ' '; printf x"}
  - id: whole
    uses: shell
    with: {command: "printf '[2]'; head -c 1000 /dev/zero | tr '\\0' ' '"}
  - id: done
    finish:
      output: {cut: "${{ steps.p.output }}", whole: "${{ steps.whole.output }}"}
`, nil, nil)
	out := output(t, r)
	cut, ok := out["cut"].(string)
	require.True(t, ok, "the cut output is text: %T", out["cut"])
	assert.Len(t, cut, activities.MaxOutputBytes)
	assert.True(t, strings.HasPrefix(cut, "[1]   "))
	assert.Equal(t, []any{float64(2)}, out["whole"], "a whole stdout is still parsed")
}
