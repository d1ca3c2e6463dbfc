package flowctl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/protocol"
)

// testdataRegistry are the flags that make --offline check the way flowdef's own tests
// do (flowdef/testdata_test.go's testRegistry), so the goldens apply as they are.
var testdataRegistry = []string{"--offline", "--action", "post-comment,page-oncall,cleanup-workspace",
	"--item-provider", "open-tickets", "--gate-type", "ci-status", "--go-flow", "notify-team,deploy",
	"--mcp-server", "triage",
	"--dir", "testdata/sub"}

func TestValidateOfflineValidTestdata(t *testing.T) {
	t.Chdir("../../flowdef")
	files, _ := filepath.Glob("testdata/valid/*")
	require.NotEmpty(t, files)
	code, stdout, stderr := run(t, "", append(append([]string{"validate"}, testdataRegistry...), files...)...)
	require.Equal(t, ExitOK, code, stdout+stderr)
	assert.Empty(t, stderr)
	for _, f := range files {
		assert.Regexp(t, `(?m)^`+f+`: valid \(hash [0-9a-f]{64}\)$`, stdout)
	}

	code, stdout, _ = run(t, "", append(append([]string{"validate", "-o", "json"}, testdataRegistry...), files...)...)
	require.Equal(t, ExitOK, code)
	var got []fileResult
	require.NoError(t, json.Unmarshal([]byte(stdout), &got), stdout)
	require.Len(t, got, len(files))
	for i, r := range got {
		assert.Equal(t, files[i], r.File)
		assert.True(t, r.Valid)
		assert.Empty(t, r.Errors)
		assert.Len(t, r.Hash, 64)
	}
}

// TestValidateOfflineInvalidTestdata prints exactly the goldens of flowdef, every file's
// errors in one run, and exits 2.
func TestValidateOfflineInvalidTestdata(t *testing.T) {
	t.Chdir("../../flowdef")
	files, _ := filepath.Glob("testdata/invalid/*.yaml")
	require.NotEmpty(t, files)
	var want strings.Builder
	count := 0
	for _, f := range files {
		g, err := os.ReadFile(strings.TrimSuffix(f, ".yaml") + ".errors")
		require.NoError(t, err)
		want.Write(g)
		count += strings.Count(string(g), "\n")
	}
	code, stdout, stderr := run(t, "", append(append([]string{"validate"}, testdataRegistry...), files...)...)
	assert.Equal(t, ExitUsage, code)
	assert.Equal(t, want.String(), stdout)
	assert.Equal(t, fmt.Sprintf("flowctl: %d errors in %d of %d files\n", count, len(files), len(files)), stderr)

	// One run per file: the same lines.
	for _, f := range files {
		code, stdout, _ := run(t, "", append(append([]string{"validate"}, testdataRegistry...), f)...)
		assert.Equal(t, ExitUsage, code, f)
		g, _ := os.ReadFile(strings.TrimSuffix(f, ".yaml") + ".errors")
		assert.Equal(t, string(g), stdout, f)
	}

	code, stdout, _ = run(t, "", append(append([]string{"validate", "-o", "json"}, testdataRegistry...), files...)...)
	assert.Equal(t, ExitUsage, code)
	var got []fileResult
	require.NoError(t, json.Unmarshal([]byte(stdout), &got), stdout)
	require.Len(t, got, len(files))
	var lines strings.Builder
	for i, r := range got {
		assert.Equal(t, files[i], r.File)
		assert.False(t, r.Valid, r.File)
		require.NotEmpty(t, r.Errors, r.File)
		for _, e := range r.Errors {
			line := e.File
			if e.Line > 0 {
				line += ":" + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Col)
			}
			line += ": " + e.Message
			if e.Hint != "" {
				line += " (hint: " + e.Hint + ")"
			}
			lines.WriteString(line + "\n")
		}
	}
	assert.Equal(t, want.String(), lines.String(), "the JSON carries the same errors")
}

func TestValidateOfflineBuiltinsOnly(t *testing.T) {
	dir := t.TempDir()
	main := filepath.Join(dir, "main.yaml")
	require.NoError(t, os.WriteFile(main, []byte("name: main\nsteps:\n  - {id: a, uses: shell, with: {command: \"true\"}}\n  - {id: b, call: sub}\n  - {id: c, gate: {type: poll, resolver: command}}\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub.yaml"), []byte("name: sub\nsteps:\n  - {id: x, uses: post-comment}\n"), 0o644))
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("name: bad\nsteps:\n  - {id: a, call: notify-team}\n"), 0o644))

	code, stdout, stderr := run(t, "", "validate", "--offline", main, bad, filepath.Join(dir, "missing.yaml"))
	assert.Equal(t, ExitUsage, code)
	assert.Equal(t, "flowctl: 3 errors in 3 of 3 files\n", stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 3, stdout)
	assert.Equal(t, filepath.Join(dir, "sub.yaml")+":3:19: in sub-flow 'sub': step 'x': no registered action 'post-comment' "+
		"(hint: register an action named post-comment on the worker (flow.Worker.RegisterActivity) or add a fallback action)", lines[0])
	assert.Contains(t, lines[1], bad+":3:19: call 'a': no flow named 'notify-team'")
	assert.Contains(t, lines[2], filepath.Join(dir, "missing.yaml")+": cannot read the file: no such file or directory")

	code, _, stderr = run(t, "", "validate", "--offline", "--action", "post-comment", "--go-flow", "notify-team", main, bad)
	assert.Equal(t, ExitOK, code, stderr)
}

func TestValidateNeedsAFileOrTheServer(t *testing.T) {
	code, _, stderr := run(t, "", "validate", "--offline")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, "validate needs FILE")

	code, _, stderr = run(t, "", "--address", closedAddress(t), "--connect-timeout", "200ms", "validate", "x.yaml")
	assert.Equal(t, ExitUnreachable, code)
	assert.Contains(t, stderr, "--offline")
}

func TestPrintDefinitions(t *testing.T) {
	var out bytes.Buffer
	a := &app{stdout: &out, output: "table"}
	cat := &core.Catalog{Workflows: []core.WorkflowInfo{
		{Name: "hello", Kind: protocol.KindGoFlow},
		{Name: "code-review", Kind: protocol.KindYAMLFlow, Version: "3", Hash: "43dbc39447700475a49f", Source: "flows/review.yaml", PublishedBy: "w1"},
		{Name: "old"}, // an older worker's Go flow
	}}
	require.NoError(t, a.print(definitionsView(cat)))
	assert.Regexp(t, `(?m)^NAME\s+VERSION\s+HASH\s+SOURCE\s+PUBLISHED BY$`, out.String())
	assert.Regexp(t, `(?m)^code-review\s+3\s+43dbc3944770\s+flows/review.yaml\s+w1$`, out.String())
	assert.NotContains(t, out.String(), "hello")

	out.Reset()
	a.output = "json"
	require.NoError(t, a.print(definitionsView(cat)))
	var got []core.WorkflowInfo
	require.NoError(t, json.Unmarshal(out.Bytes(), &got))
	require.Len(t, got, 1)
	assert.Equal(t, "code-review", got[0].Name)

	out.Reset()
	cat.Workflows = cat.Workflows[:1]
	require.NoError(t, a.print(definitionsView(cat)))
	assert.Equal(t, "[]\n", out.String())
	out.Reset()
	a.output = "table"
	require.NoError(t, a.print(definitionsView(cat)))
	assert.Equal(t, "No definitions served.\n", out.String())
}

// TestValidateRefusesMemoryBombs: a billion-laughs file, a file over the size limit and
// a sub-flow that is a billion laughs are each refused with the limit, exit 2 ("invalid"),
// allocating a few megabytes at most.
func TestValidateRefusesMemoryBombs(t *testing.T) {
	dir := t.TempDir()
	var lol strings.Builder
	lol.WriteString("name: lol\nsteps: [{id: a, set: {x: 1}}]\nvars:\n  l0: &l0 lol\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&lol, "  l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d,", i-1), 10), ","))
	}
	bomb := filepath.Join(dir, "lol.yaml")
	require.NoError(t, os.WriteFile(bomb, []byte(lol.String()), 0o644))
	caller := filepath.Join(dir, "caller.yaml")
	require.NoError(t, os.WriteFile(caller, []byte("name: caller\nsteps: [{id: a, call: lol}]\n"), 0o644))
	huge := filepath.Join(dir, "huge.yaml")
	f, err := os.Create(huge)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(1<<32)) // 4 GiB, sparse: never read whole
	require.NoError(t, f.Close())

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	code, stdout, stderr := run(t, "", "validate", "--offline", bomb, caller, huge)
	runtime.ReadMemStats(&after)
	assert.Equal(t, ExitUsage, code)
	assert.Equal(t, "flowctl: 3 errors in 3 of 3 files\n", stderr)
	assert.Contains(t, stdout, bomb+":8:40: aliases expand")
	assert.Contains(t, stdout, "aliases expand to more than 10000 nodes (the limit, flowdef.MaxAliasNodes)")
	assert.Contains(t, stdout, "in sub-flow 'lol': aliases expand to more than 10000 nodes")
	assert.Contains(t, stdout, huge+":1:1: the file is larger than the limit of 1048576 bytes (1 MiB, flowdef.MaxFileSize)")
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "bytes allocated by validate")
}

// TestValidateRefusesBoundsOverTheGuards: flowctl validate refuses a loop bound over the
// default steps guard (issue 31: max_iterations 1000000000), exit 2, naming the limit.
func TestValidateRefusesBoundsOverTheGuards(t *testing.T) {
	path := filepath.Join(t.TempDir(), "loop.yaml")
	require.NoError(t, os.WriteFile(path, []byte("name: loop\nsteps:\n  - {id: l, loop: {while: 'true', max_iterations: 1000000000, steps: [{uses: shell}]}}\n"), 0o644))
	code, stdout, stderr := run(t, "", "validate", "--offline", path)
	assert.Equal(t, ExitUsage, code)
	assert.Equal(t, "flowctl: 1 error in 1 of 1 file\n", stderr)
	assert.Contains(t, stdout, path+":3:51: loop 'l': max_iterations is 1000000000, over the limit of 10000 (the worker's steps guard)")
}
