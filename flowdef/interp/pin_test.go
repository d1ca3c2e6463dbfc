package interp_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/flowdef/interp"
	"github.com/gateflow/gateflow/testsuite"
)

func TestCallChildByName(t *testing.T) {
	child := parse(t, `
name: child-flow
inputs: {type: object, required: [path], properties: {path: {type: string}}}
steps:
  - {id: done, finish: {output: {seen: "${{ inputs.path }}"}}}
`)
	parent := parse(t, `
name: parent-flow
steps:
  - id: sub
    call: child-flow
    with: {path: README.md}
  - id: each
    foreach:
      over: "['a', 'b']"
      call: child-flow
      with: {path: "${{ item }}"}
  - {id: done, finish: {output: {one: "${{ steps.sub.output.seen }}", all: "${{ steps.each.output }}"}}}
`)
	env := testsuite.NewEnv(t)
	env.Register(build(t, parent), build(t, child))
	r := env.Run("parent-flow", nil)
	assert.Equal(t, map[string]any{"one": "README.md", "all": []any{map[string]any{"seen": "a"}, map[string]any{"seen": "b"}}}, output(t, r))
}

const pinV1 = `
name: pinned
steps:
  - {id: wait, gate: {type: signal, signal: go}}
  - {id: v1, uses: shell, with: {command: echo one}}
  - {id: done, finish: {output: {version: 1}}}
`

const pinV2 = `
name: pinned
steps:
  - {id: wait, gate: {type: signal, signal: go}}
  - {id: v2, uses: shell, with: {command: echo two}}
  - {id: done, finish: {output: {version: 2}}}
`

// A run keeps the definition it started with when the Live one changes while it waits;
// the next run uses the new one.
func TestPinnedDefinition(t *testing.T) {
	live, err := interp.NewLive(parse(t, pinV1))
	require.NoError(t, err)
	f, err := live.Flow()
	require.NoError(t, err)

	env := testsuite.NewEnv(t)
	env.Register(f)
	env.Temporal().RegisterDelayedCallback(func() { require.NoError(t, live.Set(parse(t, pinV2))) }, time.Minute)
	env.Signal(time.Hour, "go", "", "", nil)
	r := env.Run("pinned", nil)
	assert.Equal(t, map[string]any{"version": float64(1)}, output(t, r))
	assert.Contains(t, r.StepNames(), "v1")

	env = testsuite.NewEnv(t)
	env.Register(f)
	env.Signal(time.Hour, "go", "", "", nil)
	r = env.Run("pinned", nil)
	assert.Equal(t, map[string]any{"version": float64(2)}, output(t, r))
	assert.Contains(t, r.StepNames(), "v2")

	// A renamed definition cannot replace a Live one.
	assert.Error(t, live.Set(parse(t, "name: other\nsteps: [{id: s, set: {x: 1}}]")))
}
