package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowdef/interp"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/testsuite"
)

const greetV1 = `name: greet
version: "1"
inputs: {type: object, properties: {who: {type: string}}}
steps:
  - {id: hello, uses: shell, with: {command: "echo hello ${{ inputs.who }}"}}
  - {id: sub, call: helper}
`

const greetV2 = `name: greet
version: "2"
inputs: {type: object, properties: {who: {type: string}}}
steps:
  - {id: hi, uses: shell, with: {command: "echo hi ${{ inputs.who }}"}}
  - {id: sub, call: helper}
`

const helper = `name: helper
steps:
  - {id: done, finish: {output: {ok: true}}}
`

func write(t *testing.T, dir, name, src string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	return path
}

// loader serves dir on a worker that never starts; publishes are counted.
func loader(t *testing.T, dir string) (*Loader, *flow.Worker, *bytes.Buffer, *int) {
	t.Helper()
	w := flow.NewWorker(nil, flow.WorkerOptions{TaskQueue: "serve-test"})
	var logs bytes.Buffer
	l, err := Dir(w, dir, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Interp: []interp.Option{interp.DefaultModel("scripted")}})
	require.NoError(t, err)
	n := 0
	l.publish = func(context.Context) error { n++; return nil }
	return l, w, &logs, &n
}

func info(t *testing.T, w *flow.Worker, name string) core.WorkflowInfo {
	t.Helper()
	for _, f := range w.Flows() {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("worker serves no flow %s", name)
	return core.WorkflowInfo{}
}

func TestDirLoads(t *testing.T) {
	dir := t.TempDir()
	path := write(t, dir, "greet.yaml", greetV1)
	write(t, dir, "helper.yml", helper)
	write(t, dir, "notes.txt", "not a definition")
	l, w, _, _ := loader(t, dir)
	assert.Equal(t, []string{"greet", "helper"}, l.Names())
	require.NoError(t, w.Validate())
	g := info(t, w, "greet")
	assert.Equal(t, protocol.KindYAMLFlow, g.Kind)
	assert.Equal(t, l.Current("greet").Hash(), g.Hash)
	assert.Equal(t, path, g.Source)
	assert.Equal(t, "1", g.Version)
	assert.Equal(t, protocol.KindGoFlow, info(t, w, interp.DefinitionFlowName).Kind)
}

func TestDirRefusesInvalidWithEveryError(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.yaml", "name: a\nsteps:\n  - {id: x, uses: nope}\n")
	write(t, dir, "b.yaml", "name: b\nsteps:\n  - {id: y, call: missing}\n")
	write(t, dir, "c.json", `{"name": "c", "bogus": 1, "steps": []}`)
	write(t, dir, "ok.yaml", helper)
	w := flow.NewWorker(nil, flow.WorkerOptions{})
	_, err := Dir(w, dir, Options{})
	require.Error(t, err)
	msg := err.Error()
	for _, want := range []string{"a.yaml:3", "'nope'", "b.yaml:3", "missing", "c.json", "bogus"} {
		assert.Contains(t, msg, want)
	}
	assert.Empty(t, w.Flows(), "nothing is added when a file is invalid")

	_, err = Dir(w, filepath.Join(dir, "absent"), Options{})
	assert.ErrorContains(t, err, "read the definitions directory")
}

func TestReloadEditInvalidRemoveAdd(t *testing.T) {
	dir := t.TempDir()
	path := write(t, dir, "greet.yaml", greetV1)
	write(t, dir, "helper.yaml", helper)
	l, w, logs, published := loader(t, dir)
	ctx := context.Background()
	h1 := info(t, w, "greet").Hash

	require.NoError(t, l.Reload(ctx))
	assert.Equal(t, 0, *published, "nothing changed")

	// A valid edit: new definition, new hash, republished.
	write(t, dir, "greet.yaml", greetV2)
	require.NoError(t, l.Reload(ctx))
	g := info(t, w, "greet")
	assert.NotEqual(t, h1, g.Hash)
	assert.Equal(t, l.Current("greet").Hash(), g.Hash)
	assert.Equal(t, "2", g.Version)
	assert.Equal(t, 1, *published)
	assert.Contains(t, logs.String(), "reloaded")

	// An invalid edit keeps the last good version and logs every error, once.
	write(t, dir, "greet.yaml", "name: greet\nsteps:\n  - {id: a, uses: nope}\n  - {id: b, call: nowhere}\n")
	require.NoError(t, l.Reload(ctx))
	require.NoError(t, l.Reload(ctx))
	assert.Equal(t, g.Hash, info(t, w, "greet").Hash)
	assert.Equal(t, "2", l.Current("greet").Version)
	assert.Equal(t, 1, *published)
	assert.Contains(t, logs.String(), "'nope'")
	assert.Contains(t, logs.String(), "nowhere")
	assert.Equal(t, 1, strings.Count(logs.String(), "'nope'"))

	// Removal: new runs fail at once, the entry says so.
	require.NoError(t, os.Remove(path))
	require.NoError(t, l.Reload(ctx))
	assert.Equal(t, []string{"helper"}, l.Names())
	assert.Nil(t, l.Current("greet"))
	assert.Contains(t, info(t, w, "greet").Description, "removed")
	assert.Contains(t, info(t, w, "greet").Removed, "definition greet was removed", "Client.Start refuses new runs")
	assert.Equal(t, 2, *published)
	assert.Contains(t, logs.String(), "definition greet was removed")

	// An addition is served at once (the worker publishes it); bringing back a removed
	// one serves it again.
	extra := write(t, dir, "extra.yaml", "name: extra\nsteps:\n  - {id: s, set: {x: 1}}\n")
	write(t, dir, "greet.yaml", greetV1)
	require.NoError(t, l.Reload(ctx))
	assert.Contains(t, logs.String(), `msg="flow definitions: added" definition=extra`)
	assert.NotContains(t, logs.String(), "restart")
	assert.Equal(t, []string{"extra", "greet", "helper"}, l.Names())
	e := info(t, w, "extra")
	assert.Equal(t, protocol.KindYAMLFlow, e.Kind)
	assert.Equal(t, extra, e.Source)
	assert.Equal(t, l.Current("extra").Hash(), e.Hash)
	assert.Equal(t, h1, info(t, w, "greet").Hash)
	assert.Equal(t, 3, *published)
	require.NoError(t, w.Validate())
	names := make([]string, 0, len(l.Flows()))
	for _, f := range l.Flows() {
		names = append(names, f.Name())
	}
	assert.Equal(t, []string{"extra", "greet", "helper"}, names)
}

// A new file the worker refuses is logged and not served; the next edit of it is tried
// again.
func TestReloadAddRefused(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "helper.yaml", helper)
	l, w, logs, _ := loader(t, dir)
	refuse := true
	l.addFlow = func(f flow.Definition) error {
		if refuse {
			return errors.New("worker: add flows: refused for the test")
		}
		return w.AddFlows(f)
	}
	ctx := context.Background()
	write(t, dir, "late.yaml", "name: late\nsteps:\n  - {id: s, set: {x: 1}}\n")
	require.NoError(t, l.Reload(ctx))
	assert.Contains(t, logs.String(), "cannot serve the new definition")
	assert.Contains(t, logs.String(), "refused for the test")
	assert.Equal(t, []string{"helper"}, l.Names())
	assert.Nil(t, l.Current("late"))

	refuse = false
	require.NoError(t, l.Reload(ctx))
	assert.Nil(t, l.Current("late"), "an unchanged file is not tried again")
	write(t, dir, "late.yaml", "name: late\nversion: \"2\"\nsteps:\n  - {id: s, set: {x: 1}}\n")
	require.NoError(t, l.Reload(ctx))
	require.NotNil(t, l.Current("late"))
	assert.Equal(t, "2", info(t, w, "late").Version)
}

func TestEnsureDefinitionFlowOnce(t *testing.T) {
	w := flow.NewWorker(nil, flow.WorkerOptions{})
	require.NoError(t, EnsureDefinitionFlow(w))
	require.NoError(t, EnsureDefinitionFlow(w))
	assert.Len(t, w.Flows(), 1)
	require.NoError(t, w.Validate())
}

// A served definition runs; once its file is removed, new runs fail at once saying so.
func TestServedAndRemoved(t *testing.T) {
	dir := t.TempDir()
	path := write(t, dir, "greet.yaml", "name: greet\nsteps:\n  - {id: hello, uses: shell, with: {command: echo hello}}\n")
	l, _, _, _ := loader(t, dir)
	flows := l.Flows()
	require.Len(t, flows, 1)

	env := testsuite.NewEnv(t)
	env.Register(flows...)
	r := env.Run("greet", nil)
	require.NoError(t, r.Err)
	assert.Contains(t, r.StepNames(), "hello")

	require.NoError(t, os.Remove(path))
	require.NoError(t, l.Reload(context.Background()))
	env = testsuite.NewEnv(t)
	env.Register(flows...)
	r = env.Run("greet", nil)
	require.Error(t, r.Err)
	assert.Contains(t, r.Err.Error(), "was removed")
}

// TestReloadRefusesMemoryBombs: a billion-laughs file, a file over the size limit and a
// served definition edited into a billion laughs are each logged once with the limit;
// the good definitions stay served, and reloading again and again allocates a few
// megabytes at most.
func TestReloadRefusesMemoryBombs(t *testing.T) {
	dir := t.TempDir()
	greet := write(t, dir, "greet.yaml", greetV1)
	write(t, dir, "helper.yaml", helper)
	l, w, logs, _ := loader(t, dir)
	h := info(t, w, "greet").Hash
	ctx := context.Background()

	var lol strings.Builder
	lol.WriteString("name: lol\nsteps: [{id: a, set: {x: 1}}]\nvars:\n  l0: &l0 lol\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&lol, "  l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d,", i-1), 10), ","))
	}
	bomb := write(t, dir, "lol.yaml", lol.String())
	f, err := os.Create(filepath.Join(dir, "huge.yaml"))
	require.NoError(t, err)
	require.NoError(t, f.Truncate(1<<32)) // 4 GiB, sparse: never read whole
	require.NoError(t, f.Close())

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < 5; i++ {
		require.NoError(t, l.Reload(ctx))
	}
	write(t, dir, "greet.yaml", strings.Replace(lol.String(), "name: lol", "name: greet", 1))
	for i := 0; i < 5; i++ {
		require.NoError(t, l.Reload(ctx))
	}
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "bytes allocated by the reloads")

	out := logs.String()
	assert.Equal(t, 1, strings.Count(out, bomb+":8:40: aliases expand to more than 10000 nodes (the limit, flowdef.MaxAliasNodes)"), out)
	assert.Equal(t, 1, strings.Count(out, greet+":8:40: aliases expand to more than 10000 nodes"), out)
	assert.Equal(t, 1, strings.Count(out, "huge.yaml:1:1: the file is larger than the limit of 1048576 bytes (1 MiB, flowdef.MaxFileSize)"), out)
	assert.Equal(t, []string{"greet", "helper"}, l.Names(), "the good definitions stay served")
	assert.Equal(t, h, info(t, w, "greet").Hash, "the last good greet stays served")
	assert.Nil(t, l.Current("lol"))

	require.NoError(t, os.Remove(bomb))
	write(t, dir, "greet.yaml", greetV2)
	require.NoError(t, l.Reload(ctx))
	assert.Equal(t, "2", l.Current("greet").Version)
}

// TestDirChecksBoundsAgainstTheWorkersGuards: a loop bound over the worker's steps guard
// is refused when the directory loads, naming the field, the value and the limit; the
// same file loads on a worker with a higher guard.
func TestDirChecksBoundsAgainstTheWorkersGuards(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "loop.yaml", "name: loop\nsteps:\n  - {id: l, loop: {while: 'true', max_iterations: 500, steps: [{id: s, set: {x: 1}}]}}\n")
	w := flow.NewWorker(nil, flow.WorkerOptions{Guards: flow.Guards{MaxSteps: 100}})
	_, err := Dir(w, dir, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "loop.yaml:3:51: loop 'l': max_iterations is 500, over the limit of 100 (the worker's steps guard)")
	assert.Empty(t, w.Flows())

	w = flow.NewWorker(nil, flow.WorkerOptions{Guards: flow.Guards{MaxSteps: 1000}})
	l, err := Dir(w, dir, Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{"loop"}, l.Names())
}
