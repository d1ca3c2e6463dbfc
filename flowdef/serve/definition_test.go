package serve_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/flowdef/interp"
	"github.com/gateflow/gateflow/testsuite"
)

const carried = `name: carried
inputs: {type: object, required: [who], properties: {who: {type: string}}}
steps:
  - {id: greet, uses: shell, with: {command: "echo hello ${{ inputs.who }}"}}
  - {id: done, finish: {output: {said: "${{ steps.greet.output }}"}}}
`

func generic(t *testing.T) flow.Definition {
	t.Helper()
	f, err := interp.DefinitionFlow()
	require.NoError(t, err)
	return f
}

// The generic flow runs the definition its input carries, steps named by its node ids.
func TestDefinitionFlowRuns(t *testing.T) {
	def, err := flowdef.Check("carried.yaml", []byte(carried), &flowdef.StaticRegistry{})
	require.NoError(t, err)
	env := testsuite.NewEnv(t)
	env.Register(generic(t))
	r := env.Run(interp.DefinitionFlowName, interp.NewDefinitionInput(def, map[string]any{"who": "Ada"}))
	require.NoError(t, r.Err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(r.Output, &out))
	assert.Equal(t, "hello Ada", out["said"])
	assert.Contains(t, r.StepNames(), "greet")
}

// The generic flow refuses, permanently, a definition altered after its hash was taken,
// inputs that do not match its schema and an input with no definition.
func TestDefinitionFlowRefuses(t *testing.T) {
	def, err := flowdef.Parse("carried.yaml", []byte(carried))
	require.NoError(t, err)
	for name, in := range map[string]interp.DefinitionInput{
		"hash":   {Definition: def.Canonical(), Hash: "0123456789abcdef", Inputs: map[string]any{"who": "Ada"}},
		"inputs": interp.NewDefinitionInput(def, map[string]any{"who": 3}),
		"empty":  {},
		"parse":  {Definition: json.RawMessage(`{"name": "x", "nodes": []}`)},
	} {
		t.Run(name, func(t *testing.T) {
			env := testsuite.NewEnv(t)
			env.Register(generic(t))
			r := env.Run(interp.DefinitionFlowName, in)
			require.Error(t, r.Err)
		})
	}
}
