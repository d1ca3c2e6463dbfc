package interp

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flowdef"
)

// TestTriggerMap: a definition's if and input on the triggers of one flow become one
// flow.TriggerInput: the first trigger matching the end whose if holds starts the flow,
// with its input rendered from the ended run's output (the output as it is without one).
func TestTriggerMap(t *testing.T) {
	def, err := flowdef.Check("test.yaml", []byte(`
name: trig
triggers:
  - {on: completed, flow: build, if: "${{ output.severity == 'high' }}", input: {ticket: "${{ output.id }}", n: "${{ output.n }}", note: "from ${{ run.workflow }}"}}
  - {on: finished, flow: build, if: "outcome == 'failed'"}
  - {on: completed, flow: deploy}
steps:
  - {id: hello, uses: shell, with: {command: "echo hi"}}
`), &flowdef.StaticRegistry{})
	require.NoError(t, err)
	f, err := Flow(def)
	require.NoError(t, err)
	i := f.Info()
	require.Len(t, i.Triggers, 2)
	assert.Equal(t, "build", i.Triggers[0].Flow)
	assert.True(t, i.Triggers[0].Mapped)
	assert.Equal(t, "deploy", i.Triggers[1].Flow)
	assert.False(t, i.Triggers[1].Mapped, "deploy's trigger has neither if nor input")

	m, err := newTriggerMap("build", def.Triggers[:2])
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		end    core.RunEnd
		output string
		start  bool
		input  string
	}{
		{"high: mapped", core.WhenCompleted, `{"severity": "high", "id": "T-1", "n": 3}`, true, `{"ticket": "T-1", "n": 3, "note": "from build"}`},
		{"low: no trigger holds", core.WhenCompleted, `{"severity": "low", "id": "T-2"}`, false, ``},
		{"failed: the output as it is", core.WhenFailed, `{"severity": "low"}`, true, `{"severity": "low"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, start, err := m.input(tc.end, json.RawMessage(tc.output))
			require.NoError(t, err)
			assert.Equal(t, tc.start, start)
			if tc.start {
				b, err := json.Marshal(in)
				require.NoError(t, err)
				assert.JSONEq(t, tc.input, string(b))
			}
		})
	}
	_, _, err = m.input(core.WhenCompleted, json.RawMessage(`{"id": "T-3"}`))
	require.Error(t, err, "a missing field is an evaluation error")
	assert.Contains(t, err.Error(), `test.yaml:4:38: if: expr: evaluating "output.severity == 'high'": no such key: severity`)
}
