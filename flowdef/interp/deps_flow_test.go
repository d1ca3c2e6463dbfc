package interp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/testsuite"
)

// orderedItems is a foreach over map items with ids and depends_on; each item appends
// its id to the file ORDER, so the file records the order the items ran in.
const orderedItems = `
name: ordered
inputs: {type: object, properties: {order: {type: string}, items: {type: array}}}
steps:
  - id: work
    foreach:
      over: inputs.items
      ordered: true
      on_item_fail: %s
      steps:
        - {id: run, uses: shell, with: {command: "echo ${{ item.id }} >> ${{ inputs.order }} && test ${{ item.id }} != bad"}}
`

func orderedRun(t *testing.T, onItemFail string, items []map[string]any) (map[string]any, error, []string) {
	t.Helper()
	_, out, err, ran := orderedResult(t, onItemFail, items)
	return out, err, ran
}

func orderedResult(t *testing.T, onItemFail string, items []map[string]any) (*testsuite.Result, map[string]any, error, []string) {
	t.Helper()
	order := filepath.Join(t.TempDir(), "order")
	r := run(t, sprintf(orderedItems, onItemFail), map[string]any{"order": order, "items": items}, nil)
	b, _ := os.ReadFile(order)
	var ran []string
	if s := strings.TrimSpace(string(b)); s != "" {
		ran = strings.Split(s, "\n")
	}
	if r.Err != nil {
		return r, nil, r.Err, ran
	}
	var out map[string]any
	if len(r.Output) > 0 {
		out = output(t, r)
	}
	return r, out, nil, ran
}

func TestForeachOrderedRunsItemsAfterTheirDependencies(t *testing.T) {
	_, err, ran := orderedRun(t, "fail", []map[string]any{
		{"id": "deploy", "depends_on": []string{"build", "test"}},
		{"id": "test", "depends_on": []string{"build"}},
		{"id": "build"},
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"build", "test", "deploy"}, ran)
}

func TestForeachSkipDependentsSkipsOnlyTheDependents(t *testing.T) {
	r, _, err, ran := orderedResult(t, "skip_dependents", []map[string]any{
		{"id": "bad"},
		{"id": "after", "depends_on": []string{"bad"}},
		{"id": "free"},
	})
	require.NoError(t, err, "skip_dependents goes on after the items")
	assert.Equal(t, runs.StatusWarning, r.Status(), "a run that went on after failed items ends warning")
	assert.ElementsMatch(t, []string{"bad", "free"}, ran, "the independent item ran, the dependent did not")
	for _, s := range r.State.Steps {
		if s.Name == "after" {
			assert.Equal(t, runs.StepSkipped, s.Status)
		}
	}
}

func TestForeachOrderedRefusesACycleBeforeAnyItem(t *testing.T) {
	_, err, ran := orderedRun(t, "fail", []map[string]any{
		{"id": "a", "depends_on": []string{"b"}},
		{"id": "b", "depends_on": []string{"a"}},
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "test.yaml:6:13: items depend on each other in a cycle: a -> b -> a")
	assert.Empty(t, ran)
}

func TestForeachOrderedNeedsItemIDs(t *testing.T) {
	_, err, ran := orderedRun(t, "fail", []map[string]any{{"name": "x"}, {"id": "b", "depends_on": []string{"x"}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "item 0: items with depends_on need a non-empty string id")
	assert.Empty(t, ran)
}

func TestLoopInsideForeachSeesTheOuterItem(t *testing.T) {
	r := run(t, `
name: nested
steps:
  - id: files
    foreach:
      over: "['a', 'b']"
      as: file
      steps:
        - id: lines
          loop:
            over: "[1, 2]"
            steps:
              - {id: line, uses: shell, with: {command: "echo ${{ file }}${{ item }}"}}
        - {id: last, uses: shell, with: {command: "echo ${{ file }}-${{ steps.line.output }}"}}
  - id: done
    finish: {output: {all: "${{ steps.files.output }}"}}
`, nil, nil)
	assert.Equal(t, []any{"a-a2", "b-b2"}, output(t, r)["all"])
}
