package integration

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/flow"
)

// fuzzQueue is the task queue of TestFlowctlFuzz's own worker, so the runs counted are
// only those its flowctl processes could have started.
const fuzzQueue = "flowctl-fuzz"

// fuzzCase is one generated flowctl invocation and the exit codes that are right for it.
type fuzzCase struct {
	args []string
	want []int // the right exit codes (all from the documented list)
}

// TestFlowctlFuzz runs bin/flowctl with 200 generated bad argument vectors (fixed seed)
// against the shared server, with a worker serving ship and hello on its own task queue:
// bad flow names, run IDs with control and Unicode characters, malformed, oversized and
// schema-failing inputs, bad durations, amounts, labels, tags and priorities, unknown
// flags, missing arguments, and decisions for runs that do not exist. Every exit code is
// one `flowctl --help` documents, and the one right for the mistake; no output holds a
// panic, a stack trace or a raw gRPC error; and no run of the served flows started.
func TestFlowctlFuzz(t *testing.T) {
	_, ctl := binaries(t)
	documented := documentedExitCodes(t, ctl)

	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: fuzzQueue, StopTimeout: 5 * time.Second}, examples.Ship, examples.Hello)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	require.Eventually(t, func() bool {
		r := flowctlRunOn(t, fuzzQueue, "workflows")
		return r.code == 0 && strings.Contains(r.stdout, "ship") && strings.Contains(r.stdout, "hello")
	}, 20*time.Second, 200*time.Millisecond, "the fuzz worker's catalog never listed ship and hello")

	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	require.NoError(t, os.WriteFile(big, []byte(`{"version":"`+strings.Repeat("v", 10<<20)+`"}`), 0o600))
	badDef := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(badDef, []byte("name: Bad Name\nschedules: [{cron: \"TZ=\"}]\nsteps: []\n"), 0o600))

	cases := fuzzCases(rand.New(rand.NewPCG(17, 3)), big, badDef)
	require.Len(t, cases, 200)
	for _, c := range cases {
		for _, code := range c.want {
			require.Contains(t, documented, code, "case %q expects an undocumented exit code", c.args)
		}
	}

	before := countRuns(t)
	start := time.Now()
	results := make([]result, len(cases))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = runFlowctlProcess(t, ctl, c.args)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)

	counts := map[int]int{}
	for i, c := range cases {
		r := results[i]
		counts[r.code]++
		out := r.stdout + r.stderr
		if !documented[r.code] {
			t.Errorf("flowctl %q: exit %d is not documented in flowctl --help\n%s", c.args, r.code, out)
			continue
		}
		if !containsInt(c.want, r.code) {
			t.Errorf("flowctl %q: exit %d, want one of %v\n%s", c.args, r.code, c.want, out)
		}
		for _, bad := range []string{"panic:", "goroutine ", "runtime error", "rpc error: code =", "[recovered]"} {
			if strings.Contains(out, bad) {
				t.Errorf("flowctl %q: output holds %q:\n%s", c.args, bad, out)
			}
		}
		if r.code != 0 && !strings.Contains(r.stderr, "flowctl") && !strings.Contains(r.stderr, "Error") && !strings.Contains(r.stderr, "error") {
			t.Errorf("flowctl %q: exit %d without a message on stderr:\n%s", c.args, r.code, out)
		}
	}
	after := countRuns(t)
	var codes []string
	for _, code := range sortedKeys(counts) {
		codes = append(codes, fmt.Sprintf("%d×%d", counts[code], code))
	}
	t.Logf("%d flowctl processes in %s; exit codes %s; runs of ship and hello on %s: %d before, %d after",
		len(cases), elapsed.Round(time.Millisecond), strings.Join(codes, " "), fuzzQueue, before, after)
	require.Equal(t, before, after, "a bad invocation started a run")
}

// documentedExitCodes reads the "Exit codes:" section of `flowctl --help`, the list
// flowctl's users are given (root.go's exitCodes).
func documentedExitCodes(t *testing.T, ctl string) map[int]bool {
	t.Helper()
	out, err := exec.Command(ctl, "--help").CombinedOutput()
	require.NoError(t, err, "%s", out)
	_, section, ok := strings.Cut(string(out), "Exit codes:")
	require.True(t, ok, "flowctl --help has no exit code section:\n%s", out)
	codes := map[int]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  (\d+)  \S`).FindAllStringSubmatch(section, -1) {
		n, _ := strconv.Atoi(m[1])
		codes[n] = true
	}
	require.Len(t, codes, 8, "flowctl --help documents %v", codes)
	return codes
}

// countRuns counts the executions of the fuzz worker's flows (open or closed).
func countRuns(t *testing.T) int64 {
	t.Helper()
	ctx := ctxT(t, 10*time.Second)
	resp, err := shared.tc.CountWorkflow(ctx, countRequest(fmt.Sprintf("TaskQueue = '%s' AND WorkflowType IN ('ship', 'hello')", fuzzQueue)))
	require.NoError(t, err)
	return resp.GetCount()
}

func countRequest(query string) *workflowservice.CountWorkflowExecutionsRequest {
	return &workflowservice.CountWorkflowExecutionsRequest{Query: query}
}

// runFlowctlProcess runs the flowctl binary against the shared server on the fuzz queue.
func runFlowctlProcess(t *testing.T, ctl string, args []string) result {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	full := append([]string{"--address", shared.srv.FrontendAddress(), "--task-queue", fuzzQueue,
		"--connect-timeout", "3s", "--decision-timeout", "3s"}, args...)
	cmd := exec.CommandContext(ctx, ctl, full...)
	cmd.Env = append(os.Environ(), "FLOW_USER=fuzzer", "TEMPORAL_ADDRESS=", "TEMPORAL_PROFILE=", "TEMPORAL_CONFIG_FILE=/nonexistent")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Errorf("flowctl %q: %v", args, err)
		code = -1
	}
	if ctx.Err() != nil {
		t.Errorf("flowctl %q did not end within 30s", args)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// fuzzCases generates 200 bad invocations from r: each mixes one mistake with otherwise
// plausible flags, so the mistake alone must refuse it.
func fuzzCases(r *rand.Rand, bigInput, badDef string) []fuzzCase {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	usage := []int{2}
	goodInput := func() string { return pick(`{"version":"1.0"}`, `{"version":"2.3.4"}`) }
	// extras are valid start flags added at random, so the bad one is not always alone.
	extras := func() []string {
		var out []string
		for _, e := range [][]string{{"--label", "team=web"}, {"--priority", "2"}, {"--max-cost", "1.50"}, {"--delay", "1s"}, {"--as", "alice"}} {
			if r.IntN(3) == 0 {
				out = append(out, e...)
			}
		}
		return out
	}
	badNames := []string{"", "-", "a b", "ключ", "x\x01y", strings.Repeat("n", 300), "../etc", "ship\n", "sh ip", "Ship!", "/ship"}
	badIDs := []string{"run\x01", "ключ-1", "tab\there", " ", "/lead", strings.Repeat("i", 1001), "new\nline", "bell\a", "id with spaces", "esc\x1b[31m"}
	malformed := []string{"{", `{"version":`, "[1,", "nul", `{"version":"1"`, "\xff\xfe", `{"version":"1"}}`, "'single'", `{version:1}`}
	schemaBad := []string{`{"version":3}`, `{"version":"1","extra":true}`, `[]`, `"1.0"`, `42`, `{"version":["1"]}`, `{"version":{}}`, `true`}
	badDurations := []string{"abc", "1d", "-5s", "5", "1h-", "∞", "9999999999h"}
	badMoney := []string{"-1", "abc", "1e3", "$", "0.123456789", "1,50", "NaN", "--1", "0x10"}
	badLabels := []string{"noequals", "=x", "Team=web", "a b=c", "k=v\nw", strings.Repeat("k", 70) + "=v"}
	badTags := []string{"GPU", "a b", "", "-x", "tag@x", strings.Repeat("t", 70)}
	unknownRuns := []string{"no-such-run", "fuzz-missing-1", "ship-deadbeef00"}

	// startArgs is a start of name with input, the valid extras, then the bad flags last
	// (the last of a repeated flag wins).
	startArgs := func(name, input string, bad ...string) []string {
		return append(append([]string{"start", name, "--input", input}, extras()...), bad...)
	}
	var cases []fuzzCase
	add := func(want []int, args ...string) { cases = append(cases, fuzzCase{args: args, want: want}) }
	gens := []func(){
		func() {
			add(usage, startArgs(pick(badNames...), goodInput())...)
		},
		func() {
			add(usage, startArgs("ship", goodInput(), "--id", pick(badIDs...))...)
		},
		func() {
			add(usage, startArgs(pick("ship", "hello"), pick(malformed...))...)
		},
		func() { add(usage, startArgs("ship", pick(schemaBad...))...) },
		func() {
			add(usage, startArgs("ship", goodInput(), pick("--delay", "--budget-pause"), pick(badDurations...))...)
		},
		func() {
			add(usage, startArgs("ship", goodInput(), "--max-cost", pick(badMoney...))...)
		},
		func() {
			add(usage, startArgs("ship", goodInput(), "--label", pick(badLabels...))...)
		},
		func() { add(usage, "start", "ship", "--input", goodInput(), "--label", "a=1", "--label", "a=2") },
		func() {
			add(usage, startArgs("ship", goodInput(), "--tag", pick(badTags...))...)
		},
		func() {
			add(usage, "start", "ship", "--input", goodInput(), "--tag", "a", "--tag", "b", "--tag", "c", "--tag", "d", "--tag", "e")
		},
		func() {
			add(usage, startArgs("ship", goodInput(), "--priority", pick("9", "-3", "x", "6", "99999999999999999999"))...)
		},
		func() {
			add(usage, startArgs("ship", goodInput(), "--budget-policy", pick("spend", "STOPP", "halt"))...)
		},
		func() {
			add(usage, startArgs("ship", goodInput(), "--concurrency-key", pick("A B", "Key", "x/y", "ключ"))...)
		},
		func() {
			add(usage, "start", "ship", "--input", goodInput(), "--id", "fuzz-both", "--idempotency-key", "k1")
		},
		func() {
			add(usage, "start", "ship", "--input", goodInput(), "--start-at", pick("tomorrow", "2020-01-01T00:00:00Z", "2026-13-01T00:00:00Z"))
		},
		func() {
			add(usage, "start", "ship", "--input", goodInput(), "--delay", "1s", "--start-at", "2099-01-01T00:00:00Z")
		},
		func() { add(usage, "start", "ship", "--input", "@"+bigInput) },
		func() {
			add(usage, "start", "ship", "--input", "@"+filepath.Join(filepath.Dir(bigInput), "missing.json"))
		},
		func() { add(usage, "start", "--file", badDef) },
		func() { add(usage, "validate", badDef) },
		func() { add(usage, "start", pick("nope", "shipp", "hello2"), "--input", goodInput()) },
		func() {
			cmd := pick("start", "show", "list", "approve", "reject", "input", "signal", "cancel", "logs", "workflows")
			add(usage, cmd, pick("--bogus", "-Z", "--input-file=x", "--wait=maybe", "---x"))
		},
		func() {
			add(usage, pick("start", "show", "approve", "reject", "input", "cancel", "logs", "watch", "audit", "history"))
		},
		func() { add(usage, pick("frobnicate", "strat", "shwo", "delete")) },
		func() { add(usage, "approve", pick(unknownRuns...), "ship", "extra-arg") },
		func() { add([]int{3}, "show", pick(unknownRuns...)) },
		func() {
			add([]int{3}, pick("approve", "reject"), pick(unknownRuns...), pick("ship", "release-notes"), "--comment", "fuzz")
		},
		func() {
			add([]int{3}, "input", pick(unknownRuns...), "release-notes", "--data", `{"summary":"s","risk":"low"}`)
		},
		func() { add(usage, "input", pick(unknownRuns...), "release-notes", "--data", pick(malformed...)) },
		func() { add([]int{3}, "cancel", pick(unknownRuns...)) },
		func() { add([]int{3}, "budget", "raise", pick(unknownRuns...), "--to", "5") },
		func() { add(usage, "budget", "raise", pick(unknownRuns...), "--to", pick(badMoney...)) },
		func() { add([]int{3}, "signal", "deploy-done", "--run", pick(unknownRuns...), "--data", `{"ok":true}`) },
		func() {
			add(usage, "signal", pick(badNames[1:]...), "--run", pick(unknownRuns...), "--data", `{"ok":true}`)
		},
		func() {
			add(usage, "signal", "deploy-done", "--run", pick(unknownRuns...), "--data", pick(malformed...))
		},
		func() { add(usage, "list", "--status", pick("bogus", "Running", "done", " running")) },
		func() { add(usage, "list", "--waiting-for", pick("bogus:x", "budget:x", ":x", "approval", "nope:")) },
		func() { add(usage, "-o", pick("yaml", "xml", "JSON"), "workflows") },
	}
	for len(cases) < 200 {
		gens[len(cases)%len(gens)]()
	}
	return cases
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func sortedKeys(m map[int]int) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}
