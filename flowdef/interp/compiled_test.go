package interp

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/flowdef/expr"
)

const compiledSrc = `name: c
vars: {n: 0}
steps:
  - id: each
    loop:
      over: "[1, 2, 3]"
      steps:
        - {id: add, set: {n: "${{ vars.n + item }}"}}
  - {id: done, finish: {output: "n=${{ vars.n }}"}}
`

// Runs of the same definition content share its compiled expressions (a second parse of
// the same text too); other content gets its own.
func TestCompiledSharedByContent(t *testing.T) {
	a, err := flowdef.Parse("a.yaml", []byte(compiledSrc))
	require.NoError(t, err)
	b, err := flowdef.Parse("b.yaml", []byte(compiledSrc))
	require.NoError(t, err)
	other, err := flowdef.Parse("o.yaml", []byte(compiledSrc+"description: other\n"))
	require.NoError(t, err)

	ev := newEvaluator(a, expr.RunInfo{ID: "r1"})
	assert.Same(t, ev.c, newEvaluator(b, expr.RunInfo{ID: "r2"}).c)
	assert.NotSame(t, ev.c, newEvaluator(other, expr.RunInfo{}).c)
	assert.Equal(t, []string{"n"}, ev.c.vars)
	assert.Equal(t, []string{"add", "done", "each"}, ev.c.steps)

	top := &frame{vars: map[string]any{"n": int64(2)}, steps: map[string]expr.StepResult{}}
	top.run = &runner{inputs: map[string]any{}}
	in := top.child("", int64(5), 0)
	p1, err := ev.program(in, "vars.n + item")
	require.NoError(t, err)
	v, err := ev.eval(in, "vars.n + item")
	require.NoError(t, err)
	assert.Equal(t, int64(7), v)
	p2, err := newEvaluator(b, expr.RunInfo{}).program(in, "vars.n + item")
	require.NoError(t, err)
	assert.Same(t, p1, p2, "compiled once for both runs")

	// The same text under another scope is another program: item is not visible at the top.
	_, err = ev.program(top, "vars.n + item")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "item")
}

// Runs on many goroutines (a worker's concurrent workflow tasks) render the shared
// templates and programs safely and each sees its own values (go test -race).
func TestCompiledConcurrentRuns(t *testing.T) {
	def, err := flowdef.Parse("a.yaml", []byte(compiledSrc))
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Go(func() {
			ev := newEvaluator(def, expr.RunInfo{ID: fmt.Sprint(g)})
			f := &frame{run: &runner{inputs: map[string]any{}}, vars: map[string]any{"n": int64(g)}, steps: map[string]expr.StepResult{}}
			for range 50 {
				s, err := ev.render(f, "n=${{ vars.n }}")
				if err == nil && s != fmt.Sprintf("n=%d", g) {
					err = fmt.Errorf("goroutine %d rendered %q", g, s)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// The process keeps at most maxCompiled entries, dropping the oldest.
func TestBoundedDropsTheOldest(t *testing.T) {
	var b bounded[int]
	for i := range maxCompiled + 10 {
		assert.Equal(t, i, b.add(fmt.Sprint(i), i))
	}
	assert.Len(t, b.m, maxCompiled)
	_, ok := b.get("9")
	assert.False(t, ok)
	v, ok := b.get("10")
	assert.True(t, ok)
	assert.Equal(t, 10, v)
	assert.Equal(t, 10, b.add("10", 99), "a key there already keeps its value")
}

// A schema compiles once per text; one that does not compile is an error every time.
func TestCompileSchemaCached(t *testing.T) {
	s1, err := compileSchema([]byte(`{"type": "object"}`))
	require.NoError(t, err)
	s2, err := compileSchema([]byte(`{"type": "object"}`))
	require.NoError(t, err)
	assert.Same(t, s1, s2)
	for range 2 {
		_, err = compileSchema([]byte(`{"type": 3}`))
		assert.Error(t, err)
	}
}
