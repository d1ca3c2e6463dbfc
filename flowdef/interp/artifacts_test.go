package interp_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowdef/interp"
	"github.com/gateflow/gateflow/internal/blob"
	"github.com/gateflow/gateflow/testsuite"
)

// A definition's with.outputs and with.inputs become the shell steps' artifacts: build
// leaves dist/ in the worker's blob store, test gets one file of it in its own work
// directory, under a path of its own.
func TestShellArtifactsFromADefinition(t *testing.T) {
	def := parse(t, `
name: artifacts
inputs: {type: object, properties: {dir: {type: string}}}
steps:
  - id: build
    uses: shell
    with:
      command: mkdir -p dist && printf 'made by build' > dist/app.txt
      outputs: ["${{ inputs.dir }}"]
  - id: test
    uses: shell
    with:
      command: cat in/app.txt
      inputs: [{step: build, name: dist/app.txt, path: in/app.txt}]
  - id: done
    finish: {output: {got: "${{ steps.test.output }}"}}
`)
	store, err := blob.FileURL(t.TempDir())
	require.NoError(t, err)
	env := testsuite.NewEnv(t, flow.WorkerOptions{BlobURL: store})
	env.Register(build(t, def, interp.DefaultModel("scripted")))
	r := env.Run(def.Name, map[string]any{"dir": "dist"})
	assert.Equal(t, map[string]any{"got": "made by build"}, output(t, r))
	var names []string
	for _, s := range r.State.Steps {
		for _, a := range s.Artifacts {
			names = append(names, s.Name+":"+a.Name)
		}
	}
	assert.Equal(t, []string{"build:dist/app.txt"}, names)
}
