package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The README tour check: every ```console block of README.md, then of the files of docs/
// in the order of tourDocs, is run, in order, against one `flow-worker --dev` (the real
// binary, free ports, a fresh in-memory store, the example MCP server as make run has it), and each `$ command` line's output (stdout
// and stderr together) must match the lines under it, modulo run IDs, times, durations,
// ports and process names (tourNormalise). A line "..." in a block stands for any number
// of lines, and "..." within a line for any text; lines starting with "# " are comments.
// `$ make run` is the worker itself: its banner is checked. A block that cannot run here
// is marked in its file by
//
//	<!-- tour: skip (why) -->
//
// on the line before its fence; the test reports, per file, how many blocks it checked and
// skipped. A file of docs/ with console blocks that is not in tourDocs fails the test.
// Commands run with bash in a scratch directory holding bin/ (the binaries under test),
// examples/ and flowdef/ of the repository, with TEMPORAL_ADDRESS set to the worker's and
// FLOW_USER=root; the docs' ports 7233 and 8233 are the worker's, and the run IDs the docs
// show are replaced, in later commands (of any later file too), by the IDs the tour's runs
// got.

// tourDocs are the files of docs/ whose console blocks the tour runs after README.md's, in
// this order, on the same worker, so a block may use the runs of any block before it
// (flowctl.md's `flowctl list` shows the runs of README.md, people-and-security.md and
// go-flows.md). docs/README.md names the same order.
var tourDocs = []string{"people-and-security.md", "go-flows.md", "flowctl.md", "yaml-flows.md", "agents.md"}

// tourSkip is the marker of a block the tour does not run.
var tourSkip = regexp.MustCompile(`^<!-- tour: skip \((.+)\) -->$`)

// tourFile is a file of the tour and its console blocks.
type tourFile struct {
	name   string // relative to the repository
	blocks []tourBlock
}

// tourBlock is one console block of a file.
type tourBlock struct {
	line int    // of its fence
	skip string // why it is not run, or ""
	cmds []tourCmd
}

// tourCmd is one `$ command` line of a block and the output lines under it.
type tourCmd struct {
	line int
	cmd  string
	want []string
}

// tourFiles reads README.md and the files of tourDocs under repo, in the tour's order,
// and fails the test for a file of docs/ with console blocks that is not among them.
func tourFiles(t *testing.T, repo string) []tourFile {
	t.Helper()
	names := []string{"README.md"}
	for _, d := range tourDocs {
		names = append(names, "docs/"+d)
	}
	var files []tourFile
	for _, name := range names {
		text, err := os.ReadFile(filepath.Join(repo, name))
		require.NoError(t, err, "a file of the tour")
		f := tourFile{name: name, blocks: tourBlocks(t, name, string(text))}
		if len(f.blocks) == 0 {
			t.Errorf("%s has no console blocks: take it out of tourDocs", name)
		}
		files = append(files, f)
	}
	docs, err := filepath.Glob(filepath.Join(repo, "docs", "*.md"))
	require.NoError(t, err)
	for _, path := range docs {
		name := "docs/" + filepath.Base(path)
		if slices.Contains(names, name) {
			continue
		}
		text, err := os.ReadFile(path)
		require.NoError(t, err)
		if n := len(tourBlocks(t, name, string(text))); n > 0 {
			t.Errorf("%s has %d console blocks the tour does not run: add it to tourDocs (readme_tour_test.go) and to the order docs/README.md gives", name, n)
		}
	}
	return files
}

// tourBlocks parses the console blocks of the file name.
func tourBlocks(t *testing.T, name, text string) []tourBlock {
	t.Helper()
	var blocks []tourBlock
	var cur *tourBlock
	prev := ""
	for i, line := range strings.Split(text, "\n") {
		switch {
		case cur == nil && strings.TrimSpace(line) == "```console":
			b := tourBlock{line: i + 1}
			if m := tourSkip.FindStringSubmatch(strings.TrimSpace(prev)); m != nil {
				b.skip = m[1]
			}
			blocks = append(blocks, b)
			cur = &blocks[len(blocks)-1]
		case cur != nil && strings.TrimSpace(line) == "```":
			cur = nil
		case cur != nil && cur.skip != "":
		case cur != nil && strings.HasPrefix(line, "# "): // a comment between commands
		case cur != nil && strings.HasPrefix(line, "$ "):
			cur.cmds = append(cur.cmds, tourCmd{line: i + 1, cmd: strings.TrimPrefix(line, "$ ")})
		case cur != nil && len(cur.cmds) == 0:
			t.Errorf("%s:%d: a console block's first line must be a `$ command` (or mark the block <!-- tour: skip (why) -->): %q", name, i+1, line)
		case cur != nil:
			c := &cur.cmds[len(cur.cmds)-1]
			c.want = append(c.want, line)
		}
		if strings.TrimSpace(line) != "" {
			prev = line
		}
	}
	return blocks
}

// tourRunID is a generated run ID: the flow's name and ten hex digits.
var tourRunID = regexp.MustCompile(`\b([a-z][a-z0-9]*(?:[.-][a-z][a-z0-9]*)*)-([0-9a-f]{10})\b`)

// tourNormalisers make output comparable: what differs from one tour to the next.
var tourNormalisers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`--address (127\.0\.0\.1|localhost):\d+ `), ""},
	{tourRunID, "$1-<ID>"},
	{regexp.MustCompile(`\bsig-[0-9a-f]{24}\b`), "sig-<ID>"},
	{regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})`), "<TIME>"},
	{regexp.MustCompile(`\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}`), "<TIME>"},
	{regexp.MustCompile(`\b\d{2}:\d{2}:\d{2}\b`), "<CLOCK>"},
	{regexp.MustCompile(`\b20\d\d-\d\d\b`), "<MONTH>"},
	{regexp.MustCompile(`\b(127\.0\.0\.1|localhost):\d+`), "$1:<PORT>"},
	{regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|us|ms|s|m|h)(\d+(\.\d+)?(ms|s|m))*\b`), "<DUR>"},
	{regexp.MustCompile(`\b\d+@[\w.-]+`), "<PID>@<HOST>"},
	{regexp.MustCompile(`--page \S+`), "--page <TOKEN>"},
	{regexp.MustCompile(`[ \t]+`), " "},
}

func tourNormalise(line string) string {
	for _, n := range tourNormalisers {
		line = n.re.ReplaceAllString(line, n.with)
	}
	return strings.TrimSpace(line)
}

// tourLines is out as lines without the blank lines at its end.
func tourLines(out string) []string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// tourMatch reports whether got matches want, where a want line "..." stands for any
// number of lines.
func tourMatch(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if strings.TrimSpace(want[0]) == "..." {
		for i := 0; i <= len(got); i++ {
			if tourMatch(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && tourLineMatch(tourNormalise(want[0]), tourNormalise(got[0])) && tourMatch(want[1:], got[1:])
}

// tourLineMatch reports whether the normalised line got matches want, where "..." in
// want stands for any text.
func tourLineMatch(want, got string) bool {
	parts := strings.Split(want, "...")
	if len(parts) == 1 {
		return want == got
	}
	if !strings.HasPrefix(got, parts[0]) {
		return false
	}
	rest := got[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return strings.HasSuffix(rest, parts[len(parts)-1])
}

// tourReadOnly are the flowctl commands the tour may run again until their output
// matches (a run still going on when the docs show it ended).
var tourReadOnly = regexp.MustCompile(`^(bin/)?flowctl (show|list|approvals|budget|flows|workflows|logs|watch)\b`)

// tourNotRun are commands the tour refuses to run (they download, install or build): a
// block with one must be marked <!-- tour: skip (why) -->.
var tourNotRun = regexp.MustCompile(`^(go (get|install|mod)|apt(-get)?|sudo|docker|curl https?://[^l1]|git (clone|pull|fetch)|make [a-z])`)

// tour is the state of one tour: the worker's addresses, the run IDs seen, the last
// command's exit code.
type tour struct {
	dir, address, ui string
	ids              map[string]string // the docs' run ID -> the tour's
	last             int
}

// bindIDs maps the generated run IDs of want to those of got, in order of appearance.
func (tr *tour) bindIDs(want, got []string) {
	distinct := func(lines []string) []string {
		var ids []string
		seen := map[string]bool{}
		for _, id := range tourRunID.FindAllString(strings.Join(lines, "\n"), -1) {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		return ids
	}
	w, g := distinct(want), distinct(got)
	if len(w) != len(g) {
		return
	}
	for i := range w {
		if _, ok := tr.ids[w[i]]; !ok {
			tr.ids[w[i]] = g[i]
		}
	}
}

// command is c.cmd with the tour's ports and run IDs.
func (tr *tour) command(c tourCmd) string {
	cmd := strings.NewReplacer("127.0.0.1:8233", tr.ui, "localhost:8233", tr.ui,
		"127.0.0.1:7233", tr.address, "localhost:7233", tr.address).Replace(c.cmd)
	return tourRunID.ReplaceAllStringFunc(cmd, func(id string) string {
		if mine, ok := tr.ids[id]; ok {
			return mine
		}
		return id
	})
}

// run runs one command line with bash and returns its output.
func (tr *tour) run(t *testing.T, cmd string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sh := exec.CommandContext(ctx, "bash", "-c", fmt.Sprintf("(exit %d); %s", tr.last, cmd))
	sh.Dir = tr.dir
	sh.Env = append(os.Environ(), "PATH="+filepath.Join(tr.dir, "bin")+":"+os.Getenv("PATH"),
		"TEMPORAL_ADDRESS="+tr.address, "TEMPORAL_NAMESPACE=default", "TEMPORAL_TASK_QUEUE=",
		"TEMPORAL_PROFILE=", "TEMPORAL_CONFIG_FILE="+filepath.Join(tr.dir, "no-temporal.toml"),
		"FLOW_USER=root", "FLOW_SIGNING_KEY=", "FLOW_ID_TOKEN=", "HOME="+tr.dir, "TZ=UTC")
	var out bytes.Buffer
	sh.Stdout, sh.Stderr = &out, &out
	err := sh.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Errorf("run %q: %v", cmd, err)
	}
	return out.String(), code
}

func TestReadmeTour(t *testing.T) {
	repo, err := filepath.Abs("../..")
	require.NoError(t, err)
	files := tourFiles(t, repo)
	require.NotEmpty(t, files[0].blocks, "README.md has console blocks")

	workerBin, ctlBin := binaries(t)
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "bin"), 0o755))
	require.NoError(t, os.Symlink(workerBin, filepath.Join(dir, "bin", "flow-worker")))
	require.NoError(t, os.Symlink(ctlBin, filepath.Join(dir, "bin", "flowctl")))
	for _, d := range []string{"examples", "flowdef"} {
		require.NoError(t, os.Symlink(filepath.Join(repo, d), filepath.Join(dir, d)))
	}
	port, uiPort := freePort(t), freePort(t)
	tr := &tour{dir: dir, address: fmt.Sprintf("127.0.0.1:%d", port), ui: fmt.Sprintf("127.0.0.1:%d", uiPort), ids: map[string]string{}}
	// As make run: the example MCP server triage-tools (docs/agents.md's triage agent).
	require.NoError(t, os.Symlink(triageToolsBin(t), filepath.Join(dir, "bin", "triage-tools")))
	worker := exec.Command(workerBin, "--dev", "--port", fmt.Sprint(port), "--ui-port", fmt.Sprint(uiPort),
		"--mcp", "triage-tools="+filepath.Join(dir, "bin", "triage-tools"))
	worker.Dir = dir
	worker.Env = append(os.Environ(), "HOME="+dir, "TZ=UTC")
	banner, stderr, _ := startWorkerProcess(t, worker)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("flow-worker stderr:\n%s", stderr.String())
		}
	})

	total := 0
	for _, f := range files {
		checked, skipped := 0, 0
		for _, b := range f.blocks {
			if b.skip != "" {
				skipped++
				continue
			}
			checked++
			tr.check(t, f.name, b, banner.String())
		}
		t.Logf("README tour: %s: %d console blocks checked, %d skipped (marked <!-- tour: skip -->)", f.name, checked, skipped)
		total += checked
	}
	require.Positive(t, total)
}

// check runs the commands of the block b of the file name and compares their output with
// the block's; banner is the worker's, the output of `make run`.
func (tr *tour) check(t *testing.T, name string, b tourBlock, banner string) {
	t.Helper()
	for i, c := range b.cmds {
		want := tourLines(strings.Join(c.want, "\n"))
		var got []string
		ok := false
		if strings.HasPrefix(c.cmd, "make run") {
			if i != 0 {
				t.Errorf("%s:%d: `make run` can only be a block's first command", name, c.line)
				continue
			}
			got = tourLines(banner)
			ok = tourMatch(want, got)
		} else if tourNotRun.MatchString(c.cmd) {
			t.Errorf("%s:%d: the tour does not run `%s` (it downloads, installs or builds): mark the block <!-- tour: skip (why) -->", name, c.line, c.cmd)
			continue
		} else {
			got, ok = tr.runUntil(t, c, want)
		}
		tr.bindIDs(want, got)
		if !ok {
			t.Errorf("%s:%d: the output of `%s` no longer matches the file's (fix the block, or mark it <!-- tour: skip (why) -->)\n--- %s (normalised)\n%s\n--- real (normalised)\n%s\n--- real\n%s",
				name, c.line, c.cmd, name, normalisedText(want), normalisedText(got), strings.Join(got, "\n"))
		}
	}
}

// runUntil runs the command c and reports whether its output matches want; a read-only
// command runs again, for up to 30 seconds, until it does.
func (tr *tour) runUntil(t *testing.T, c tourCmd, want []string) ([]string, bool) {
	t.Helper()
	cmd := tr.command(c)
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, code := tr.run(t, cmd)
		got := tourLines(out)
		if ok := tourMatch(want, got); ok || !tourReadOnly.MatchString(c.cmd) || time.Now().After(deadline) {
			tr.last = code
			return got, ok
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func normalisedText(lines []string) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = tourNormalise(l)
	}
	return strings.Join(out, "\n")
}
